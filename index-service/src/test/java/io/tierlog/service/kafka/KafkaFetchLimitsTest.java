package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fetch responses written from the stored batches' own memory, under the consumer's byte limits: exact answers to
 * raw fetches at, just below and across {@code partition_max_bytes} and {@code max_bytes} (whole batches up to the
 * limits, only a fetch's first data over them), and a kafka-clients consumer with small limits reading compressed
 * batches across segment rolls and the cold/hot boundary on several partitions: every record once, in order.
 */
@QuarkusTest
class KafkaFetchLimitsTest {
    private static final short V12 = 12; // topics by name

    @Inject
    KafkaListener listener;
    @Inject
    TieredStorage tiered;

    private void createTopic(String name, int partitions, Map<String, String> config) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(config))).all().get();
        }
    }

    /** {@code n} batches of one record each (a send waits for its answer), all of one size: "v-" and 5 digits. */
    private void produceSingleRecordBatches(String topic, int partition, int n) throws Exception {
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, partition, "k", String.format("v-%05d", i))).get();
            }
        }
    }

    private static FetchRequest fetch(String topic, int maxBytes, Map<Integer, Integer> partitionMaxBytes) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        partitionMaxBytes.forEach((p, max) -> t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p)
                .setFetchOffset(0).setPartitionMaxBytes(max)));
        return new FetchRequest(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(maxBytes).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(t)), V12);
    }

    /** partition → sizes of the batches it answered with. */
    private static Map<Integer, List<Integer>> batchSizes(FetchResponse r) {
        Map<Integer, List<Integer>> out = new HashMap<>();
        for (FetchResponseData.FetchableTopicResponse t : r.data().responses()) {
            for (FetchResponseData.PartitionData p : t.partitions()) {
                List<Integer> sizes = new ArrayList<>();
                for (RecordBatch b : ((Records) p.records()).batches()) {
                    sizes.add(b.sizeInBytes());
                }
                out.put(p.partitionIndex(), sizes);
            }
        }
        return out;
    }

    @Test
    void aFetchReturnsWholeBatchesUpToItsLimitsAndOnlyItsFirstDataOverThem() throws Exception {
        String topic = KafkaListenerTest.unique("limits");
        createTopic(topic, 2, Map.of());
        produceSingleRecordBatches(topic, 0, 6);
        produceSingleRecordBatches(topic, 1, 6);
        try (RawKafka raw = new RawKafka(listener.port())) {
            // One byte of room: the first batch anyway (a fetch's first data may exceed its limits).
            List<Integer> first = batchSizes(raw.call(fetch(topic, 1 << 20, Map.of(0, 1)))).get(0);
            assertThat(first).hasSize(1);
            int s = first.get(0);
            assertThat(batchSizes(raw.call(fetch(topic, 1 << 20, Map.of(0, 6 * s)))).get(0)).hasSize(6)
                    .allMatch(size -> size == s);

            // Exactly three batches of room takes three; one byte less takes two.
            assertThat(batchSizes(raw.call(fetch(topic, 1 << 20, Map.of(0, 3 * s)))).get(0)).hasSize(3);
            assertThat(batchSizes(raw.call(fetch(topic, 1 << 20, Map.of(0, 3 * s - 1)))).get(0)).hasSize(2);

            // The request's max_bytes across partitions: partition 0 takes three, partition 1 what is left.
            Map<Integer, Integer> both = new LinkedHashMap<>();
            both.put(0, 3 * s);
            both.put(1, 3 * s);
            Map<Integer, List<Integer>> at4 = batchSizes(raw.call(fetch(topic, 4 * s, both)));
            assertThat(at4.get(0)).hasSize(3);
            assertThat(at4.get(1)).hasSize(1);
            Map<Integer, List<Integer>> under4 = batchSizes(raw.call(fetch(topic, 4 * s - 1, both)));
            assertThat(under4.get(0)).hasSize(3);
            assertThat(under4.get(1)).as("a later partition's batch that does not fit waits for the next fetch")
                    .isEmpty();
            // A second partition's batch over its own partition_max_bytes waits too; as the first data it comes.
            Map<Integer, Integer> tight = new LinkedHashMap<>();
            tight.put(0, 3 * s);
            tight.put(1, s - 1);
            Map<Integer, List<Integer>> tightAnswer = batchSizes(raw.call(fetch(topic, 1 << 20, tight)));
            assertThat(tightAnswer.get(0)).hasSize(3);
            assertThat(tightAnswer.get(1)).isEmpty();
            assertThat(batchSizes(raw.call(fetch(topic, 1 << 20, Map.of(1, s - 1)))).get(1)).hasSize(1);
        }
    }

    @Test
    void aFetchOfSmallRecordsIsLimitedByBytesOnlyAsKafkasIs() throws Exception {
        String topic = KafkaListenerTest.unique("limits-small");
        createTopic(topic, 1, Map.of());
        // 12,000 records of a few bytes in batches of at most 1000 (about 150 KB in all): more records than the HTTP
        // API lets one fetch ask for (tierlog.fetch.max-records-limit, 10,000), well under 1 MiB.
        int batches = 12;
        int perBatch = 1000;
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int b = 0; b < batches; b++) {
                for (int i = 0; i < perBatch; i++) {
                    p.send(new ProducerRecord<>(topic, 0, null, Integer.toString(b * perBatch + i)));
                }
                p.flush();
            }
        }
        try (RawKafka raw = new RawKafka(listener.port())) {
            FetchResponse r = raw.call(fetch(topic, 50 << 20, Map.of(0, 1 << 20)));
            long records = 0;
            for (FetchResponseData.FetchableTopicResponse t : r.data().responses()) {
                for (FetchResponseData.PartitionData pd : t.partitions()) {
                    for (RecordBatch b : ((Records) pd.records()).batches()) {
                        records += b.lastOffset() - b.baseOffset() + 1;
                    }
                }
            }
            assertThat(records).as("every batch, as Kafka's broker answers under 1 MiB")
                    .isEqualTo((long) batches * perBatch);
        }
    }

    /** Record {@code i} of partition {@code p}: 120 pseudo-random letters after it, so batches compress little. */
    private static String value(int p, int i) {
        java.util.Random random = new java.util.Random(p * 1_000_003L + i);
        StringBuilder sb = new StringBuilder(p + ":" + i + ":");
        for (int c = 0; c < 120; c++) {
            sb.append((char) ('a' + random.nextInt(26)));
        }
        return sb.toString();
    }

    @Test
    void aConsumerWithSmallLimitsReadsCompressedBatchesAcrossSegmentsAndTiersOnceInOrder() throws Exception {
        String topic = KafkaListenerTest.unique("limits-tiers");
        int partitions = 3;
        createTopic(topic, partitions, Map.of("segment.bytes", "4096", "local.retention.bytes", "0"));
        int coldPerPartition = 150;
        int hotPerPartition = 150;
        for (String codec : List.of("lz4", "zstd")) {
            int from = codec.equals("lz4") ? 0 : coldPerPartition;
            int n = codec.equals("lz4") ? coldPerPartition : hotPerPartition;
            try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", codec)) {
                for (int i = from; i < from + n; i++) {
                    for (int p = 0; p < partitions; p++) {
                        producer.send(new ProducerRecord<>(topic, p, "k-" + i, value(p, i)));
                    }
                    if (i % 7 == 0) {
                        producer.flush(); // batches of a few records, so segments of 4 KiB roll often
                    }
                }
            }
            if (codec.equals("lz4")) {
                tiered.runTieringPass();
                tiered.runRetentionPass();
            }
        }
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        for (int p = 0; p < partitions; p++) {
            assertThat(state.getInt("partitionStates[" + p + "].segments.cold")).as(state.prettify()).isGreaterThan(2);
            assertThat(state.getInt("partitionStates[" + p + "].segments.hot")).as(state.prettify()).isGreaterThan(2);
            assertThat(state.getLong("partitionStates[" + p + "].hotStartOffset")).isPositive();
        }

        int total = partitions * (coldPerPartition + hotPerPartition);
        Map<Integer, List<ConsumerRecord<String, String>>> byPartition = new HashMap<>();
        // Limits of a few batches per fetch and less than one partition's worth per request: many fetches, each
        // cut at both limits, every one written from the batches' own memory.
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(), Map.of(
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "1500",
                ConsumerConfig.FETCH_MAX_BYTES_CONFIG, "2500",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1000"))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            int read = 0;
            Instant deadline = Instant.now().plusSeconds(60);
            while (read < total && Instant.now().isBefore(deadline)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    byPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r);
                    read++;
                }
            }
            // Nothing more arrives after the last record (no record twice).
            consumer.poll(Duration.ofMillis(300)).forEach(r -> byPartition.get(r.partition()).add(r));
        }
        for (int p = 0; p < partitions; p++) {
            List<ConsumerRecord<String, String>> got = byPartition.getOrDefault(p, List.of());
            assertThat(got).as("partition %d", p).hasSize(coldPerPartition + hotPerPartition);
            for (int i = 0; i < got.size(); i++) {
                assertThat(got.get(i).offset()).as("partition %d", p).isEqualTo(i);
                assertThat(got.get(i).key()).isEqualTo("k-" + i);
                assertThat(got.get(i).value()).isEqualTo(value(p, i));
            }
        }
    }
}
