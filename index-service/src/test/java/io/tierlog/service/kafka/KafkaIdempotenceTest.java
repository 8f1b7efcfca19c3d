package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Idempotent producers over the Kafka listener: kafka-clients' default producer (enable.idempotence=true) gets a
 * producer id from InitProducerId and produces with five requests in flight; a retried batch is answered with its
 * original offsets and appended once; a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is fenced.
 */
@QuarkusTest
class KafkaIdempotenceTest {
    @Inject
    KafkaListener listener;

    private void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    @Test
    void defaultProducerIsIdempotentAndItsOffsetsAreDense() throws Exception {
        String topic = KafkaListenerTest.unique("idem");
        createTopic(topic, 2);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        // kafka-clients' defaults: enable.idempotence=true, acks=all, 5 requests in flight; small batches so that
        // many requests are in flight at once.
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "2048");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        int n = 2000;
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, "v" + i)));
            }
            producer.flush();
        }
        List<List<Long>> offsets = List.of(new ArrayList<>(), new ArrayList<>());
        for (Future<RecordMetadata> f : sent) {
            RecordMetadata m = f.get();
            offsets.get(m.partition()).add(m.offset());
        }
        for (int partition = 0; partition < 2; partition++) {
            List<Long> dense = new ArrayList<>();
            for (long o = 0; o < n / 2; o++) {
                dense.add(o);
            }
            assertThat(offsets.get(partition)).as("partition " + partition).isEqualTo(dense);
            List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(listener.port(), topic, partition, n / 2);
            assertThat(read).hasSize(n / 2);
            for (int i = 0; i < read.size(); i++) {
                assertThat(read.get(i).value()).isEqualTo("v" + (2 * i + partition));
            }
            assertThat(highWatermark(topic, partition)).isEqualTo(n / 2);
        }
    }

    @Test
    void retriedBatchIsAppendedOnceAndAGapIsOutOfOrder() throws Exception {
        String topic = KafkaListenerTest.unique("idem-raw");
        createTopic(topic, 1);
        try (RawKafka kafka = new RawKafka(listener.port())) {
            InitProducerIdResponse init = kafka.call(new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                    .setTransactionalId(null).setTransactionTimeoutMs(60_000)), ApiKeys.INIT_PRODUCER_ID);
            assertThat(init.error()).isEqualTo(Errors.NONE);
            long producerId = init.data().producerId();
            assertThat(producerId).isNotNegative();
            assertThat(init.data().producerEpoch()).isZero();
            InitProducerIdResponse other = kafka.call(new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                    .setTransactionalId(null).setTransactionTimeoutMs(60_000)), ApiKeys.INIT_PRODUCER_ID);
            assertThat(other.data().producerId()).isNotEqualTo(producerId);

            assertThat(produce(kafka, topic, producerId, (short) 0, 0, 3)).isEqualTo(new long[]{Errors.NONE.code(), 0});
            assertThat(produce(kafka, topic, producerId, (short) 0, 3, 2)).isEqualTo(new long[]{Errors.NONE.code(), 3});
            // A retry of either batch (its response lost): the original offsets, nothing appended.
            assertThat(produce(kafka, topic, producerId, (short) 0, 0, 3)).isEqualTo(new long[]{Errors.NONE.code(), 0});
            assertThat(produce(kafka, topic, producerId, (short) 0, 3, 2)).isEqualTo(new long[]{Errors.NONE.code(), 3});
            // Sequence 6 after 4: record 5 is missing.
            assertThat(produce(kafka, topic, producerId, (short) 0, 6, 1)[0])
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code());
            assertThat(produce(kafka, topic, producerId, (short) 0, 5, 1)).isEqualTo(new long[]{Errors.NONE.code(), 5});
            // A new epoch starts at 0; the old one is fenced from then on.
            assertThat(produce(kafka, topic, producerId, (short) 1, 0, 1)).isEqualTo(new long[]{Errors.NONE.code(), 6});
            assertThat(produce(kafka, topic, producerId, (short) 0, 6, 1)[0])
                    .isEqualTo(Errors.INVALID_PRODUCER_EPOCH.code());
        }
        List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(listener.port(), topic, 0, 7);
        assertThat(read).extracting(ConsumerRecord::value)
                .containsExactly("s0", "s1", "s2", "s3", "s4", "s5", "s0");
        assertThat(highWatermark(topic, 0)).isEqualTo(7);
    }

    /** Over HTTP: nothing was appended beyond what the Kafka answers counted. */
    static long highWatermark(String topic, int partition) {
        return given().get("/v1/topics/" + topic + "/partitions/" + partition + "/records?offset=0&maxRecords=1")
                .then().statusCode(200).extract().jsonPath().getLong("highWatermark");
    }

    /** One idempotent batch of {@code count} records "s{seq}"; returns {error code, base offset}. */
    private static long[] produce(RawKafka kafka, String topic, long producerId, short epoch, int baseSequence,
                                  int count) throws Exception {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null,
                    ("s" + (baseSequence + i)).getBytes(StandardCharsets.UTF_8));
        }
        MemoryRecords batch = MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence,
                records);
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(batch))));
        ProduceResponse response = kafka.call(ProduceRequest.builder(new ProduceRequestData().setAcks((short) -1)
                .setTimeoutMs(20_000).setTopicData(topics)).build((short) 12));
        ProduceResponseData.PartitionProduceResponse p = response.data().responses().iterator().next()
                .partitionResponses().get(0);
        return new long[]{p.errorCode(), p.baseOffset()};
    }
}
