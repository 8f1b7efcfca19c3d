package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client-metrics subscription (KIP-714) set through instance A is on the shared volume: A is killed with SIGKILL
 * right after the administrator's change is acknowledged, and a producer bootstrapped at B gets the subscription from
 * B and pushes its metrics there, which B's {@code /q/metrics} shows under the producer's client id. Logs stay under
 * {@code target/it/client-metrics}.
 */
class ClientMetricsTwoInstancesIT {
    static final String CLIENT_ID = "metrics-it-producer";

    private final Path work = Path.of("target", "it", "client-metrics").toAbsolutePath();

    @Test
    void aSubscriptionOutlivesTheInstanceThatTookItAndTheOtherExportsThePushes() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s",
                "-Dtierlog.auth.token-refresh-interval=1s")) {
            ConfigResource subscription = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, "producers");
            try (Admin adminA = KafkaInstances.admin(both.kafkaA())) {
                adminA.createTopics(List.of(new NewTopic("metered", 1, (short) 1))).all().get();
                adminA.incrementalAlterConfigs(Map.of(subscription, List.of(
                        set("metrics", "org.apache.kafka.producer."), set("interval.ms", "500"),
                        set("match", "client_id=" + CLIENT_ID)))).all().get();
            }
            both.a().process().destroyForcibly().waitFor();

            String scrape = "";
            HttpClient http = HttpClient.newHttpClient();
            try (KafkaProducer<String, String> producer = KafkaInstances.producer(both.kafkaB(), CLIENT_ID)) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!scrape.contains("client_id=\"" + CLIENT_ID + "\"") && System.nanoTime() < deadline) {
                    producer.send(new ProducerRecord<>("metered", "k", "v")).get();
                    scrape = both.b().send(http, "GET", "/q/metrics", null).body();
                }
            }
            assertThat(scrape.lines().filter(l -> l.startsWith("org_apache_kafka_producer_")
                    && l.contains("client_id=\"" + CLIENT_ID + "\"")).toList())
                    .as("the producer's pushed metrics on the surviving instance's scrape").isNotEmpty();
            assertThat(scrape).contains("tierlog_client_telemetry_pushes_total{error=\"none\"");
        }
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }
}
