package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * kafka-clients 4.4.0 against the listener in the running service: produce with every codec and acks, consume with
 * assign(), the same records and offsets as HTTP in both directions, long-poll, the cold/hot boundary, Admin, and
 * committed offsets shared with HTTP.
 */
@QuarkusTest
class KafkaListenerTest {
    @Inject
    KafkaListener listener;
    @Inject
    TieredStorage tiered;

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private int port() {
        assertThat(listener.port()).isPositive();
        return listener.port();
    }

    private void createTopic(String name, int partitions, Map<String, String> config) throws Exception {
        try (Admin admin = KafkaClients.admin(port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(config))).all().get();
        }
    }

    /** Produces {@code n} records {"n": i} keyed k-i to partition 0; returns their offsets as the producer saw them. */
    private static List<Long> produce(KafkaProducer<String, String> producer, String topic, int from, int n)
            throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, 0, "k-" + i, "{\"n\":" + i + "}")));
        }
        producer.flush();
        List<Long> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : sent) {
            offsets.add(f.get().offset());
        }
        return offsets;
    }

    /** offset → value.n of partition 0 over HTTP's JSON fetch, from 0 to the high watermark. */
    private static List<long[]> httpRecords(String topic) {
        List<long[]> out = new ArrayList<>();
        long next = 0;
        while (true) {
            JsonPath page = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=" + next + "&maxRecords=500")
                    .then().statusCode(200).extract().jsonPath();
            // One GPath query per column: a query per record costs seconds on a busy machine.
            List<Number> offsets = page.getList("records.offset", Number.class);
            List<Number> values = page.getList("records.value.n", Number.class);
            for (int i = 0; i < offsets.size(); i++) {
                out.add(new long[]{offsets.get(i).longValue(), values.get(i).longValue()});
            }
            next = page.getLong("nextOffset");
            if (next >= page.getLong("highWatermark")) {
                return out;
            }
        }
    }

    @Test
    void everyCodecProducesAndConsumesAtHttpOffsets() throws Exception {
        for (String codec : List.of("none", "gzip", "lz4", "zstd", "snappy")) {
            String topic = unique("codec-" + codec);
            createTopic(topic, 1, Map.of());
            int n = 300;
            List<Long> acked;
            try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", codec)) {
                acked = produce(producer, topic, 0, n);
            }
            List<Long> dense = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                dense.add(i);
            }
            assertThat(acked).as(codec).isEqualTo(dense);

            List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(port(), topic, 0, n);
            assertThat(read).as(codec).hasSize(n);
            List<long[]> http = httpRecords(topic);
            assertThat(http).as(codec).hasSize(n);
            for (int i = 0; i < n; i++) {
                ConsumerRecord<String, String> r = read.get(i);
                assertThat(r.offset()).as(codec).isEqualTo(i);
                assertThat(r.key()).isEqualTo("k-" + i);
                assertThat(r.value()).isEqualTo("{\"n\":" + i + "}");
                assertThat(http.get(i)).as(codec).containsExactly(i, i);
            }
        }
    }

    @Test
    void acksZeroAndOneAppendToo() throws Exception {
        String topic = unique("acks");
        createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "1", "none")) {
            assertThat(produce(producer, topic, 0, 10)).startsWith(0L).endsWith(9L);
        }
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "0", "none")) {
            produce(producer, topic, 10, 10);
        }
        // acks=0 has no answer to wait for: the records are read back once they are there.
        List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(port(), topic, 0, 20);
        assertThat(read).extracting(ConsumerRecord::value)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20).mapToObj(i -> "{\"n\":" + i + "}").toList());
    }

    @Test
    void httpAndKafkaSeeEachOthersRecordsAtTheSameOffsets() throws Exception {
        String topic = unique("cross");
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":2}")
                .post("/v1/topics").then().statusCode(201);
        given().contentType(ContentType.JSON)
                .body("{\"records\":[{\"partition\":1,\"key\":\"h\",\"value\":{\"n\":0},\"headers\":{\"via\":\"http\"}}]}")
                .post("/v1/topics/" + topic + "/records").then().statusCode(200).body("offsets[0].offset",
                        org.hamcrest.Matchers.equalTo(0));
        long kafkaOffset;
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            kafkaOffset = producer.send(new ProducerRecord<>(topic, 1, "k", "{\"n\":1}")).get().offset();
        }
        assertThat(kafkaOffset).isEqualTo(1);

        List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(port(), topic, 1, 2);
        assertThat(read).hasSize(2);
        assertThat(read.get(0).offset()).isZero();
        assertThat(read.get(0).key()).isEqualTo("h");
        assertThat(read.get(0).value()).isEqualTo("{\"n\":0}");
        assertThat(new String(read.get(0).headers().lastHeader("via").value())).isEqualTo("http");
        assertThat(read.get(1).offset()).isEqualTo(1);

        given().get("/v1/topics/" + topic + "/partitions/1/records?offset=1").then().statusCode(200)
                .body("records[0].offset", org.hamcrest.Matchers.equalTo(1))
                .body("records[0].key", org.hamcrest.Matchers.equalTo("k"))
                .body("records[0].value.n", org.hamcrest.Matchers.equalTo(1));
    }

    @Test
    void aWaitingFetchIsAnsweredWhenARecordArrives() throws Exception {
        String topic = unique("longpoll");
        createTopic(topic, 1, Map.of());
        TopicPartition tp = new TopicPartition(topic, 0);
        // A fetch waits up to 10 s (KafkaFramingTest shows that it does wait): the record arrives well before that
        // only if the append wakes the waiting fetch.
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(port(),
                Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10000", ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000"));
             KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            consumer.assign(List.of(tp));
            consumer.seekToEnd(List.of(tp));
            assertThat(consumer.position(tp)).isZero();
            assertThat(consumer.poll(Duration.ofMillis(300)).isEmpty()).isTrue(); // a fetch is now waiting
            long start = System.nanoTime();
            producer.send(new ProducerRecord<>(topic, 0, "k", "{\"n\":7}")).get();
            ConsumerRecords<String, String> got = ConsumerRecords.empty();
            while (got.isEmpty() && System.nanoTime() - start < 15_000_000_000L) {
                got = consumer.poll(Duration.ofSeconds(15));
            }
            assertThat(got.count()).isEqualTo(1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(7));
            consumer.close(Duration.ZERO); // not waiting out its next 10 s fetch
        }
    }

    @Test
    void consumesFromZeroAcrossTheColdHotBoundary() throws Exception {
        String topic = unique("tiers");
        createTopic(topic, 1, Map.of("segment.bytes", "4096", "local.retention.bytes", "0"));
        int n = 300;
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            // One send per batch, so segments of 4 KiB roll many times.
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k-" + i, "{\"n\":" + i + ",\"pad\":\"" + "x".repeat(100)
                        + "\"}")).get();
            }
        }
        tiered.runTieringPass();
        tiered.runRetentionPass();
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).as(state.prettify()).isGreaterThan(3);
        assertThat(state.getLong("partitionStates[0].hotStartOffset")).isGreaterThan(100);
        assertThat(state.getLong("partitionStates[0].logStartOffset")).isZero();
        try (Admin admin = KafkaClients.admin(port())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            // KIP-405's earliest local offset and KIP-1005's latest tiered one: the hot start, and the cold end - 1.
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliestLocal())).partitionResult(tp).get().offset())
                    .isEqualTo(state.getLong("partitionStates[0].hotStartOffset"));
            // Every sealed segment is tiered and evicted (local.retention.bytes 0): the hot tier starts at the cold end
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latestTiered())).partitionResult(tp).get().offset())
                    .isEqualTo(state.getLong("partitionStates[0].hotStartOffset") - 1);
            // KIP-1023's earliest pending upload: the first offset after the cold tier's last.
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliestPendingUpload())).partitionResult(tp).get()
                    .offset()).isEqualTo(state.getLong("partitionStates[0].hotStartOffset"));
        }

        List<ConsumerRecord<String, String>> read = KafkaClients.readFromStart(port(), topic, 0, n);
        assertThat(read).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(read.get(i).offset()).isEqualTo(i);
            assertThat(read.get(i).key()).isEqualTo("k-" + i);
        }
    }

    @Test
    void adminCreatesDescribesListsOffsetsAndDeletes() throws Exception {
        String topic = unique("admin");
        try (Admin admin = KafkaClients.admin(port())) {
            DescribeClusterResult cluster = admin.describeCluster();
            List<Node> nodes = new ArrayList<>(cluster.nodes().get());
            assertThat(nodes).hasSize(1);
            assertThat(nodes.get(0).port()).isEqualTo(port());
            assertThat(cluster.controller().get().id()).isEqualTo(nodes.get(0).id());
            assertThat(cluster.clusterId().get()).isNotBlank();

            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
            assertThat(admin.listTopics().names().get()).contains(topic).noneMatch(t -> t.startsWith("__"));
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(3);
            given().get("/v1/topics/" + topic).then().statusCode(200).body("partitions", org.hamcrest.Matchers.equalTo(3));

            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get())
                    .hasCauseInstanceOf(TopicExistsException.class);
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic(unique("rf3"), 1, (short) 3))).all().get())
                    .hasCauseInstanceOf(InvalidReplicationFactorException.class);

            long before = System.currentTimeMillis();
            try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
                produce(producer, topic, 0, 5);
            }
            TopicPartition tp = new TopicPartition(topic, 0);
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset()).isZero();
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset()).isEqualTo(5);
            var byTime = admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(before - 1000))).partitionResult(tp).get();
            assertThat(byTime.offset()).isZero();
            assertThat(byTime.timestamp()).isGreaterThanOrEqualTo(before - 1000);
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(System.currentTimeMillis() + 3_600_000)))
                    .partitionResult(tp).get().offset()).isEqualTo(-1);
            // KIP-734's max timestamp: the first record with the largest timestamp, whatever its place.
            TopicPartition tp1 = new TopicPartition(topic, 1);
            try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
                for (long late : new long[]{0, 5_000, 1_000, 5_000, 2_000}) {
                    producer.send(new ProducerRecord<>(topic, 1, before + late, "k", "v")).get();
                }
            }
            var max = admin.listOffsets(Map.of(tp1, OffsetSpec.maxTimestamp())).partitionResult(tp1).get();
            assertThat(max.offset()).isEqualTo(1);
            assertThat(max.timestamp()).isEqualTo(before + 5_000);
            // KIP-1023's earliest pending upload with nothing tiered (the segment is still open): the log start.
            assertThat(admin.listOffsets(Map.of(tp1, OffsetSpec.earliestPendingUpload())).partitionResult(tp1).get()
                    .offset()).isZero();

            given().contentType(ContentType.JSON).body("{\"retention.ms\":172800000}")
                    .patch("/v1/topics/" + topic + "/config").then().statusCode(200);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(config.get("retention.ms").value()).isEqualTo("172800000");
            assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            assertThat(config.get("segment.bytes").value()).isEqualTo(Long.toString(128L * 1024 * 1024));
            assertThat(config.get("segment.bytes").isDefault()).isTrue();
            assertThat(config.get("cleanup.policy").value()).isEqualTo("delete");
            assertThat(config.get("min.cleanable.dirty.ratio").value()).isEqualTo("0.5");
            assertThat(config.get("message.timestamp.type").value()).isEqualTo("CreateTime");
            assertThat(config.entries()).hasSize(TopicConfig.KEYS.size());

            admin.deleteTopics(List.of(topic)).all().get();
            given().get("/v1/topics/" + topic).then().statusCode(404);
            assertThatThrownBy(() -> admin.describeTopics(List.of(topic)).allTopicNames().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
        }
    }

    @Test
    void committedOffsetsAreSharedWithHttp() throws Exception {
        String topic = unique("commits");
        String group = unique("g");
        createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            produce(producer, topic, 0, 10);
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(port(),
                Map.of(ConsumerConfig.GROUP_ID_CONFIG, group))) {
            consumer.assign(List.of(tp));
            // Metadata is kept with the offset (Kafka Streams keeps a partition's stream time there), up to Kafka's
            // limit: a longer one is refused and changes nothing.
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(4, "stream-time=1765100000000")));
            assertThat(consumer.committed(Set.of(tp)).get(tp).metadata()).isEqualTo("stream-time=1765100000000");
            assertThatThrownBy(() -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(5, "m".repeat(4097)))))
                    .isInstanceOf(org.apache.kafka.common.errors.OffsetMetadataTooLarge.class);
            try (Admin admin = KafkaClients.admin(port())) {
                OffsetAndMetadata listed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                        .get(tp);
                assertThat(listed.offset()).isEqualTo(4);
                assertThat(listed.metadata()).isEqualTo("stream-time=1765100000000");
            }
            given().get("/v1/groups/" + group + "/offsets").then().statusCode(200)
                    .body("offsets.find { it.topic == '" + topic + "' }.offset", org.hamcrest.Matchers.equalTo(4));

            given().contentType(ContentType.JSON)
                    .body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":7}]}")
                    .put("/v1/groups/" + group + "/offsets").then().statusCode(204);
            assertThat(consumer.committed(Set.of(tp)).get(tp).offset()).isEqualTo(7);
            assertThat(consumer.committed(Set.of(tp)).get(tp).metadata()).as("an HTTP commit carries none")
                    .isEmpty();
            // A consumer without a reset position starts from the committed offset.
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (read.size() < 3 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertThat(read).extracting(ConsumerRecord::offset).containsExactly(7L, 8L, 9L);
        }
    }

    /**
     * A group's commit belongs to the topic it was made on: once that topic is deleted and created again under its
     * name, the group has no offset there (as Kafka removes a deleted topic's offsets), so its consumer starts where
     * its reset policy says instead of at a position in the old topic, which would skip the new topic's first records.
     */
    @Test
    void aTopicCreatedAgainStartsWithoutTheOldTopicsCommits() throws Exception {
        String topic = unique("recreated");
        String group = unique("g-recreated");
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            produce(producer, topic, 0, 10);
        }
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(port(),
                Map.of(ConsumerConfig.GROUP_ID_CONFIG, group))) {
            consumer.assign(List.of(tp));
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(2)));
        }
        org.apache.kafka.common.Uuid oldId;
        try (Admin admin = KafkaClients.admin(port())) {
            oldId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
            admin.deleteTopics(List.of(topic)).all().get();
        }
        createTopic(topic, 1, Map.of());
        // A consumer of the old topic committing by its id (OffsetCommit 10+) moves nothing of the new one.
        try (RawKafka raw = new RawKafka(port())) {
            OffsetCommitResponseData zombie = ((OffsetCommitResponse) raw.call(OffsetCommitRequest.Builder
                    .forTopicIdsOrNames(new OffsetCommitRequestData().setGroupId(group).setTopics(List.of(
                            new OffsetCommitRequestData.OffsetCommitRequestTopic().setTopicId(oldId).setPartitions(
                                    List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                            .setPartitionIndex(0).setCommittedOffset(1)))))), (short) 10)).data();
            assertThat(Errors.forCode(zombie.topics().get(0).partitions().get(0).errorCode()))
                    .isEqualTo(Errors.UNKNOWN_TOPIC_ID);
        }
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port(), "all", "none")) {
            produce(producer, topic, 0, 5);
        }
        given().get("/v1/groups/" + group + "/offsets").then().statusCode(200)
                .body("offsets.findAll { it.topic == '" + topic + "' }", org.hamcrest.Matchers.empty());
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(port(), Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            assertThat(consumer.committed(Set.of(tp)).get(tp)).as("no offset on the new topic").isNull();
            consumer.assign(List.of(tp));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (read.size() < 5 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertThat(read).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(5)));
        }
        given().get("/v1/groups/" + group + "/offsets").then().statusCode(200)
                .body("offsets.find { it.topic == '" + topic + "' }.offset", org.hamcrest.Matchers.equalTo(5));
    }
}
