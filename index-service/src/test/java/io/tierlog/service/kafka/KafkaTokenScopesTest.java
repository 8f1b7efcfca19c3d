package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.tierlog.access.JwksServer;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Token mode, the newer Kafka APIs and JWTs. Each of DescribeConfigs, IncrementalAlterConfigs (topic and broker),
 * CreatePartitions, DeleteGroups, OffsetDelete, OffsetForLeaderEpoch, AlterShareGroupOffsets and
 * DeleteShareGroupOffsets, asked by a principal without the scope it
 * needs ({@link KafkaAccess}), is answered with Kafka's TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED and changes
 * nothing; the same calls with the scopes succeed. SASL/OAUTHBEARER with a JWT signed by the key the service
 * trusts (the issuer's JWKS) authenticates a kafka-clients consumer; an expired JWT or one signed by another key
 * is refused with SASL_AUTHENTICATION_FAILED.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaTokenScopesTest {
    @Inject
    KafkaListener listener;

    private static String mint(String scopes) {
        return given().contentType(ContentType.JSON).header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP)
                .body("{\"name\":\"kafka-scopes\",\"scopes\":\"" + scopes + "\"}").post("/v1/tokens")
                .then().statusCode(201).extract().jsonPath().getString("token");
    }

    private Properties plain(String password) {
        return KafkaClients.saslPlain(listener.port(), password);
    }

    private Properties oauthBearer(String jwt) {
        return KafkaClients.oauthBearer(listener.port(), jwt);
    }

    private static Throwable cause(ThrowingRunnable call) {
        try {
            call.run();
        } catch (Throwable t) {
            return t.getCause() == null ? t : t.getCause();
        }
        throw new AssertionError("the call was allowed");
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void newerApisRefuseAPrincipalWithoutTheirScopeAndChangeNothing() throws Exception {
        String topic = KafkaListenerTest.unique("scp");
        String group = KafkaListenerTest.unique("scp-g");
        TopicPartition p0 = new TopicPartition(topic, 0);
        ConfigResource topicConfig = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        ConfigResource brokerConfig = new ConfigResource(ConfigResource.Type.BROKER,
                String.valueOf(listener.broker().nodeId()));
        AlterConfigOp retention = new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET);
        try (Admin admin = Admin.create(plain(TokenModeProfile.BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(0))).all().get();
        }
        // None of the scopes these APIs need: describe (which produce and fetch imply) and alter on the topic,
        // delete on the group, admin; only the group's membership and commits.
        String weak = mint("read:group:scp-* commit:group:scp-*");
        try (Admin admin = Admin.create(plain(weak))) {
            assertThat(cause(() -> admin.describeConfigs(List.of(topicConfig)).all().get()))
                    .as("DescribeConfigs").isInstanceOf(TopicAuthorizationException.class);
            assertThat(cause(() -> admin.incrementalAlterConfigs(Map.of(topicConfig, List.of(retention))).all().get()))
                    .as("IncrementalAlterConfigs, topic").isInstanceOf(TopicAuthorizationException.class);
            assertThat(cause(() -> admin.incrementalAlterConfigs(Map.of(brokerConfig, List.of(
                    new AlterConfigOp(new ConfigEntry("log.retention.ms", "1000"), AlterConfigOp.OpType.SET))))
                    .all().get())).as("IncrementalAlterConfigs, broker")
                    .isInstanceOf(ClusterAuthorizationException.class);
            assertThat(cause(() -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get()))
                    .as("CreatePartitions").isInstanceOf(TopicAuthorizationException.class);
            assertThat(cause(() -> admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get()))
                    .as("OffsetDelete").isInstanceOf(GroupAuthorizationException.class);
            assertThat(cause(() -> admin.deleteConsumerGroups(List.of(group)).all().get()))
                    .as("DeleteGroups").isInstanceOf(GroupAuthorizationException.class);
            assertThat(cause(() -> admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(0))).all().get()))
                    .as("DeleteRecords").isInstanceOf(TopicAuthorizationException.class);
            int broker = listener.broker().nodeId();
            assertThat(admin.describeLogDirs(List.of(broker)).allDescriptions().get().get(broker).values())
                    .as("DescribeLogDirs of all topics lists none the caller may not describe")
                    .allSatisfy(d -> assertThat(d.replicaInfos().keySet()).extracting(TopicPartition::topic)
                            .doesNotContain(topic));
        }
        // Describe lets Admin find the partition's leader; listing its producers needs Kafka's read, Tierlog's fetch.
        try (Admin admin = Admin.create(plain(mint("describe:topic:scp-*")))) {
            assertThat(cause(() -> admin.describeProducers(List.of(p0)).all().get()))
                    .as("DescribeProducers").isInstanceOf(TopicAuthorizationException.class);
        }
        assertThat(offsetForLeaderEpochError(weak, topic)).as("OffsetForLeaderEpoch")
                .isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);
        assertThat(describeLogDirsError(weak, topic)).as("DescribeLogDirs naming the topic")
                .isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);
        assertThat(describeTopicPartitions(weak, List.of(topic))).as("DescribeTopicPartitions naming the topic")
                .containsExactly(topic + ":" + Errors.TOPIC_AUTHORIZATION_FAILED);
        assertThat(describeTopicPartitions(weak, List.of())).as("DescribeTopicPartitions of all topics")
                .noneMatch(t -> t.startsWith(topic + ":"));

        // Nothing changed: one partition, the default retention, the group's committed offset.
        try (Admin admin = Admin.create(plain(TokenModeProfile.BOOTSTRAP))) {
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(1);
            assertThat(admin.describeConfigs(List.of(topicConfig)).all().get().get(topicConfig).get("retention.ms")
                    .value()).isNotEqualTo("1000");
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get())
                    .containsEntry(p0, new OffsetAndMetadata(0));
        }

        // The same calls with the scopes are served: the refusals above were the scope check's.
        String strong = mint("describe:topic:scp-* alter:topic:scp-* delete:topic:scp-* delete:group:scp-* read:group:scp-*");
        try (Admin admin = Admin.create(plain(strong))) {
            admin.incrementalAlterConfigs(Map.of(topicConfig, List.of(retention))).all().get();
            assertThat(admin.describeConfigs(List.of(topicConfig)).all().get().get(topicConfig).get("retention.ms")
                    .value()).isEqualTo("1000");
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(3);
            admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get();
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()).isEmpty();
            assertThat(admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(0))).lowWatermarks().get(p0).get()
                    .lowWatermark()).isZero();
            int broker = listener.broker().nodeId();
            assertThat(admin.describeLogDirs(List.of(broker)).allDescriptions().get().get(broker)
                    .get(KafkaLogDirs.LOG_DIR).replicaInfos()).containsKey(p0);
        }
        assertThat(offsetForLeaderEpochError(strong, topic)).isEqualTo(Errors.NONE);
        assertThat(describeLogDirsError(strong, topic)).isEqualTo(Errors.NONE);
        assertThat(describeTopicPartitions(strong, List.of())).contains(topic + ":" + Errors.NONE);
    }

    /**
     * A transactional producer needs produce on its transactional id (Kafka's WRITE on a TransactionalId) besides
     * produce on its topics: without it InitProducerId is refused and nothing is created; with it, a transaction
     * commits. Describing a transaction needs describe on the id.
     */
    @Test
    void transactionsNeedProduceOnTheirTransactionalId() throws Exception {
        String topic = KafkaListenerTest.unique("scp-txn");
        String id = KafkaListenerTest.unique("scp-tx");
        try (Admin admin = Admin.create(plain(mint("create:topic:" + topic)))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Properties topicOnly = plain(mint("produce:topic:" + topic));
        topicOnly.put("transactional.id", id);
        topicOnly.put("max.block.ms", "15000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(topicOnly, new StringSerializer(),
                new StringSerializer())) {
            assertThatThrownBy(producer::initTransactions)
                    .isInstanceOf(org.apache.kafka.common.errors.TransactionalIdAuthorizationException.class);
        }
        String both = mint("produce:topic:" + topic + " produce:transaction:" + id);
        try (Admin admin = Admin.create(plain(both))) {
            assertThat(cause(() -> admin.describeTransactions(List.of(id)).all().get()))
                    .as("nothing was created for the refused producer")
                    .isInstanceOf(org.apache.kafka.common.errors.TransactionalIdNotFoundException.class);
        }
        Properties allowed = plain(both);
        allowed.put("transactional.id", id);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(allowed, new StringSerializer(),
                new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "v"));
            producer.commitTransaction();
        }
        try (Admin admin = Admin.create(plain(mint("produce:topic:" + topic)))) {
            assertThat(cause(() -> admin.describeTransactions(List.of(id)).all().get()))
                    .isInstanceOf(org.apache.kafka.common.errors.TransactionalIdAuthorizationException.class);
        }
        try (Admin admin = Admin.create(plain(mint("describe:transaction:" + id)))) {
            assertThat(admin.describeTransactions(List.of(id)).description(id).get().state())
                    .isEqualTo(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT);
        }
    }

    @Test
    void groupConfigsNeedReadToDescribeAndCommitToAlter() throws Exception {
        String group = KafkaListenerTest.unique("gcs");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        AlterConfigOp session = new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "20000"),
                AlterConfigOp.OpType.SET);
        try (Admin admin = Admin.create(plain(mint("describe:topic:gcs-* delete:group:gcs-*")))) {
            assertThat(cause(() -> admin.describeConfigs(List.of(resource)).all().get()))
                    .as("DescribeConfigs without read:group").isInstanceOf(GroupAuthorizationException.class);
        }
        try (Admin admin = Admin.create(plain(mint("read:group:gcs-*")))) {
            assertThat(admin.describeConfigs(List.of(resource)).all().get().get(resource)
                    .get("consumer.session.timeout.ms")).isNotNull();
            assertThat(cause(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(session))).all().get()))
                    .as("IncrementalAlterConfigs without commit:group").isInstanceOf(GroupAuthorizationException.class);
            assertThat(admin.describeConfigs(List.of(resource)).all().get().get(resource)
                    .get("consumer.session.timeout.ms").value()).as("nothing changed").isNotEqualTo("20000");
        }
        try (Admin admin = Admin.create(plain(mint("read:group:gcs-* commit:group:gcs-*")))) {
            admin.incrementalAlterConfigs(Map.of(resource, List.of(session))).all().get();
            assertThat(admin.describeConfigs(List.of(resource)).all().get().get(resource)
                    .get("consumer.session.timeout.ms").value()).isEqualTo("20000");
        }
    }

    @Test
    void shareGroupOffsetsNeedCommitOrDeleteOnTheGroupAndFetchOnEachTopic() throws Exception {
        String topic = KafkaListenerTest.unique("sso");
        String group = KafkaListenerTest.unique("sso-g");
        TopicPartition p0 = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(plain(TokenModeProfile.BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.alterShareGroupOffsets(group, Map.of(p0, 0L)).all().get();
        }
        // Kafka: AlterShareGroupOffsets needs READ on the group and each topic, mapped as OffsetCommit is (commit,
        // fetch); DeleteShareGroupOffsets needs DELETE on the group and READ on each topic (delete, fetch).
        try (Admin admin = Admin.create(plain(mint("read:group:sso-* delete:group:sso-* fetch:topic:sso-*")))) {
            assertThat(cause(() -> admin.alterShareGroupOffsets(group, Map.of(p0, 5L)).all().get()))
                    .as("AlterShareGroupOffsets without commit:group").isInstanceOf(GroupAuthorizationException.class);
        }
        try (Admin admin = Admin.create(plain(mint("read:group:sso-* commit:group:sso-* fetch:topic:sso-*")))) {
            assertThat(cause(() -> admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get()))
                    .as("DeleteShareGroupOffsets without delete:group").isInstanceOf(GroupAuthorizationException.class);
        }
        try (Admin admin = Admin.create(plain(mint("commit:group:sso-* delete:group:sso-* describe:topic:sso-*")))) {
            assertThat(cause(() -> admin.alterShareGroupOffsets(group, Map.of(p0, 5L)).all().get()))
                    .as("AlterShareGroupOffsets without fetch:topic").isInstanceOf(TopicAuthorizationException.class);
            assertThat(cause(() -> admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get()))
                    .as("DeleteShareGroupOffsets without fetch:topic").isInstanceOf(TopicAuthorizationException.class);
        }
        try (Admin admin = Admin.create(plain(TokenModeProfile.BOOTSTRAP))) {
            assertThat(admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get().get(p0).startOffset()).as("nothing changed").isZero();
        }

        try (Admin admin = Admin.create(plain(mint("read:group:sso-* commit:group:sso-* delete:group:sso-* "
                + "fetch:topic:sso-*")))) {
            admin.alterShareGroupOffsets(group, Map.of(p0, 5L)).all().get();
            assertThat(admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get().get(p0).startOffset()).isEqualTo(5);
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            assertThat(admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get()).isEmpty();
        }
    }

    /** A raw connection authenticated with SASL/PLAIN. */
    private RawKafka authenticated(String token) throws Exception {
        return RawKafka.authenticated(listener.port(), token);
    }

    /**
     * DescribeLogDirs naming partition 0 of {@code topic}, raw: Admin's describeReplicaLogDirs reports a refusal as a
     * replica without a directory.
     */
    private Errors describeLogDirsError(String token, String topic) throws Exception {
        try (RawKafka raw = authenticated(token)) {
            DescribeLogDirsRequestData.DescribableLogDirTopicCollection topics =
                    new DescribeLogDirsRequestData.DescribableLogDirTopicCollection();
            topics.add(new DescribeLogDirsRequestData.DescribableLogDirTopic().setTopic(topic).setPartitions(List.of(0)));
            DescribeLogDirsResponse r = raw.call(new DescribeLogDirsRequest.Builder(
                    new DescribeLogDirsRequestData().setTopics(topics)), ApiKeys.DESCRIBE_LOG_DIRS);
            return Errors.forCode(r.data().errorCode());
        }
    }

    /** Each topic of a raw DescribeTopicPartitions answer as {@code name:error}, on a SASL/PLAIN connection. */
    private List<String> describeTopicPartitions(String token, List<String> topics) throws Exception {
        try (RawKafka raw = authenticated(token)) {
            DescribeTopicPartitionsResponse r = raw.call(new DescribeTopicPartitionsRequest.Builder(topics),
                    ApiKeys.DESCRIBE_TOPIC_PARTITIONS);
            return r.data().topics().stream().map(t -> t.name() + ":" + Errors.forCode(t.errorCode())).toList();
        }
    }

    /** OffsetForLeaderEpoch (no Admin call sends it) on one raw connection authenticated with SASL/PLAIN. */
    private Errors offsetForLeaderEpochError(String token, String topic) throws Exception {
        try (RawKafka raw = authenticated(token)) {
            OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
            OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t =
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(topic);
            t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                    .setCurrentLeaderEpoch(-1).setLeaderEpoch(0));
            topics.add(t);
            OffsetsForLeaderEpochResponse r = raw.call(OffsetsForLeaderEpochRequest.Builder.forConsumer(topics),
                    ApiKeys.OFFSET_FOR_LEADER_EPOCH);
            return Errors.forCode(r.data().topics().find(topic).partitions().get(0).errorCode());
        }
    }

    @Test
    void oauthBearerWithAJwtSignedByTheTrustedKeyAuthenticatesAConsumer() throws Exception {
        RsaJsonWebKey trusted = (RsaJsonWebKey) JsonWebKey.Factory.newJwk(
                System.getProperty(TokenModeProfile.JWT_KEY_PROPERTY));
        String topic = KafkaListenerTest.unique("jwt");
        try (Admin admin = Admin.create(plain(TokenModeProfile.BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(plain(TokenModeProfile.BOOTSTRAP),
                new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "k", "for-the-jwt")).get();
        }
        long now = System.currentTimeMillis();
        String jwt = JwksServer.sign(JwksServer.claims(now, "fetch:topic:jwt-* describe:topic:jwt-*"), trusted);
        Properties c = oauthBearer(jwt);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(60);
            while (read.isEmpty() && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertThat(read).extracting(ConsumerRecord::value).containsExactly("for-the-jwt");
        }

        JwtClaims expired = JwksServer.claims(now - 3_600_000, "fetch:topic:jwt-* describe:topic:jwt-*");
        expired.setExpirationTime(NumericDate.fromMilliseconds(now - 60_000));
        RsaJsonWebKey foreign = JwksServer.newKey("k1"); // the trusted key's id, another key pair
        Map<String, String> refused = Map.of("expired", JwksServer.sign(expired, trusted),
                "signed by another key", JwksServer.sign(JwksServer.claims(now, "fetch:topic:jwt-*"), foreign));
        for (Map.Entry<String, String> e : refused.entrySet()) {
            Properties r = oauthBearer(e.getValue());
            r.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(r, new StringDeserializer(),
                    new StringDeserializer())) {
                consumer.assign(List.of(new TopicPartition(topic, 0)));
                assertThatThrownBy(() -> pollUntilFailure(consumer)).as(e.getKey())
                        .isInstanceOf(SaslAuthenticationException.class);
            }
        }
    }

    /** Polls until the consumer throws (or 60 s pass, then returns and the caller's assertion fails). */
    private static void pollUntilFailure(KafkaConsumer<String, String> consumer) {
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline)) {
            consumer.poll(Duration.ofMillis(200));
        }
    }
}
