package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Mutual TLS on the listener (token mode, {@code tierlog.kafka.tls-client-auth=required}): a test CA made with the
 * JDK's keytool signs the client certificates. A certificate whose subject has scopes in
 * {@code tierlog.kafka.tls-client-scopes} is that principal without SASL, held to those scopes; one the CA signed
 * whose subject has none authenticates nothing, so its client must use SASL as before; one the CA did not sign, or
 * none at all, fails the handshake.
 */
@QuarkusTest
@TestProfile(KafkaMutualTlsTest.MutualTls.class)
class KafkaMutualTlsTest {
    static final String TOKEN = "tierlog_kafka-mtls-" + UUID.randomUUID().toString().replace("-", "");
    static final String PASSWORD = "pw-" + UUID.randomUUID();
    /** Made once per JVM, before the service starts (the profile's config names it). */
    static final Path DIR = certificates();

    public static class MutualTls implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("tierlog.auth.mode", "token", "tierlog.auth.bootstrap-token", TOKEN,
                    "tierlog.kafka.tls-keystore", DIR.resolve("server.p12").toString(),
                    "tierlog.kafka.tls-keystore-password", PASSWORD,
                    "tierlog.kafka.tls-client-auth", "required",
                    "tierlog.kafka.tls-client-ca", DIR.resolve("ca.pem").toString(),
                    "tierlog.kafka.tls-client-scopes.\"CN=orders-app,O=Tierlog Test\"",
                    "produce:topic:mtls-* fetch:topic:mtls-*");
        }
    }

    @Inject
    KafkaListener listener;

    @Test
    void aKnownCertificateIsItsPrincipalWithoutSasl() throws Exception {
        String topic = KafkaListenerTest.unique("mtls");
        createTopic(topic);
        Properties pp = ssl("orders-app.p12");
        pp.put("acks", "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(ssl("orders-app.p12"),
                new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Instant deadline = Instant.now().plusSeconds(30);
            while (values.size() < 20 && Instant.now().isBefore(deadline)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        assertThat(values).hasSize(20).startsWith("v0").endsWith("v19");

        // Held to its scopes: produce and fetch on mtls-*, nothing on another topic.
        String other = KafkaListenerTest.unique("elsewhere");
        createTopic(other);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(),
                new StringSerializer())) {
            Throwable refused = catchThrowable(() -> producer.send(new ProducerRecord<>(other, 0, "k", "v"))
                    .get(30, TimeUnit.SECONDS));
            assertThat(refused).hasCauseInstanceOf(TopicAuthorizationException.class);
        }
    }

    @Test
    void aSignedCertificateWithoutScopesAuthenticatesNothingAndSaslStillWorks() throws Exception {
        String topic = KafkaListenerTest.unique("mtls-sasl");
        createTopic(topic);
        Properties plain = ssl("stranger.p12");
        plain.put("default.api.timeout.ms", "5000");
        plain.put("request.timeout.ms", "4000");
        try (Admin admin = Admin.create(plain)) {
            assertThat(catchThrowable(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS)))
                    .as("no SASL, no known certificate: no answer").isNotNull();
        }
        Properties sasl = ssl("stranger.p12");
        sasl.put("security.protocol", "SASL_SSL");
        sasl.put("sasl.mechanism", "PLAIN");
        sasl.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"any\" password=\"" + TOKEN + "\";");
        try (Admin admin = Admin.create(sasl)) {
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains(topic);
        }
    }

    @Test
    void aCertificateTheCaDidNotSignOrNoneFailsTheHandshake() throws Exception {
        for (String keystore : new String[]{"rogue.p12", null}) {
            Properties p = keystore == null ? ssl(null) : ssl(keystore);
            p.put("default.api.timeout.ms", "10000");
            p.put("request.timeout.ms", "5000");
            try (Admin admin = Admin.create(p)) {
                Throwable failed = catchThrowable(() -> admin.listTopics().names().get(30, TimeUnit.SECONDS));
                assertThat(failed).as("keystore %s", keystore).hasCauseInstanceOf(SslAuthenticationException.class);
            }
        }
    }

    private Properties ssl(String keystore) throws IOException {
        Properties p = new Properties();
        p.put("bootstrap.servers", KafkaClients.bootstrap(listener.port()));
        p.put("security.protocol", "SSL");
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.certificates", Files.readString(DIR.resolve("server.pem")));
        if (keystore != null) {
            p.put("ssl.keystore.type", "PKCS12");
            p.put("ssl.keystore.location", DIR.resolve(keystore).toString());
            p.put("ssl.keystore.password", PASSWORD);
            p.put("ssl.key.password", PASSWORD);
        }
        return p;
    }

    private static void createTopic(String topic) {
        given().header("Authorization", "Bearer " + TOKEN).contentType("application/json")
                .body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
    }

    /** A CA, the server's self-signed certificate, two client certificates the CA signed and one it did not. */
    private static Path certificates() {
        try {
            Path dir = Files.createTempDirectory("kafka-mtls");
            keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                    "-dname", "CN=Tierlog Test CA", "-ext", "bc:c", "-storetype", "PKCS12",
                    "-keystore", dir.resolve("ca.p12").toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
            keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", dir.resolve("ca.p12").toString(),
                    "-storepass", PASSWORD, "-file", dir.resolve("ca.pem").toString());
            keytool("-genkeypair", "-alias", "tierlog", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                    "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12",
                    "-keystore", dir.resolve("server.p12").toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
            keytool("-exportcert", "-rfc", "-alias", "tierlog", "-keystore", dir.resolve("server.p12").toString(),
                    "-storepass", PASSWORD, "-file", dir.resolve("server.pem").toString());
            signedClient(dir, "orders-app.p12", "CN=orders-app, O=Tierlog Test");
            signedClient(dir, "stranger.p12", "CN=stranger, O=Tierlog Test");
            // Same subject as the known client, but self-signed: the CA never vouched for it.
            keytool("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                    "-dname", "CN=orders-app, O=Tierlog Test", "-storetype", "PKCS12",
                    "-keystore", dir.resolve("rogue.p12").toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void signedClient(Path dir, String keystore, String subject) throws IOException {
        String store = dir.resolve(keystore).toString();
        String csr = dir.resolve(keystore + ".csr").toString();
        String crt = dir.resolve(keystore + ".crt").toString();
        keytool("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", subject, "-storetype", "PKCS12", "-keystore", store, "-storepass", PASSWORD,
                "-keypass", PASSWORD);
        keytool("-certreq", "-alias", "client", "-keystore", store, "-storepass", PASSWORD, "-file", csr);
        keytool("-gencert", "-alias", "ca", "-keystore", dir.resolve("ca.p12").toString(), "-storepass", PASSWORD,
                "-infile", csr, "-outfile", crt, "-rfc", "-validity", "2");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", dir.resolve("ca.pem").toString(),
                "-keystore", store, "-storepass", PASSWORD);
        keytool("-importcert", "-alias", "client", "-file", crt, "-keystore", store, "-storepass", PASSWORD);
    }

    private static void keytool(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // 15 short keytool JVMs: C1 only, and EC keys (made at once, where RSA 2048 takes a while), keep them quick.
        cmd.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool " + args[0] + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
