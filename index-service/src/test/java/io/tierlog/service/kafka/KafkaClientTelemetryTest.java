package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Client metrics (KIP-714) over the listener with kafka-clients 4.4.0: an administrator's subscription through
 * Admin's config APIs on CLIENT_METRICS resources, and a producer pushing what it names, which {@code /q/metrics} then
 * shows tagged with the producer's client id. In token mode: subscriptions are the administrator's.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaClientTelemetryTest {
    @Inject
    KafkaListener listener;

    private static AlterConfigOp op(String key, String value, AlterConfigOp.OpType type) {
        return new AlterConfigOp(new ConfigEntry(key, value), type);
    }

    private static Set<String> subscriptions(Admin admin) throws Exception {
        Set<String> names = new java.util.HashSet<>();
        admin.listConfigResources(Set.of(ConfigResource.Type.CLIENT_METRICS), new ListConfigResourcesOptions())
                .all().get().forEach(r -> names.add(r.name()));
        return names;
    }

    @Test
    void aSubscriptionIsSetDescribedListedCheckedAndRemovedWithItsLastKey() throws Exception {
        String name = KafkaListenerTest.unique("cm");
        ConfigResource r = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, name);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP);
             Admin producerOnly = KafkaClients.admin(listener.port(),
                     MintedToken.mint("client-metrics", "produce:topic:*").secret())) {
            assertThatThrownBy(() -> producerOnly.incrementalAlterConfigs(Map.of(r, List.of(
                    op("metrics", "*", AlterConfigOp.OpType.SET)))).all().get())
                    .cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> producerOnly.describeConfigs(List.of(r)).all().get())
                    .cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> subscriptions(producerOnly)).cause()
                    .isInstanceOf(ClusterAuthorizationException.class);

            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    op("metrics", "org.apache.kafka.producer.", AlterConfigOp.OpType.SET),
                    op("interval.ms", "60000", AlterConfigOp.OpType.SET)))).all().get();
            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    op("metrics", "org.apache.kafka.consumer.", AlterConfigOp.OpType.APPEND)))).all().get();
            Config described = admin.describeConfigs(List.of(r)).all().get().get(r);
            assertThat(described.get("metrics").value())
                    .isEqualTo("org.apache.kafka.producer.,org.apache.kafka.consumer.");
            assertThat(described.get("interval.ms").value()).isEqualTo("60000");
            assertThat(described.get("interval.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_CLIENT_METRICS_CONFIG);
            assertThat(described.get("match").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            assertThat(subscriptions(admin)).contains(name);

            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(r, List.of(
                    op("interval.ms", "50", AlterConfigOp.OpType.SET)))).all().get())
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("interval.ms");
            assertThat(admin.describeConfigs(List.of(r)).all().get().get(r).get("interval.ms").value())
                    .as("a refused change changes nothing").isEqualTo("60000");

            admin.incrementalAlterConfigs(Map.of(r, List.of(op("metrics", "", AlterConfigOp.OpType.DELETE),
                    op("interval.ms", "", AlterConfigOp.OpType.DELETE)))).all().get();
            assertThat(subscriptions(admin)).doesNotContain(name);
        }
    }

    @Test
    void aProducersPushedMetricsAppearOnTheScrapeTaggedWithItsClientId() throws Exception {
        String name = KafkaListenerTest.unique("cm");
        String clientId = KafkaListenerTest.unique("pushing-producer");
        ConfigResource r = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, name);
        String topic = KafkaListenerTest.unique("telemetry");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    op("metrics", "org.apache.kafka.producer.", AlterConfigOp.OpType.SET),
                    op("interval.ms", "500", AlterConfigOp.OpType.SET),
                    op("match", "client_id=" + clientId, AlterConfigOp.OpType.SET)))).all().get();
            Properties p = KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                String scrape = "";
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (!scrape.contains("client_id=\"" + clientId + "\"") && System.nanoTime() < deadline) {
                    producer.send(new ProducerRecord<>(topic, "k", "v")).get();
                    scrape = given().header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP)
                            .get("/q/metrics").then().statusCode(200).extract().asString();
                }
                assertThat(scrape.lines().filter(l -> l.startsWith("org_apache_kafka_producer_")
                        && l.contains("client_id=\"" + clientId + "\"")).toList())
                        .as("the producer's metrics, pushed every 500 ms").isNotEmpty()
                        .anySatisfy(l -> assertThat(l).contains("client_software_name=\"apache-kafka-java\""));
            } finally {
                admin.incrementalAlterConfigs(Map.of(r, List.of(op("metrics", "", AlterConfigOp.OpType.DELETE),
                        op("interval.ms", "", AlterConfigOp.OpType.DELETE),
                        op("match", "", AlterConfigOp.OpType.DELETE)))).all().get();
            }
        }
    }

    /** kafka-client-metrics (ClientMetricsCommand, kafka-tools 4.4.0): alter, list and describe a subscription. */
    @Test
    void kafkaClientMetricsAltersListsAndDescribes() throws Exception {
        String name = KafkaListenerTest.unique("cm-tool");
        Path config = Files.createTempFile(Path.of("target"), "client-metrics-tool", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP).store(w, null);
        }
        String[] tool = {"--bootstrap-server", KafkaClients.bootstrap(listener.port()), "--command-config",
                config.toString()};
        run(tool, "--alter", "--name", name, "--metrics", "org.apache.kafka.consumer.", "--interval", "2000",
                "--match", "client_software_name=apache-kafka-java");
        assertThat(run(tool, "--list")).contains(name);
        assertThat(String.join("\n", run(tool, "--describe", "--name", name)))
                .contains("org.apache.kafka.consumer.").contains("2000")
                .contains("client_software_name=apache-kafka-java");
        run(tool, "--delete", "--name", name);
        assertThat(run(tool, "--list")).doesNotContain(name);
    }

    /**
     * A subscription matches on the software a client names in ApiVersions (KIP-511); a name Kafka would refuse is
     * INVALID_REQUEST, as Kafka answers it.
     */
    @Test
    void aSubscriptionMatchesTheSoftwareAClientNamedAndAnInvalidNameIsRefused() throws Exception {
        String name = KafkaListenerTest.unique("cm-software");
        ConfigResource r = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, name);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP);
             RawKafka raw = new RawKafka(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    op("metrics", "org.apache.kafka.custom.", AlterConfigOp.OpType.SET),
                    op("match", "client_software_name=raw-client,client_software_version=1\\..*",
                            AlterConfigOp.OpType.SET)))).all().get();
            ApiVersionsResponse refused = raw.call(new ApiVersionsRequest(new ApiVersionsRequestData()
                    .setClientSoftwareName("raw client!").setClientSoftwareVersion("1.0"), (short) 3));
            assertThat(Errors.forCode(refused.data().errorCode())).isEqualTo(Errors.INVALID_REQUEST);
            ApiVersionsResponse named = raw.call(new ApiVersionsRequest(new ApiVersionsRequestData()
                    .setClientSoftwareName("raw-client").setClientSoftwareVersion("1.2"), (short) 3));
            assertThat(Errors.forCode(named.data().errorCode())).isEqualTo(Errors.NONE);
            RawKafka.authenticated(raw, TokenModeProfile.BOOTSTRAP);
            GetTelemetrySubscriptionsResponse s = raw.call(new GetTelemetrySubscriptionsRequest.Builder(
                    new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), true), (short) 0);
            assertThat(s.data().requestedMetrics()).containsExactly("org.apache.kafka.custom.");
            assertThat(s.data().clientInstanceId()).isNotEqualTo(Uuid.ZERO_UUID);
            assertThat(s.data().deltaTemporality()).isTrue();
        } finally {
            try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
                admin.incrementalAlterConfigs(Map.of(r, List.of(op("metrics", "", AlterConfigOp.OpType.DELETE),
                        op("match", "", AlterConfigOp.OpType.DELETE)))).all().get();
            }
        }
    }

    private static List<String> run(String[] common, String... args) throws Exception {
        List<String> all = new java.util.ArrayList<>(List.of(common));
        all.addAll(List.of(args));
        return KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ClientMetricsCommand", all.toArray(String[]::new));
    }
}
