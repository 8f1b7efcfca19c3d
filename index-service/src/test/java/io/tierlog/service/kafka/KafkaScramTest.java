package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import io.tierlog.service.security.AccessControl;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.DuplicateResourceException;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnacceptableCredentialException;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * SCRAM users on the Kafka listener, in token mode, with kafka-clients 4.4.0 and kafka-configs: the administrator
 * creates a user's SCRAM-SHA-256 and -512 credentials with Admin (KIP-554), the user authenticates with either, can do
 * only what ACLs on {@code User:<name>} grant it, and is refused once its credential is deleted; a wrong password and a
 * user nobody created are refused alike, and the first message does not tell them apart; alterations Kafka refuses
 * are refused per user and change nothing of that user's; only the administrator sees or sets credentials.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaScramTest {
    @Inject
    KafkaListener listener;
    @Inject
    AccessControl access;

    private Admin administrator() {
        return KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP);
    }

    private static String user(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static UserScramCredentialUpsertion upsert(String user, ScramMechanism mechanism, int iterations,
                                                       String password) {
        return new UserScramCredentialUpsertion(user, new ScramCredentialInfo(mechanism, iterations), password);
    }

    private KafkaProducer<String, String> producer(String mechanism, String user, String password) {
        Properties p = KafkaClients.scram(listener.port(), mechanism, user, password);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static AclBinding allow(String kafkaPrincipal, ResourceType type, String name, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry(kafkaPrincipal, "*", op, AclPermissionType.ALLOW));
    }

    @Test
    void aScramUserAuthenticatesWithEitherMechanismAndDoesWhatItsAclsAllow() throws Exception {
        String alice = user("alice");
        String topic = KafkaListenerTest.unique("scram");
        try (Admin admin = administrator()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.alterUserScramCredentials(List.of(upsert(alice, ScramMechanism.SCRAM_SHA_256, 4096, "alice-pw"),
                    upsert(alice, ScramMechanism.SCRAM_SHA_512, 8192, "alice-pw"))).all().get();
            UserScramCredentialsDescription described = admin.describeUserScramCredentials(List.of(alice))
                    .description(alice).get();
            assertThat(described.credentialInfos()).extracting(ScramCredentialInfo::mechanism,
                    ScramCredentialInfo::iterations).containsExactlyInAnyOrder(
                    org.assertj.core.groups.Tuple.tuple(ScramMechanism.SCRAM_SHA_256, 4096),
                    org.assertj.core.groups.Tuple.tuple(ScramMechanism.SCRAM_SHA_512, 8192));
        }

        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", alice, "alice-pw")) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "k", "no acl yet")).get())
                    .as("authenticated, but a SCRAM user has no scopes of its own")
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }

        try (Admin admin = administrator()) {
            admin.createAcls(List.of(allow("User:" + alice, ResourceType.TOPIC, topic, AclOperation.WRITE),
                    allow("User:" + alice, ResourceType.TOPIC, topic, AclOperation.READ))).all().get();
            assertThat(admin.describeAcls(AclBindingFilter.ANY).values().get())
                    .as("listed as Kafka names a SCRAM user")
                    .anyMatch(acl -> acl.entry().principal().equals("User:" + alice)
                            && acl.pattern().name().equals(topic));
        }
        assertThat(access.grants().list()).anyMatch(g -> g.principal().equals("scram:" + alice));

        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", alice, "alice-pw")) {
            assertThat(producer.send(new ProducerRecord<>(topic, "k", "v1")).get().offset()).isEqualTo(0);
        }
        assertThat(KafkaClients.readFromStart(KafkaClients.scram(listener.port(), "SCRAM-SHA-512", alice, "alice-pw"),
                topic, 0, 1)).extracting(ConsumerRecord::value).containsExactly("v1");
    }

    @Test
    void aWrongPasswordAndAnUnknownUserAreRefusedAlike() throws Exception {
        String bob = user("bob");
        try (Admin admin = administrator()) {
            admin.alterUserScramCredentials(List.of(upsert(bob, ScramMechanism.SCRAM_SHA_256, 4096, "bob-pw")))
                    .all().get();
        }
        List<String> messages = new ArrayList<>();
        for (String[] login : List.of(new String[]{bob, "not-bobs"}, new String[]{user("ghost"), "any"},
                new String[]{bob, "bob-pw", "SCRAM-SHA-512"})) {
            String mechanism = login.length > 2 ? login[2] : "SCRAM-SHA-256";
            try (KafkaProducer<String, String> producer = producer(mechanism, login[0], login[1])) {
                Throwable refused = org.assertj.core.api.Assertions.catchThrowable(
                        () -> producer.partitionsFor("anything"));
                assertThat(refused).as("%s with %s", login[0], mechanism)
                        .isInstanceOf(SaslAuthenticationException.class);
                messages.add(refused.getMessage().replace(mechanism, "M"));
            }
        }
        assertThat(messages).as("one answer: no oracle for who exists or which mechanism they have")
                .containsOnly(messages.get(0));

        // Over the wire: the first message of a user nobody created is answered as a real user's (a salt and the
        // iterations), the same salt each time, and only the proof fails.
        String ghost = user("ghost");
        String first = serverFirst(ghost, "n,,n=" + ghost + ",r=abc");
        assertThat(first).startsWith("r=abc").contains(",s=").endsWith(",i=4096");
        String again = serverFirst(ghost, "n,,n=" + ghost + ",r=xyz");
        assertThat(again.substring(again.indexOf(",s="))).isEqualTo(first.substring(first.indexOf(",s=")));
        assertThat(serverFirst(bob, "n,,n=" + bob + ",r=abc")).startsWith("r=abc").contains(",s=");
    }

    /** SaslHandshake SCRAM-SHA-256 and the client's first message on a raw connection: the server's first. */
    private String serverFirst(String user, String clientFirst) throws Exception {
        try (RawKafka raw = new RawKafka(listener.port())) {
            SaslHandshakeResponse handshake = raw.call(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData()
                    .setMechanism("SCRAM-SHA-256")), (short) 1);
            assertThat(handshake.data().errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(handshake.data().mechanisms()).contains("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN");
            SaslAuthenticateResponse first = raw.call(new SaslAuthenticateRequest.Builder(
                    new SaslAuthenticateRequestData().setAuthBytes(clientFirst.getBytes(StandardCharsets.UTF_8))),
                    ApiKeys.SASL_AUTHENTICATE);
            assertThat(first.data().errorCode()).as("%s's first message", user).isEqualTo(Errors.NONE.code());
            String serverFirst = new String(first.data().authBytes(), StandardCharsets.UTF_8);
            SaslAuthenticateResponse proof = raw.call(new SaslAuthenticateRequest.Builder(
                    new SaslAuthenticateRequestData().setAuthBytes(("c=biws," + serverFirst.substring(0,
                            serverFirst.indexOf(',')) + ",p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                            .getBytes(StandardCharsets.UTF_8))), ApiKeys.SASL_AUTHENTICATE);
            assertThat(proof.data().errorCode()).as("a made-up proof").isEqualTo(
                    Errors.SASL_AUTHENTICATION_FAILED.code());
            return serverFirst;
        }
    }

    @Test
    void aDeletedCredentialNoLongerAuthenticatesAndTheOtherMechanismStays() throws Exception {
        String carol = user("carol");
        String topic = KafkaListenerTest.unique("scram-del");
        try (Admin admin = administrator()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.alterUserScramCredentials(List.of(upsert(carol, ScramMechanism.SCRAM_SHA_256, 4096, "pw"),
                    upsert(carol, ScramMechanism.SCRAM_SHA_512, 4096, "pw"))).all().get();
            admin.createAcls(List.of(allow("User:" + carol, ResourceType.TOPIC, topic, AclOperation.WRITE)))
                    .all().get();
        }
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", carol, "pw")) {
            producer.send(new ProducerRecord<>(topic, "k", "before")).get();
        }
        try (Admin admin = administrator()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(carol,
                    ScramMechanism.SCRAM_SHA_256))).all().get();
            assertThat(admin.describeUserScramCredentials(List.of(carol)).description(carol).get()
                    .credentialInfos()).extracting(ScramCredentialInfo::mechanism)
                    .containsExactly(ScramMechanism.SCRAM_SHA_512);
        }
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", carol, "pw")) {
            assertThatThrownBy(() -> producer.partitionsFor(topic)).isInstanceOf(SaslAuthenticationException.class);
        }
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-512", carol, "pw")) {
            producer.send(new ProducerRecord<>(topic, "k", "after")).get();
        }
        try (Admin admin = administrator()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(carol,
                    ScramMechanism.SCRAM_SHA_512))).all().get();
            assertThatThrownBy(() -> admin.describeUserScramCredentials(List.of(carol)).description(carol).get())
                    .hasCauseInstanceOf(ResourceNotFoundException.class);
            assertThat(admin.describeUserScramCredentials().users().get()).doesNotContain(carol);
        }
    }

    @Test
    void whatKafkaRefusesIsRefusedPerUserAndChangesNothingOfThatUsers() throws Exception {
        String dave = user("dave");
        String erin = user("erin");
        try (Admin admin = administrator()) {
            admin.alterUserScramCredentials(List.of(upsert(dave, ScramMechanism.SCRAM_SHA_256, 4096, "old")))
                    .all().get();
            List<UserScramCredentialAlteration> alterations = List.of(
                    // dave: a good change beside a refused one; neither applies.
                    upsert(dave, ScramMechanism.SCRAM_SHA_256, 8192, "new"),
                    upsert(dave, ScramMechanism.SCRAM_SHA_512, 1000, "new"),
                    // erin: the same credential twice.
                    upsert(erin, ScramMechanism.SCRAM_SHA_256, 4096, "a"),
                    upsert(erin, ScramMechanism.SCRAM_SHA_256, 4096, "b"),
                    upsert("has:colon", ScramMechanism.SCRAM_SHA_256, 4096, "x"),
                    upsert("bootstrap", ScramMechanism.SCRAM_SHA_256, 4096, "x"),
                    new UserScramCredentialDeletion(user("nobody"), ScramMechanism.SCRAM_SHA_256));
            Map<String, org.apache.kafka.common.KafkaFuture<Void>> results =
                    admin.alterUserScramCredentials(alterations).values();
            assertThatThrownBy(() -> results.get(dave).get()).hasCauseInstanceOf(
                    UnacceptableCredentialException.class);
            assertThatThrownBy(() -> results.get(erin).get()).hasCauseInstanceOf(DuplicateResourceException.class);
            assertThatThrownBy(() -> results.get("has:colon").get()).hasCauseInstanceOf(
                    UnacceptableCredentialException.class);
            assertThatThrownBy(() -> results.get("bootstrap").get()).as("the bootstrap token's principal name")
                    .hasCauseInstanceOf(UnacceptableCredentialException.class);
            assertThat(results).hasSize(5);
            assertThat(admin.describeUserScramCredentials(List.of(dave)).description(dave).get().credentialInfos())
                    .as("dave's credential as it was").extracting(ScramCredentialInfo::iterations)
                    .containsExactly(4096);
            assertThat(admin.describeUserScramCredentials().users().get()).doesNotContain(erin, "has:colon",
                    "bootstrap");
            // A describe naming dave twice: refused for dave, answered for the other user named.
            var twice = admin.describeUserScramCredentials(List.of(dave, dave, erin));
            assertThatThrownBy(() -> twice.description(dave).get()).hasCauseInstanceOf(
                    DuplicateResourceException.class);
            assertThatThrownBy(() -> twice.description(erin).get()).hasCauseInstanceOf(
                    ResourceNotFoundException.class);
        }
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-256", dave, "new")) {
            assertThatThrownBy(() -> producer.partitionsFor("anything")).isInstanceOf(
                    SaslAuthenticationException.class);
        }
    }

    @Test
    void onlyTheAdministratorSeesOrSetsCredentials() throws Exception {
        MintedToken token = MintedToken.mint("scram-not-admin", "produce:topic:*");
        String frank = user("frank");
        try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
            assertThatThrownBy(() -> admin.alterUserScramCredentials(List.of(
                    upsert(frank, ScramMechanism.SCRAM_SHA_256, 4096, "pw"))).all().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> admin.describeUserScramCredentials().all().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
        }
        assertThat(access.scramCredentials().of(frank)).isEmpty();
    }

    @Test
    void kafkaConfigsCreatesAUserThatThenAuthenticates() throws Exception {
        String grace = user("grace");
        Path config = Files.createTempFile(Path.of("target"), "scram-tool", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP).store(w, null);
        }
        String bootstrap = KafkaClients.bootstrap(listener.port());
        KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", bootstrap,
                "--command-config", config.toString(), "--alter", "--add-config",
                "SCRAM-SHA-512=[iterations=4096,password=grace-pw]", "--entity-type", "users", "--entity-name", grace);
        String described = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand",
                "--bootstrap-server", bootstrap, "--command-config", config.toString(), "--describe",
                "--entity-type", "users", "--entity-name", grace));
        assertThat(described).contains("SCRAM-SHA-512=iterations=4096");
        try (KafkaProducer<String, String> producer = producer("SCRAM-SHA-512", grace, "grace-pw")) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(KafkaListenerTest.unique("t"), "v")).get())
                    .as("authenticated; no ACL").hasCauseInstanceOf(TopicAuthorizationException.class);
        }
    }

    /**
     * A whole exchange by hand (RFC 5802's client side, computed here with the JDK): the proof over the server's nonce
     * authenticates the connection, which is then served; the same proof over the client nonce repeated before the
     * server's, as librdkafka before 2.6.1 sends it (its PR 4895), is refused, as Kafka 4 refuses it since
     * CVE-2024-56128 (RFC 5802: the nonces must be the same). Debian 12's kcat (librdkafka 2.0.2) is refused this way
     * by Kafka 4.4.0 as well.
     */
    @Test
    void theProofMustCarryTheServersNonceExactly() throws Exception {
        String ivy = user("ivy");
        try (Admin admin = administrator()) {
            admin.alterUserScramCredentials(List.of(upsert(ivy, ScramMechanism.SCRAM_SHA_256, 4096, "ivy-pw")))
                    .all().get();
        }
        try (RawKafka raw = new RawKafka(listener.port())) {
            assertThat(scramByHand(raw, ivy, "ivy-pw", false).data().errorCode()).isEqualTo(Errors.NONE.code());
            org.apache.kafka.common.requests.MetadataResponse metadata = raw.call(
                    new org.apache.kafka.common.requests.MetadataRequest.Builder(List.of(), false),
                    ApiKeys.METADATA);
            assertThat(metadata.brokers()).as("served once authenticated").isNotEmpty();
        }
        try (RawKafka raw = new RawKafka(listener.port())) {
            assertThat(scramByHand(raw, ivy, "ivy-pw", true).data().errorCode())
                    .isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
        }
    }

    /** SaslHandshake SCRAM-SHA-256 and both messages with a proof from {@code password}; the final answer. */
    private static SaslAuthenticateResponse scramByHand(RawKafka raw, String user, String password,
                                                        boolean repeatClientNonce) throws Exception {
        raw.call(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256")),
                (short) 1);
        String clientNonce = "tierlog-test-nonce";
        String clientFirstBare = "n=" + user + ",r=" + clientNonce;
        SaslAuthenticateResponse first = raw.call(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData()
                .setAuthBytes(("n,," + clientFirstBare).getBytes(StandardCharsets.UTF_8))), ApiKeys.SASL_AUTHENTICATE);
        String serverFirst = new String(first.data().authBytes(), StandardCharsets.UTF_8);
        Map<String, String> attributes = new java.util.HashMap<>();
        for (String kv : serverFirst.split(",")) {
            attributes.put(kv.substring(0, 1), kv.substring(2));
        }
        String nonce = (repeatClientNonce ? clientNonce : "") + attributes.get("r");
        byte[] salted = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(
                new javax.crypto.spec.PBEKeySpec(password.toCharArray(), java.util.Base64.getDecoder()
                        .decode(attributes.get("s")), Integer.parseInt(attributes.get("i")), 256)).getEncoded();
        byte[] clientKey = hmac(salted, "Client Key");
        byte[] storedKey = java.security.MessageDigest.getInstance("SHA-256").digest(clientKey);
        String withoutProof = "c=biws,r=" + nonce;
        byte[] signature = hmac(storedKey, clientFirstBare + "," + serverFirst + "," + withoutProof);
        byte[] proof = new byte[clientKey.length];
        for (int i = 0; i < proof.length; i++) {
            proof[i] = (byte) (clientKey[i] ^ signature[i]);
        }
        String clientFinal = withoutProof + ",p=" + java.util.Base64.getEncoder().encodeToString(proof);
        return raw.call(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData()
                .setAuthBytes(clientFinal.getBytes(StandardCharsets.UTF_8))), ApiKeys.SASL_AUTHENTICATE);
    }

    private static byte[] hmac(byte[] key, String message) throws Exception {
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    }
}
