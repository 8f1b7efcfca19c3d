package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.tierlog.service.TokenModeProfile;
import io.tierlog.service.quota.QuotaOverrides;
import io.tierlog.service.quota.Quotas;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's client-quota APIs against the listener in token mode: a producer_byte_rate set for one token holds at once
 * on HTTP (429 once the token is over it, with the rate set), the default user's rate reaches a caller without its
 * own, removing a rate lifts it; a rate set for a client id with kafka-configs throttles the Kafka producers of that
 * client id and no other; a request_percentage throttles the caller over it; what Tierlog cannot hold (a byte rate
 * for an ip entity, a rate under 1 byte or under 0.0001 percent, a user that is no Tierlog principal, a client id
 * with a control character) is refused and stores nothing; only the administrator describes or alters; and
 * kafka-configs (ConfigCommand, kafka-tools 4.4.0) alters a user's rate.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaClientQuotasTest {
    @Inject
    KafkaListener listener;
    @Inject
    Quotas quotas;

    private static MintedToken mint(String scopes) {
        return MintedToken.mint("kafka-quotas", scopes);
    }

    private static ClientQuotaEntity user(String name) {
        return new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, name));
    }

    private static ClientQuotaAlteration set(ClientQuotaEntity entity, String key, Double value) {
        return new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)));
    }

    /** The status of a produce of about 8 KiB over HTTP with {@code secret}. */
    private static int produce(String topic, String secret) {
        String value = "x".repeat(8 * 1024);
        return given().contentType(ContentType.JSON).header("Authorization", "Bearer " + secret)
                .body("{\"records\":[{\"key\":\"k\",\"value\":\"" + value + "\"}]}")
                .post("/v1/topics/" + topic + "/records").then().extract().statusCode();
    }

    private void createTopic(String topic) {
        given().contentType(ContentType.JSON).header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP)
                .body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
    }

    @Test
    void aUsersRateHoldsAtOnceAndItsRemovalLiftsIt() throws Exception {
        String topic = KafkaListenerTest.unique("quota");
        createTopic(topic);
        MintedToken token = mint("produce:topic:" + topic);
        assertThat(produce(topic, token.secret())).isEqualTo(200);
        assertThat(produce(topic, token.secret())).as("no quota yet").isEqualTo(200);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.alterClientQuotas(List.of(set(user(token.principal()), "producer_byte_rate", 1024.0))).all().get();
            assertThat(produce(topic, token.secret())).as("admitted, and now 7 s in debt").isEqualTo(200);
            given().contentType(ContentType.JSON).header("Authorization", "Bearer " + token.secret())
                    .body("{\"records\":[{\"key\":\"k\",\"value\":1}]}").post("/v1/topics/" + topic + "/records")
                    .then().statusCode(429).header("Retry-After", org.hamcrest.Matchers.notNullValue())
                    .body("bytesPerSecond", org.hamcrest.Matchers.equalTo(1024));

            var described = admin.describeClientQuotas(ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, token.principal())))).entities().get();
            assertThat(described).containsExactly(Map.entry(user(token.principal()), Map.of("producer_byte_rate", 1024.0)));

            admin.alterClientQuotas(List.of(set(user(token.principal()), "producer_byte_rate", null))).all().get();
            assertThat(produce(topic, token.secret())).as("rate removed: the debt no longer counts").isEqualTo(200);
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get())
                    .doesNotContainKey(user(token.principal()));
        }
    }

    @Test
    void theDefaultUsersRateReachesACallerWithoutItsOwn() throws Exception {
        String topic = KafkaListenerTest.unique("quota-default");
        createTopic(topic);
        MintedToken limited = mint("produce:topic:" + topic);
        MintedToken own = mint("produce:topic:" + topic);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.alterClientQuotas(List.of(set(user(null), "producer_byte_rate", 1024.0),
                    set(user(own.principal()), "producer_byte_rate", 10_000_000.0))).all().get();
            try {
                assertThat(produce(topic, limited.secret())).isEqualTo(200);
                assertThat(produce(topic, limited.secret())).as("the default's 1 KiB/s").isEqualTo(429);
                assertThat(produce(topic, own.secret())).isEqualTo(200);
                assertThat(produce(topic, own.secret())).as("its own 10 MB/s beats the default").isEqualTo(200);
                assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                        ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.USER)))).entities().get())
                        .containsExactly(Map.entry(user(null), Map.of("producer_byte_rate", 1024.0)));
            } finally {
                admin.alterClientQuotas(List.of(set(user(null), "producer_byte_rate", null),
                        set(user(own.principal()), "producer_byte_rate", null))).all().get();
            }
        }
        assertThat(quotas.overrides().list()).noneMatch(r -> QuotaOverrides.DEFAULT.equals(r.entity().user()));
    }

    @Test
    void whatTierlogCannotHoldIsRefusedAndStoresNothing() throws Exception {
        MintedToken token = mint("describe:topic:x");
        List<ClientQuotaAlteration> refused = List.of(
                set(new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "10.0.0.1")), "producer_byte_rate", 1024.0),
                set(new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, token.principal(),
                        ClientQuotaEntity.CLIENT_ID, "app\u0007")), "producer_byte_rate", 1024.0),
                new ClientQuotaAlteration(user(token.principal()), List.of(
                        new ClientQuotaAlteration.Op("consumer_byte_rate", 2048.0),
                        new ClientQuotaAlteration.Op("request_percentage", 0.00001))),
                set(user("mail:alice"), "producer_byte_rate", 1024.0),
                set(user("token:" + "0".repeat(32)), "consumer_byte_rate", 0.5));
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            var results = admin.alterClientQuotas(refused).values();
            for (ClientQuotaAlteration a : refused) {
                assertThatThrownBy(() -> results.get(a.entity()).get()).as("%s", a)
                        .hasCauseInstanceOf(InvalidRequestException.class);
            }
        }
        assertThat(quotas.overrides().list()).as("consumer_byte_rate of a refused entry was not written either")
                .noneMatch(r -> token.principal().equals(r.entity().user()) || "mail:alice".equals(r.entity().user()));
    }

    @Test
    void onlyTheAdministratorDescribesOrAlters() throws Exception {
        MintedToken token = mint("produce:topic:y fetch:topic:y");
        try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
            assertThatThrownBy(() -> admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> admin.alterClientQuotas(List.of(set(user(token.principal()), "producer_byte_rate",
                    1e9))).all().get()).hasCauseInstanceOf(ClusterAuthorizationException.class);
        }
        assertThat(quotas.overrides().list()).noneMatch(r -> token.principal().equals(r.entity().user()));
    }

    @Test
    void aClientIdsRateThrottlesItsProducersAndNoOther() throws Exception {
        String topic = KafkaListenerTest.unique("quota-client");
        createTopic(topic);
        MintedToken token = mint("produce:topic:" + topic);
        String slow = KafkaListenerTest.unique("slow-app");
        Path config = adminConfig();
        try {
            KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                    KafkaClients.bootstrap(listener.port()), "--command-config", config.toString(), "--alter",
                    "--add-config", "producer_byte_rate=1024", "--entity-type", "clients", "--entity-name", slow);
            try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
                assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                        ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, slow)))).entities().get())
                        .containsExactly(Map.entry(new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, slow)),
                                Map.of("producer_byte_rate", 1024.0)));
            }
            assertThat(produceThrottleMs(token.secret(), slow, topic)).as("8 KiB at 1 KiB/s").isGreaterThan(5_000);
            assertThat(produceThrottleMs(token.secret(), KafkaListenerTest.unique("fast-app"), topic))
                    .as("another client id of the same user").isZero();
            assertThat(produce(topic, token.secret())).as("HTTP names no client id").isEqualTo(200);
        } finally {
            quotas.overrides().remove(new QuotaOverrides.Entity(null, slow), QuotaOverrides.Kind.PRODUCE);
        }
    }

    /** The throttle time a producer with {@code clientId} is told after sending 8 KiB (its metric's maximum). */
    private double produceThrottleMs(String secret, String clientId, String topic) throws Exception {
        Properties p = KafkaClients.saslPlain(listener.port(), secret);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer());
        try {
            producer.send(new ProducerRecord<>(topic, 0, "k", "x".repeat(8 * 1024))).get();
            return (double) producer.metrics().entrySet().stream()
                    .filter(e -> e.getKey().name().equals("produce-throttle-time-max")
                            && e.getKey().group().equals("producer-metrics"))
                    .findFirst().orElseThrow().getValue().metricValue();
        } finally {
            producer.close(Duration.ZERO); // not waiting out the throttle
        }
    }

    private Path adminConfig() throws Exception {
        Path config = Files.createTempFile(Path.of("target"), "quota-tool", ".properties");
        Properties admin = KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP);
        try (Writer w = Files.newBufferedWriter(config)) {
            admin.store(w, null);
        }
        return config;
    }

    /**
     * request_percentage (set as Kafka's percentage of one thread, kept as microseconds per second): a caller whose
     * requests took more of the listener's time than its rate is told to wait in the answer, another is not, and
     * the rate is described as it was set.
     */
    @Test
    void aRequestPercentageThrottlesTheCallerOverItAndNoOther() throws Exception {
        MintedToken limited = mint("describe:topic:*");
        MintedToken free = mint("describe:topic:*");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.alterClientQuotas(List.of(set(user(limited.principal()), "request_percentage", 0.01))).all().get();
            ClientQuotaFilter own = ClientQuotaFilter.containsOnly(List.of(
                    ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, limited.principal())));
            assertThat(admin.describeClientQuotas(own).entities().get())
                    .containsExactly(Map.entry(user(limited.principal()), Map.of("request_percentage", 0.01)));
        }
        try {
            // 100 µs per second, one second's worth of burst: a metadata request of every topic costs more.
            assertThat(metadataThrottleMs(limited.secret())).as("over 0.01% of one thread").isPositive();
            assertThat(metadataThrottleMs(free.secret())).as("no rate").isZero();
        } finally {
            quotas.overrides().remove(limited.principal(), QuotaOverrides.Kind.REQUEST);
        }
    }

    /**
     * The request rate charges the pool time of produces and fetches as of every other request: at the least rate
     * (0.0001% of one thread, one microsecond a second), a produce's and a fetch's answers carry a throttle, on a new
     * connection each (a throttled connection reads nothing for as long); another token's carry none.
     */
    @Test
    void aRequestPercentageChargesProducesAndFetchesToo() throws Exception {
        String topic = KafkaListenerTest.unique("req-pct");
        MintedToken limited = mint("produce:topic:" + topic + " fetch:topic:" + topic);
        MintedToken free = mint("produce:topic:" + topic + " fetch:topic:" + topic);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.alterClientQuotas(List.of(set(user(limited.principal()), "request_percentage", 0.0001))).all().get();
        }
        try {
            try (RawKafka raw = RawKafka.authenticated(listener.port(), free.secret())) {
                ProduceResponse produced = raw.call(KafkaQuotaTest.produce(topic, KafkaQuotaTest.records(5)));
                assertThat(produced.throttleTimeMs()).as("no rate").isZero();
                assertThat(((FetchResponse) raw.call(KafkaQuotaTest.fetch(topic))).throttleTimeMs()).isZero();
            }
            try (RawKafka raw = RawKafka.authenticated(listener.port(), limited.secret())) {
                ProduceResponse produced = raw.call(KafkaQuotaTest.produce(topic, KafkaQuotaTest.records(5)));
                assertThat(produced.data().responses().iterator().next().partitionResponses().get(0).errorCode())
                        .isEqualTo(Errors.NONE.code());
                assertThat(produced.throttleTimeMs()).as("a produce over the rate").isPositive();
            }
            try (RawKafka raw = RawKafka.authenticated(listener.port(), limited.secret())) {
                assertThat(((FetchResponse) raw.call(KafkaQuotaTest.fetch(topic))).throttleTimeMs())
                        .as("a fetch over the rate").isPositive();
            }
        } finally {
            quotas.overrides().remove(limited.principal(), QuotaOverrides.Kind.REQUEST);
        }
    }

    /** The throttle time of one Metadata request for every topic, on a new connection authenticated with a token. */
    private int metadataThrottleMs(String secret) throws Exception {
        try (RawKafka raw = RawKafka.authenticated(listener.port(), secret)) {
            MetadataResponse answer = raw.call(new MetadataRequest.Builder(new MetadataRequestData().setTopics(null)),
                    (short) 12);
            return answer.throttleTimeMs();
        }
    }

    @Test
    void kafkaConfigsAltersAUsersRate() throws Exception {
        MintedToken token = mint("describe:topic:z");
        Path config = adminConfig();
        KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                KafkaClients.bootstrap(listener.port()), "--command-config", config.toString(), "--alter",
                "--add-config", "consumer_byte_rate=4096", "--entity-type", "users", "--entity-name", token.principal());
        assertThat(quotas.overrides().rate(QuotaOverrides.Kind.FETCH, token.principal())).hasValue(4096);
        quotas.overrides().remove(token.principal(), QuotaOverrides.Kind.FETCH);
    }

    @Test
    void aMutationRateRefusesTopicsOverItOnKafkaAndHttpUntilTheCallerIsWithinItAgain() throws Exception {
        String prefix = KafkaListenerTest.unique("mut");
        MintedToken token = mint("create:topic:" + prefix + "* delete:topic:" + prefix + "* alter:topic:" + prefix
                + "* describe:topic:" + prefix + "*");
        String a = prefix + "-a";
        String b = prefix + "-b";
        KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                KafkaClients.bootstrap(listener.port()), "--command-config", adminConfig().toString(), "--alter",
                "--add-config", "controller_mutation_rate=1", "--entity-type", "users", "--entity-name",
                token.principal());
        try {
            try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
                admin.createTopics(List.of(new NewTopic(a, 5, (short) 1)), noRetry(new CreateTopicsOptions()))
                        .all().get();
                // 5 partitions at 1 a second, from a full bucket of 1: 4 s in debt.
                assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic(b, 1, (short) 1)),
                        noRetry(new CreateTopicsOptions())).all().get())
                        .cause().isInstanceOf(ThrottlingQuotaExceededException.class)
                        .satisfies(e -> assertThat(((ThrottlingQuotaExceededException) e).throttleTimeMs())
                                .isBetween(1, 4_000));
            }
            given().contentType(ContentType.JSON).header("Authorization", "Bearer " + token.secret())
                    .body("{\"name\":\"" + b + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(429)
                    .header("Retry-After", org.hamcrest.Matchers.notNullValue())
                    .body("quota", org.hamcrest.Matchers.equalTo("mutation"))
                    .body("partitionsPerSecond", org.hamcrest.Matchers.equalTo(1));
            assertThat(given().header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP).get("/q/metrics")
                    .then().statusCode(200).extract().asString())
                    .containsPattern("tierlog_topic_mutations_rejected_total\\{reason=\"quota\"\\} [1-9]");
            try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
                assertThatThrownBy(() -> admin.deleteTopics(List.of(a),
                        new DeleteTopicsOptions().retryOnQuotaViolation(false)).all().get())
                        .cause().isInstanceOf(ThrottlingQuotaExceededException.class);
            }
            try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
                assertThatThrownBy(() -> admin.createPartitions(Map.of(a, NewPartitions.increaseTo(6)),
                        new CreatePartitionsOptions().retryOnQuotaViolation(false)).all().get())
                        .cause().isInstanceOf(ThrottlingQuotaExceededException.class);
                assertThat(admin.describeTopics(List.of(a)).allTopicNames().get().get(a).partitions())
                        .as("neither deleted nor grown").hasSize(5);
                assertThat(admin.listTopics().names().get()).doesNotContain(b);
                // Kafka's Admin waits the throttle out and retries by itself (retryOnQuotaViolation's default).
                admin.createTopics(List.of(new NewTopic(b, 1, (short) 1))).all().get();
                assertThat(admin.listTopics().names().get()).contains(a, b);
            }
        } finally {
            quotas.overrides().remove(token.principal(), QuotaOverrides.Kind.MUTATION);
        }
    }

    private static CreateTopicsOptions noRetry(CreateTopicsOptions options) {
        return options.retryOnQuotaViolation(false);
    }

    /**
     * HTTP's topic creation counts too; a CreateTopics of a version before THROTTLING_QUOTA_EXCEEDED (v5) is served
     * whole and throttled after, as in Kafka.
     */
    @Test
    void httpCreationCountsAndAnOlderCreateTopicsIsServedThenThrottled() throws Exception {
        String prefix = KafkaListenerTest.unique("mut-http");
        MintedToken token = mint("create:topic:" + prefix + "*");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.alterClientQuotas(List.of(set(user(token.principal()), "controller_mutation_rate", 1.0))).all().get();
        }
        try {
            given().contentType(ContentType.JSON).header("Authorization", "Bearer " + token.secret())
                    .body("{\"name\":\"" + prefix + "-a\",\"partitions\":3}").post("/v1/topics").then().statusCode(201);
            given().contentType(ContentType.JSON).header("Authorization", "Bearer " + token.secret())
                    .body("{\"name\":\"" + prefix + "-b\",\"partitions\":1}").post("/v1/topics").then().statusCode(429);
            try (RawKafka raw = RawKafka.authenticated(listener.port(), token.secret())) {
                var topics = new CreateTopicsRequestData.CreatableTopicCollection();
                topics.add(new CreateTopicsRequestData.CreatableTopic().setName(prefix + "-c").setNumPartitions(2)
                        .setReplicationFactor((short) 1));
                CreateTopicsResponse answer = raw.call(new CreateTopicsRequest.Builder(new CreateTopicsRequestData()
                        .setTopics(topics).setTimeoutMs(10_000)), (short) 5);
                assertThat(answer.data().topics().find(prefix + "-c").errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(answer.data().throttleTimeMs()).as("in debt before and after").isBetween(1, 5_000);
            }
        } finally {
            quotas.overrides().remove(token.principal(), QuotaOverrides.Kind.MUTATION);
        }
    }

    /**
     * An ip entity's connection_creation_rate, set with kafka-configs: connections from that address beyond it are
     * closed unanswered; other addresses are not affected; removing the rate lifts it.
     */
    @Test
    void anAddressOverItsConnectionRateIsClosedUnanswered() throws Exception {
        InetAddress second = InetAddress.getByName("127.0.0.2");
        KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                KafkaClients.bootstrap(listener.port()), "--command-config", adminConfig().toString(), "--alter",
                "--add-config", "connection_creation_rate=3", "--entity-type", "ips", "--entity-name", "127.0.0.2");
        try {
            try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
                assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                        ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.IP, "127.0.0.2")))).entities().get())
                        .containsExactly(Map.entry(new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "127.0.0.2")),
                                Map.of("connection_creation_rate", 3.0)));
            }
            int answered = 0;
            int closed = 0;
            for (int i = 0; i < 12; i++) {
                if (answersApiVersions(new RawKafka(second, listener.port()))) {
                    answered++;
                } else {
                    closed++;
                }
            }
            // A full bucket of 3 admits 4 (the last into debt); what refills while 12 connect adds a few at most.
            assertThat(answered).isBetween(4, 8);
            assertThat(closed).isEqualTo(12 - answered);
            assertThat(answersApiVersions(new RawKafka(listener.port()))).as("127.0.0.1 has no rate").isTrue();
        } finally {
            quotas.overrides().remove(QuotaOverrides.Entity.ip("127.0.0.2"), QuotaOverrides.Kind.CONNECTION);
        }
        for (int i = 0; i < 12; i++) {
            assertThat(answersApiVersions(new RawKafka(second, listener.port()))).as("rate removed").isTrue();
        }
    }

    /** Whether the listener answers an ApiVersions on {@code raw} (false: it closed the connection); closes it. */
    private static boolean answersApiVersions(RawKafka raw) throws Exception {
        try (raw) {
            ApiVersionsResponse answer = raw.call(new ApiVersionsRequest.Builder(), (short) 3);
            return answer.data().errorCode() == Errors.NONE.code();
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return false;
        }
    }
}
