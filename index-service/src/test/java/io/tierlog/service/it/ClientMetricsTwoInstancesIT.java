package io.tierlog.service.it;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client-metrics subscription (KIP-714) set through instance A is on the shared volume: A is killed with SIGKILL
 * right after the administrator's change is acknowledged; B describes it, and a producer bootstrapped at B gets the
 * subscription from B and pushes its metrics there, which B's {@code /q/metrics} shows under the producer's client
 * id. Logs stay under {@code target/it/client-metrics}. In token mode: subscriptions are the administrator's.
 */
class ClientMetricsTwoInstancesIT {
    static final String CLIENT_ID = "metrics-it-producer";
    static final String BOOTSTRAP = "tierlog_client-metrics-" + Long.toHexString(System.nanoTime());

    private final Path work = Path.of("target", "it", "client-metrics").toAbsolutePath();

    @Test
    void aSubscriptionOutlivesTheInstanceThatTookItAndTheOtherExportsThePushes() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s",
                "-Dtierlog.auth.token-refresh-interval=1s", "-Dtierlog.auth.mode=token",
                "-Dtierlog.auth.bootstrap-token=" + BOOTSTRAP)) {
            ConfigResource subscription = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, "producers");
            try (Admin adminA = Admin.create(sasl(both.kafkaA()))) {
                adminA.createTopics(List.of(new NewTopic("metered", 1, (short) 1))).all().get();
                adminA.incrementalAlterConfigs(Map.of(subscription, List.of(
                        set("metrics", "org.apache.kafka.producer."), set("interval.ms", "500"),
                        set("match", "client_id=" + CLIENT_ID)))).all().get();
            }
            both.a().process().destroyForcibly().waitFor();
            try (Admin adminB = Admin.create(sasl(both.kafkaB()))) {
                // B reads the subscription from the volume at its next refresh; a client that asked before would
                // get none and, as with Kafka, ask again only after the default interval (5 minutes).
                String metrics = "";
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (metrics.isEmpty() && System.nanoTime() < deadline) {
                    metrics = adminB.describeConfigs(List.of(subscription)).all().get().get(subscription)
                            .get("metrics").value();
                }
                assertThat(metrics).as("the subscription, as B describes it").isEqualTo("org.apache.kafka.producer.");
            }

            String scrape = "";
            HttpClient http = HttpClient.newHttpClient();
            Properties p = sasl(both.kafkaB());
            p.put(ProducerConfig.CLIENT_ID_CONFIG, CLIENT_ID);
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "90000");
            p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
            HttpRequest metrics = HttpRequest.newBuilder(URI.create(both.b().base() + "/q/metrics"))
                    .header("Authorization", "Bearer " + BOOTSTRAP).timeout(Duration.ofSeconds(30)).build();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!scrape.contains("client_id=\"" + CLIENT_ID + "\"") && System.nanoTime() < deadline) {
                    producer.send(new ProducerRecord<>("metered", "k", "v")).get();
                    scrape = http.send(metrics, HttpResponse.BodyHandlers.ofString()).body();
                }
            }
            assertThat(scrape.lines().filter(l -> l.startsWith("org_apache_kafka_producer_")
                    && l.contains("client_id=\"" + CLIENT_ID + "\"")).toList())
                    .as("the producer's pushed metrics on the surviving instance's scrape").isNotEmpty();
            assertThat(scrape).contains("tierlog_client_telemetry_pushes_total{error=\"none\"");
        }
    }

    /** SASL/PLAIN with the bootstrap token, as an administrator's tools connect. */
    private static Properties sasl(int port) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"bootstrap\" password=\"" + BOOTSTRAP + "\";");
        return p;
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }
}
