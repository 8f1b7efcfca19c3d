package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.requests.ApiVersionsRequest;
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
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener over TLS (SASL_SSL): a self-signed certificate made with the JDK's keytool for this test, kafka-clients
 * trusting exactly that certificate, SASL PLAIN with a Tierlog token inside the TLS connection; a plaintext client
 * gets no Kafka answer. The service reads the keystore from base64 text ({@link TlsTokenMode}).
 */
@QuarkusTest
@TestProfile(KafkaTlsTest.TlsTokenMode.class)
class KafkaTlsTest {
    static final String TOKEN = "tierlog_kafka-tls-" + UUID.randomUUID().toString().replace("-", "");
    static final String PASSWORD = "pw-" + UUID.randomUUID();
    /** Made once per JVM, before the service starts (the profile's config names it). */
    static final Path DIR = keystore();

    /**
     * The keystore as base64 text ({@code tierlog.kafka.tls-keystore-base64}), as a deployment passes it from a secret
     * in the environment, and no keystore file ({@link KafkaMutualTlsTest} configures one by path).
     */
    public static class TlsTokenMode implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                // Wrapped at 76 characters, as `base64` prints it by default: the service takes it either way.
                String keystore = Base64.getMimeEncoder().encodeToString(Files.readAllBytes(DIR.resolve("server.p12")));
                return Map.of("tierlog.auth.mode", "token", "tierlog.auth.bootstrap-token", TOKEN,
                        "tierlog.kafka.tls-keystore-base64", keystore,
                        "tierlog.kafka.tls-keystore-password", PASSWORD);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static Path keystore() {
        try {
            Path dir = Files.createTempDirectory("kafka-tls");
            String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            run(keytool, "-genkeypair", "-alias", "tierlog", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                    "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12",
                    "-keystore", dir.resolve("server.p12").toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
            run(keytool, "-exportcert", "-rfc", "-alias", "tierlog", "-keystore", dir.resolve("server.p12").toString(),
                    "-storepass", PASSWORD, "-file", dir.resolve("server.pem").toString());
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Inject
    KafkaListener listener;

    private Properties saslSsl() throws IOException {
        Properties p = new Properties();
        p.put("bootstrap.servers", KafkaClients.bootstrap(listener.port()));
        p.put("security.protocol", "SASL_SSL");
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.certificates", Files.readString(DIR.resolve("server.pem")));
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"any\" password=\"" + TOKEN + "\";");
        return p;
    }

    @Test
    void saslSslClientsProduceAndConsume() throws Exception {
        String topic = KafkaListenerTest.unique("tls");
        try (Admin admin = Admin.create(saslSsl())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties pp = saslSsl();
        pp.put("acks", "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 50; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
            }
            producer.flush();
        }
        Properties cp = saslSsl();
        cp.put("auto.offset.reset", "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Instant deadline = Instant.now().plusSeconds(30);
            while (values.size() < 50 && Instant.now().isBefore(deadline)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add("v" + i);
        }
        assertThat(values).isEqualTo(expected);
    }

    @Test
    void aPlaintextClientGetsNoKafkaAnswer() throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", listener.port())) {
            s.setSoTimeout(20_000);
            // An ApiVersions frame where a TLS ClientHello is expected: the handshake fails and the connection ends.
            var request = new ApiVersionsRequest.Builder().build((short) 3);
            var body = request.serializeWithHeader(new org.apache.kafka.common.requests.RequestHeader(
                    request.apiKey(), (short) 3, "plain", 1));
            var out = new java.io.DataOutputStream(s.getOutputStream());
            out.writeInt(body.remaining());
            out.write(body.array(), body.arrayOffset() + body.position(), body.remaining());
            out.flush();
            byte[] answer;
            try {
                answer = s.getInputStream().readAllBytes();
            } catch (java.net.SocketException reset) {
                answer = new byte[0];
            }
            // Nothing, or a TLS alert record (content type 21); a Kafka answer would start with its size, 0x00.
            assertThat(answer.length == 0 || answer[0] == 21).as("answer starts %s", answer.length == 0 ? "empty"
                    : Byte.toString(answer[0])).isTrue();
        }
    }
}
