package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's Admin changing topics over the listener: CreatePartitions grows a topic (HTTP sees the new count, a
 * producer writes to the new partition), IncrementalAlterConfigs changes the config HTTP's PATCH changes;
 * DescribeLogDirs reports the hot bytes HTTP reports.
 */
@QuarkusTest
class KafkaAdminTest {
    @Inject
    KafkaListener listener;

    @Test
    void createPartitionsGrowsATopic() throws Exception {
        String topic = KafkaListenerTest.unique("grow");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all().get();
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(5);
            assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getInt("partitions")).isEqualTo(5);
            // Shrinking, or a count that is not above the current one, changes nothing.
            assertThatThrownBy(() -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidPartitionsException.class);
            assertThatThrownBy(() -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all().get())
                    .hasCauseInstanceOf(InvalidPartitionsException.class);
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(8)),
                    new org.apache.kafka.clients.admin.CreatePartitionsOptions().validateOnly(true)).all().get();
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(5);
        }
        try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            RecordMetadata m = producer.send(new ProducerRecord<>(topic, 4, "k", "in the new partition")).get();
            assertThat(m.partition()).isEqualTo(4);
            assertThat(m.offset()).isZero();
        }
        assertThat(KafkaClients.readFromStart(listener.port(), topic, 4, 1)).extracting(r -> r.value())
                .containsExactly("in the new partition");
    }

    @Test
    void describeLogDirsReportsEachPartitionsHotBytesUnderOneNamedDirectory() throws Exception {
        String topic = KafkaListenerTest.unique("logdirs");
        int broker = listener.broker().nodeId();
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "value " + i));
            }
            producer.send(new ProducerRecord<>(topic, 1, "k", "one")).get();
            producer.flush();
        }
        List<Long> hotBytes = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                .getList("partitionStates.hotBytes", Long.class);
        assertThat(hotBytes.get(0)).isGreaterThan(hotBytes.get(1)).isGreaterThan(0L);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(broker)).allDescriptions().get()
                    .get(broker);
            // One directory, named, not a path of the machine.
            assertThat(dirs).containsOnlyKeys(KafkaLogDirs.LOG_DIR);
            LogDirDescription hot = dirs.get(KafkaLogDirs.LOG_DIR);
            assertThat(hot.error()).isNull();
            assertThat(hot.totalBytes().orElse(-1)).as("total bytes of the volume").isPositive();
            assertThat(hot.usableBytes().orElse(-1)).as("usable bytes of the volume").isPositive();
            Map<TopicPartition, ReplicaInfo> replicas = hot.replicaInfos();
            for (int p = 0; p < 2; p++) {
                ReplicaInfo info = replicas.get(new TopicPartition(topic, p));
                assertThat(info).as("partition " + p).isNotNull();
                assertThat(info.size()).isEqualTo(hotBytes.get(p));
                assertThat(info.offsetLag()).isZero();
                assertThat(info.isFuture()).isFalse();
            }
            // Asking for named partitions (describeReplicaLogDirs) gives the same; an unknown topic is left out.
            var replica = new org.apache.kafka.common.TopicPartitionReplica(topic, 1, broker);
            assertThat(admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica).getCurrentReplicaLogDir())
                    .isEqualTo(KafkaLogDirs.LOG_DIR);
        }
    }

    @Test
    void incrementalAlterConfigsChangesWhatHttpShows() throws Exception {
        String topic = KafkaListenerTest.unique("alter");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            long defaultRetention = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getLong("config.'retention.ms'");
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "123456"), AlterConfigOp.OpType.SET)))).all().get();
            assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getLong("config.'retention.ms'")).isEqualTo(123456L);
            assertThat(admin.describeConfigs(List.of(resource)).all().get().get(resource).get("retention.ms").value())
                    .isEqualTo("123456");

            // An unknown key or a list operation fails the whole resource: nothing changes.
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "1"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("no.such.key", "1"), AlterConfigOp.OpType.SET)))).all().get())
                    .hasCauseInstanceOf(InvalidConfigurationException.class);
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "1"), AlterConfigOp.OpType.APPEND)))).all().get())
                    .hasCauseInstanceOf(InvalidRequestException.class);
            assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getLong("config.'retention.ms'")).isEqualTo(123456L);

            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)))).all().get();
            assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getLong("config.'retention.ms'")).isEqualTo(defaultRetention);
        }
    }

    /** The AlterConfigs request v0-2 (Admin no longer sends it; librdkafka, Sarama and older tools do). */
    private static AlterConfigsResponseData.AlterConfigsResourceResponse alterConfigs(RawKafka raw,
                                                                                      ConfigResource.Type type,
                                                                                      String name, boolean validateOnly,
                                                                                      Map<String, String> configs)
            throws Exception {
        List<AlterConfigsRequest.ConfigEntry> entries = new java.util.ArrayList<>();
        configs.forEach((k, v) -> entries.add(new AlterConfigsRequest.ConfigEntry(k, v)));
        AlterConfigsResponse r = raw.call(new AlterConfigsRequest.Builder(Map.of(new ConfigResource(type, name),
                new AlterConfigsRequest.Config(entries)), validateOnly), (short) 2);
        return r.data().responses().get(0);
    }

    @Test
    void theOldAlterConfigsSetsExactlyTheConfigsItNamesAndTheRestGoBackToTheirDefaults() throws Exception {
        String topic = KafkaListenerTest.unique("alter-old");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        ConfigResource.Type topicType = ConfigResource.Type.TOPIC;
        try (Admin admin = KafkaClients.admin(listener.port()); RawKafka raw = new RawKafka(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
                    "retention.ms", "60000")))).all().get();
            assertThat(alterConfigs(raw, topicType, topic, false, Map.of("retention.ms", "120000")).errorCode())
                    .isEqualTo(Errors.NONE.code());
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(config.get("retention.ms").value()).isEqualTo("120000");
            assertThat(config.get("cleanup.policy").value()).as("not named: back to its default").isEqualTo("delete");
            assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                    .getLong("config.'retention.ms'")).isEqualTo(120000L);

            assertThat(alterConfigs(raw, topicType, topic, true, Map.of("retention.ms", "1")).errorCode())
                    .as("validateOnly").isEqualTo(Errors.NONE.code());
            assertThat(alterConfigs(raw, topicType, topic, false, Map.of("retention.ms", "1", "no.such.key", "1"))
                    .errorCode()).isEqualTo(Errors.INVALID_CONFIG.code());
            assertThat(alterConfigs(raw, topicType, topic, false, Map.of("retention.ms", "not-a-number"))
                    .errorCode()).isEqualTo(Errors.INVALID_CONFIG.code());
            // Broker configs are the cluster administrator's (this test's anonymous caller is none), as in Kafka.
            assertThat(alterConfigs(raw, ConfigResource.Type.BROKER, "0", false, Map.of("log.retention.ms", "1"))
                    .errorCode()).isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
            assertThat(alterConfigs(raw, topicType, "no-such-topic-" + topic, false, Map.of()).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            assertThat(admin.describeConfigs(List.of(resource)).all().get().get(resource).get("retention.ms").value())
                    .as("nothing refused or only validated was kept").isEqualTo("120000");
        }
    }

    @Test
    void aLogAppendTimeTopicAnswersAndServesTheAppendTimeNotTheProducers() throws Exception {
        String topic = KafkaListenerTest.unique("appendtime");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("message.timestamp.type", "LogAppendTime")))).all().get();
            ConfigEntry described = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic)))
                    .all().get().values().iterator().next().get("message.timestamp.type");
            assertThat(described.value()).isEqualTo("LogAppendTime");
            assertThat(described.type()).isEqualTo(ConfigEntry.ConfigType.STRING);
        }
        long before = System.currentTimeMillis();
        RecordMetadata m;
        try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            m = producer.send(new ProducerRecord<>(topic, 0, 1_000L, "k", "from 1970")).get();
        }
        long after = System.currentTimeMillis();
        assertThat(m.timestamp()).as("the produce response's logAppendTimeMs").isBetween(before, after);
        ConsumerRecord<String, String> read = KafkaClients.readFromStart(listener.port(), topic, 0, 1).get(0);
        assertThat(read.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(read.timestamp()).isEqualTo(m.timestamp());
        // HTTP reads the same time, and a JSON produce is stamped the same way.
        given().body("{\"records\":[{\"partition\":0,\"value\":\"over http\",\"timestamp\":2000}]}")
                .contentType("application/json").post("/v1/topics/" + topic + "/records").then().statusCode(200);
        List<Long> times = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then().statusCode(200)
                .extract().jsonPath().getList("records.timestamp", Long.class);
        assertThat(times).hasSize(2);
        assertThat(times.get(0)).isEqualTo(m.timestamp());
        assertThat(times.get(1)).isGreaterThanOrEqualTo(m.timestamp()).isLessThanOrEqualTo(System.currentTimeMillis());
    }
}
