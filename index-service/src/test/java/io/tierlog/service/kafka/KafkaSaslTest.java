package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import javax.security.auth.callback.Callback;
import javax.security.auth.login.AppConfigurationEntry;
import java.nio.charset.StandardCharsets;
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
 * The listener in {@code token} auth mode: nothing but ApiVersions and SASL before authentication; SASL/PLAIN
 * (password = a Tierlog token) and SASL/OAUTHBEARER (the token as bearer) authenticate; every API is then checked
 * against the token's scopes, as HTTP's routes are (a topic outside them is TOPIC_AUTHORIZATION_FAILED, listings
 * show only what the token may describe); a wrong password is refused.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaSaslTest {
    static final String BOOTSTRAP = TokenModeProfile.BOOTSTRAP;

    /** The OAUTHBEARER login callback of a client whose bearer token is a Tierlog token (the JAAS option "token"). */
    public static class TierlogTokenCallback implements AuthenticateCallbackHandler {
        private String token;

        @Override
        public void configure(Map<String, ?> configs, String mechanism, List<AppConfigurationEntry> entries) {
            token = (String) entries.get(0).getOptions().get("token");
        }

        @Override
        public void handle(Callback[] callbacks) {
            for (Callback c : callbacks) {
                if (c instanceof OAuthBearerTokenCallback cb) {
                    long now = System.currentTimeMillis();
                    cb.token(new OAuthBearerToken() {
                        public String value() {
                            return token;
                        }

                        public Set<String> scope() {
                            return Set.of();
                        }

                        public long lifetimeMs() {
                            return now + 3_600_000;
                        }

                        public String principalName() {
                            return "tierlog";
                        }

                        public Long startTimeMs() {
                            return now;
                        }
                    });
                }
            }
        }

        @Override
        public void close() {
        }
    }

    @Inject
    KafkaListener listener;

    private static String mint(String scopes) {
        return given().contentType(ContentType.JSON).header("Authorization", "Bearer " + BOOTSTRAP)
                .body("{\"name\":\"kafka-test\",\"scopes\":\"" + scopes + "\"}").post("/v1/tokens")
                .then().statusCode(201).extract().jsonPath().getString("token");
    }

    private Properties plain(String password) {
        return KafkaClients.saslPlain(listener.port(), password);
    }

    private Properties oauthBearer(String token) {
        return KafkaClients.oauthBearer(listener.port(), token);
    }

    @Test
    void nothingButApiVersionsAndSaslBeforeAuthenticating() throws Exception {
        try (RawKafka kafka = new RawKafka(listener.port())) {
            MetadataResponse m = kafka.call(new MetadataRequest.Builder(new MetadataRequestData()
                    .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("anything")))
                    .setAllowAutoTopicCreation(false)), (short) 12);
            assertThat(m.topicMetadata()).allSatisfy(t -> assertThat(t.error())
                    .isEqualTo(Errors.SASL_AUTHENTICATION_FAILED));
            assertThat(m.data().brokers()).isEmpty();
        }
    }

    /**
     * KIP-368: a connection re-authenticates as the principal it was and goes on; as another principal it is refused
     * (Kafka's answer) and its next request ends the connection, so nothing kept per principal changes hands.
     */
    @Test
    void reauthenticationKeepsThePrincipal() throws Exception {
        String first = mint("describe:topic:*");
        String second = mint("describe:topic:*");
        MetadataRequest.Builder metadata = new MetadataRequest.Builder(new MetadataRequestData()
                .setTopics(List.of()).setAllowAutoTopicCreation(false));
        try (RawKafka kafka = RawKafka.authenticated(RawKafka.authenticated(listener.port(), first), first)) {
            MetadataResponse served = kafka.call(metadata, (short) 12);
            assertThat(served.data().brokers()).as("after re-authenticating as itself").isNotEmpty();

            kafka.call(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN")),
                    (short) 1);
            SaslAuthenticateResponse other = kafka.call(new SaslAuthenticateRequest.Builder(
                    new SaslAuthenticateRequestData().setAuthBytes(("\u0000anyone\u0000" + second)
                            .getBytes(StandardCharsets.UTF_8))), ApiKeys.SASL_AUTHENTICATE);
            assertThat(Errors.forCode(other.data().errorCode())).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
            assertThat(other.data().errorMessage()).contains("Cannot change principals during re-authentication");
            kafka.send(new RequestHeader(ApiKeys.METADATA, (short) 12, "raw", 99), metadata.build((short) 12));
            assertThat(kafka.closedByPeer()).as("the session ended with the refusal").isTrue();
        }
    }

    @Test
    void plainWithATokenIsCheckedAgainstItsScopes() throws Exception {
        String mine = KafkaListenerTest.unique("sasl");
        String other = KafkaListenerTest.unique("other");
        String group = KafkaListenerTest.unique("sasl-g");
        try (Admin admin = Admin.create(plain(BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(other, 1, (short) 1))).all().get();
        }
        String token = mint("create:topic:sasl-* describe:topic:sasl-* produce:topic:sasl-* fetch:topic:sasl-* "
                + "read:group:sasl-* commit:group:sasl-*");
        try (Admin admin = Admin.create(plain(token))) {
            admin.createTopics(List.of(new NewTopic(mine, 1, (short) 1))).all().get();
            // The listing shows only what the token may describe.
            assertThat(admin.listTopics().names().get()).contains(mine).doesNotContain(other)
                    .allSatisfy(n -> assertThat(n).startsWith("sasl-"));
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic(KafkaListenerTest.unique("nope"), 1,
                    (short) 1))).all().get()).hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        Properties p = plain(token);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            // Idempotent (kafka-clients' default): InitProducerId needs only an authenticated caller.
            assertThat(producer.send(new ProducerRecord<>(mine, "k", "allowed")).get().offset()).isZero();
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(other, "k", "refused")).get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        // Nothing reached the other topic.
        assertThat(given().header("Authorization", "Bearer " + BOOTSTRAP)
                .get("/v1/topics/" + other + "/partitions/0/records?offset=0").then().statusCode(200).extract()
                .jsonPath().getLong("highWatermark")).isZero();

        Properties c = plain(token);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(mine));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(60);
            while (read.isEmpty() && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertThat(read).extracting(ConsumerRecord::value).containsExactly("allowed");
            consumer.commitSync();
        }
        assertThat(given().header("Authorization", "Bearer " + BOOTSTRAP).get("/v1/groups/" + group + "/offsets")
                .then().statusCode(200).extract().jsonPath().getLong("offsets[0].offset")).isEqualTo(1);
    }

    @Test
    void offsetCommitNeedsFetchOnEveryTopicItNames() throws Exception {
        String readable = KafkaListenerTest.unique("sasl-c");
        String other = KafkaListenerTest.unique("other-c");
        String group = KafkaListenerTest.unique("sasl-cg");
        try (Admin admin = Admin.create(plain(BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(readable, 1, (short) 1), new NewTopic(other, 1, (short) 1)))
                    .all().get();
        }
        String token = mint("fetch:topic:sasl-* read:group:sasl-* commit:group:sasl-*");
        try (Admin admin = Admin.create(plain(token))) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(readable, 0), new OffsetAndMetadata(0)))
                    .all().get();
            assertThatThrownBy(() -> admin.alterConsumerGroupOffsets(group,
                    Map.of(new TopicPartition(other, 0), new OffsetAndMetadata(0))).all().get())
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        // The refused commit changed nothing: the group holds only the allowed topic's offset.
        assertThat(given().header("Authorization", "Bearer " + BOOTSTRAP).get("/v1/groups/" + group + "/offsets")
                .then().statusCode(200).extract().jsonPath().getList("offsets.topic")).containsExactly(readable);
    }

    @Test
    void oauthBearerWithATokenAuthenticates() throws Exception {
        String topic = KafkaListenerTest.unique("sasl-oauth");
        String token = mint("create:topic:sasl-* describe:topic:sasl-*");
        try (Admin admin = Admin.create(oauthBearer(token))) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(2);
        }
    }

    @Test
    void aWrongPasswordIsRefused() {
        try (Admin admin = Admin.create(plain("tierlog_not-a-token"))) {
            assertThatThrownBy(() -> admin.listTopics().names().get())
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }
    }
}
