package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.DelegationTokenAuthorizationException;
import org.apache.kafka.common.errors.DelegationTokenNotFoundException;
import org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's delegation tokens on the listener, in token mode, with kafka-clients 4.4.0 and kafka-delegation-tokens: a
 * token created by a Tierlog token authenticates producers and consumers over SASL/SCRAM ({@code tokenauth=true}) as
 * its owner, with its owner's scopes and nothing more, and stops working when its owner token is revoked; renewal,
 * expiry and describe follow Kafka's rules (owner, requester and renewers manage it; the administrator sees every
 * token; a token cannot create tokens); an expired token authenticates no one.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaDelegationTokensTest {
    @jakarta.inject.Inject
    KafkaListener listener;

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private Properties withToken(String mechanism, DelegationToken token) {
        Properties p = KafkaClients.delegationToken(listener.port(), mechanism, token.tokenInfo().tokenId(),
                token.hmacAsBase64String());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return p;
    }

    private KafkaProducer<String, String> producer(String mechanism, DelegationToken token) {
        return new KafkaProducer<>(withToken(mechanism, token), new StringSerializer(), new StringSerializer());
    }

    private Admin scramAdmin(String user) {
        return Admin.create(KafkaClients.scram(listener.port(), "SCRAM-SHA-256", user, user + "-pw"));
    }

    private void createScramUsers(String... users) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            List<org.apache.kafka.clients.admin.UserScramCredentialAlteration> upserts = new ArrayList<>();
            for (String user : users) {
                upserts.add(new UserScramCredentialUpsertion(user,
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), user + "-pw"));
            }
            admin.alterUserScramCredentials(upserts).all().get();
        }
    }

    @Test
    void aTokenAuthenticatesAsItsOwnerWithItsScopesUntilTheOwnerIsRevoked() throws Exception {
        String topic = unique("delegated");
        String other = unique("not-delegated");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1), new NewTopic(other, 1, (short) 1)))
                    .all().get();
        }
        MintedToken owner = MintedToken.mint("delegating-app", "produce:topic:" + topic + " fetch:topic:" + topic
                + " describe:topic:" + topic);
        DelegationToken token;
        try (Admin admin = KafkaClients.admin(listener.port(), owner.secret())) {
            token = admin.createDelegationToken().delegationToken().get();
        }
        TokenInformation info = token.tokenInfo();
        assertThat(info.owner()).isEqualTo(new KafkaPrincipal("User", owner.principal()));
        assertThat(info.tokenRequester()).isEqualTo(info.owner());
        assertThat(token.hmac()).hasSize(64);
        assertThat(info.expiryTimestamp()).isEqualTo(info.issueTimestamp() + Duration.ofDays(1).toMillis());
        assertThat(info.maxTimestamp()).isEqualTo(info.issueTimestamp() + Duration.ofDays(7).toMillis());

        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-512", token)) {
            assertThat(producer.send(new ProducerRecord<>(topic, "k", "by delegation")).get().offset()).isZero();
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(other, "k", "v")).get())
                    .as("its owner's scopes, nothing more").hasCauseInstanceOf(TopicAuthorizationException.class);
        }
        assertThat(KafkaClients.readFromStart(withToken("SCRAM-SHA-256", token), topic, 0, 1))
                .extracting(ConsumerRecord::value).containsExactly("by delegation");
        try (Admin delegated = Admin.create(withToken("SCRAM-SHA-256", token))) {
            assertThatThrownBy(() -> delegated.createDelegationToken().delegationToken().get())
                    .as("a token cannot create tokens, as in Kafka")
                    .hasCauseInstanceOf(UnsupportedByAuthenticationException.class);
        }

        byte[] wrong = token.hmac().clone();
        wrong[7] ^= 1;
        DelegationToken forged = new DelegationToken(info, wrong);
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", forged)) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "v")).get())
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }

        given().header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP).delete("/v1/tokens/" + owner.id())
                .then().statusCode(204);
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", token)) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "after revocation")).get())
                    .as("revoking the owner token cuts the tokens made from it")
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }
    }

    @Test
    void renewalExpiryAndDescribeFollowKafkasRules() throws Exception {
        String alice = unique("alice");
        String bob = unique("bob");
        String carol = unique("carol");
        createScramUsers(alice, bob, carol);
        DelegationToken token;
        try (Admin admin = scramAdmin(alice)) {
            token = admin.createDelegationToken(new CreateDelegationTokenOptions()
                    .renewers(List.of(new KafkaPrincipal("User", bob)))
                    .maxLifetimeMs(Duration.ofHours(2).toMillis())).delegationToken().get();
            List<DelegationToken> mine = admin.describeDelegationToken().delegationTokens().get();
            assertThat(mine).extracting(t -> t.tokenInfo().tokenId()).containsExactly(token.tokenInfo().tokenId());
            assertThat(mine.get(0).tokenInfo().renewers()).containsExactly(new KafkaPrincipal("User", bob));
            assertThat(mine.get(0).hmac()).as("the HMAC is not kept").isEmpty();
        }
        long max = token.tokenInfo().maxTimestamp();
        assertThat(max - token.tokenInfo().issueTimestamp()).isEqualTo(Duration.ofHours(2).toMillis());
        assertThat(token.tokenInfo().expiryTimestamp()).as("the renew time is past the maximum").isEqualTo(max);

        try (Admin admin = scramAdmin(carol)) {
            assertThat(admin.describeDelegationToken().delegationTokens().get()).as("not carol's").isEmpty();
            assertThat(admin.describeDelegationToken(new DescribeDelegationTokenOptions()
                    .owners(List.of(new KafkaPrincipal("User", alice)))).delegationTokens().get()).isEmpty();
            assertThatThrownBy(() -> admin.renewDelegationToken(token.hmac()).expiryTimestamp().get())
                    .hasCauseInstanceOf(DelegationTokenOwnerMismatchException.class);
            assertThatThrownBy(() -> admin.expireDelegationToken(token.hmac()).expiryTimestamp().get())
                    .hasCauseInstanceOf(DelegationTokenOwnerMismatchException.class);
            assertThatThrownBy(() -> admin.createDelegationToken(new CreateDelegationTokenOptions()
                    .owner(new KafkaPrincipal("User", alice))).delegationToken().get())
                    .as("only the administrator creates tokens for another owner")
                    .hasCauseInstanceOf(DelegationTokenAuthorizationException.class);
        }
        MintedToken administrator = MintedToken.mint("token-admin", "admin:cluster");
        try (Admin admin = KafkaClients.admin(listener.port(), administrator.secret())) {
            assertThat(admin.describeDelegationToken(new DescribeDelegationTokenOptions()
                    .owners(List.of(new KafkaPrincipal("User", alice))))
                    .delegationTokens().get()).extracting(t -> t.tokenInfo().tokenId())
                    .containsExactly(token.tokenInfo().tokenId());
            DelegationToken forCarol = admin.createDelegationToken(new CreateDelegationTokenOptions()
                    .owner(new KafkaPrincipal("User", carol))).delegationToken().get();
            assertThat(forCarol.tokenInfo().owner()).isEqualTo(new KafkaPrincipal("User", carol));
            assertThat(forCarol.tokenInfo().tokenRequester())
                    .isEqualTo(new KafkaPrincipal("User", administrator.principal()));
            try (Admin asCarol = scramAdmin(carol)) {
                assertThat(asCarol.describeDelegationToken().delegationTokens().get())
                        .extracting(t -> t.tokenInfo().tokenId()).containsExactly(forCarol.tokenInfo().tokenId());
            }
        }

        try (Admin admin = scramAdmin(bob)) {
            long renewed = admin.renewDelegationToken(token.hmac(), new RenewDelegationTokenOptions()
                    .renewTimePeriodMs(Duration.ofMinutes(30).toMillis())).expiryTimestamp().get();
            assertThat(renewed).isLessThan(max).isGreaterThan(System.currentTimeMillis());
            assertThat(admin.describeDelegationToken(new DescribeDelegationTokenOptions()
                    .owners(List.of(new KafkaPrincipal("User", alice)))).delegationTokens().get())
                    .as("a renewer sees the token").extracting(t -> t.tokenInfo().expiryTimestamp())
                    .containsExactly(renewed);
        }
        try (Admin delegated = Admin.create(withToken("SCRAM-SHA-512", token))) {
            assertThat(delegated.describeCluster().clusterId().get()).as("authenticated as alice").isNotEmpty();
        }

        try (Admin admin = scramAdmin(alice)) {
            admin.expireDelegationToken(token.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
                    .expiryTimestamp().get();
            assertThat(admin.describeDelegationToken().delegationTokens().get()).isEmpty();
            assertThatThrownBy(() -> admin.renewDelegationToken(token.hmac()).expiryTimestamp().get())
                    .hasCauseInstanceOf(DelegationTokenNotFoundException.class);
        }
        try (Admin delegated = Admin.create(withToken("SCRAM-SHA-512", token))) {
            assertThatThrownBy(() -> delegated.describeCluster().clusterId().get())
                    .as("an expired token authenticates no one")
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }
    }

    @Test
    void kafkaDelegationTokensCreatesDescribesAndExpires() throws Exception {
        MintedToken owner = MintedToken.mint("tool-user", "describe:topic:*");
        Path config = Files.createTempFile(Path.of("target"), "delegation-tokens", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), owner.secret()).store(w, null);
        }
        String[] common = {"--bootstrap-server", KafkaClients.bootstrap(listener.port()), "--command-config",
                config.toString()};
        String created = String.join("\n", KafkaToolsClasspath.run(null,
                "org.apache.kafka.tools.DelegationTokenCommand", concat(common, "--create",
                        "--max-life-time-period", "-1", "--renewer-principal", "User:ops")));
        assertThat(created).contains("Created delegation token with tokenId");
        String described = String.join("\n", KafkaToolsClasspath.run(null,
                "org.apache.kafka.tools.DelegationTokenCommand", concat(common, "--describe", "--owner-principal",
                        owner.kafkaPrincipal())));
        assertThat(described).contains("Total number of tokens : 1").contains("User:" + owner.principal())
                .contains("User:ops");

        // The table's first row under its header: the token id, then its HMAC (Base64).
        String[] row = created.lines().dropWhile(l -> !l.startsWith("TOKENID")).skip(1)
                .filter(l -> !l.isBlank()).findFirst().orElseThrow().trim().split("\\s+");
        String expired = String.join("\n", KafkaToolsClasspath.run(null,
                "org.apache.kafka.tools.DelegationTokenCommand", concat(common, "--expire", "--hmac", row[1],
                        "--expiry-time-period", "-1")));
        assertThat(expired).contains("Completed expire operation");
        String after = String.join("\n", KafkaToolsClasspath.run(null,
                "org.apache.kafka.tools.DelegationTokenCommand", concat(common, "--describe", "--owner-principal",
                        owner.kafkaPrincipal())));
        assertThat(after).contains("Total number of tokens : 0");
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
