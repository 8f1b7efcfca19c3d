package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Broker loggers with kafka-clients 4.4.0 and kafka-tools' {@code kafka-configs --entity-type broker-loggers}: this
 * instance's log levels are listed and changed while it runs (the change seen by the logger itself, in this JVM),
 * removed back to the parent's level, and bad changes refused naming what is wrong, changing nothing. In token mode:
 * both need {@code admin:cluster}.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaBrokerLoggersTest {
    /** A category of the service's own, with no level of its own in the test configuration. */
    static final String CATEGORY = "io.tierlog.service.kafka.KafkaBrokerLoggersTest.probe";
    /** The category above it, as a package is above its classes' loggers. */
    static final String PARENT = "io.tierlog.service.kafka.KafkaBrokerLoggersTest";

    @Inject
    KafkaListener listener;

    @AfterEach
    void putBack() {
        Logger.getLogger(CATEGORY).setLevel(null);
        Logger.getLogger(PARENT).setLevel(null);
    }

    private static ConfigResource self(Admin admin) throws Exception {
        return new ConfigResource(ConfigResource.Type.BROKER_LOGGER,
                admin.describeCluster().controller().get().idString());
    }

    private static Map<String, String> levels(Admin admin, ConfigResource loggers) throws Exception {
        Config config = admin.describeConfigs(List.of(loggers)).all().get().get(loggers);
        Map<String, String> out = new java.util.TreeMap<>();
        config.entries().forEach(e -> out.put(e.name(), e.value()));
        return out;
    }

    private static void alter(Admin admin, ConfigResource loggers, AlterConfigOp... ops) throws Exception {
        admin.incrementalAlterConfigs(Map.of(loggers, List.of(ops))).all().get();
    }

    private static AlterConfigOp set(String logger, String level) {
        return new AlterConfigOp(new ConfigEntry(logger, level), AlterConfigOp.OpType.SET);
    }

    @Test
    void levelsAreListedChangedAndRemovedWhileTheInstanceRuns() throws Exception {
        Logger probe = Logger.getLogger(CATEGORY);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            ConfigResource loggers = self(admin);
            assertThat(admin.listConfigResources(Set.of(ConfigResource.Type.BROKER_LOGGER),
                    new ListConfigResourcesOptions()).all().get()).contains(loggers);
            Map<String, String> before = levels(admin, loggers);
            assertThat(before).containsKey(KafkaBrokerLoggers.ROOT).containsEntry(CATEGORY, "INFO");
            assertThat(probe.isLoggable(org.jboss.logmanager.Level.DEBUG)).isFalse();

            alter(admin, loggers, set(CATEGORY, "DEBUG"));
            assertThat(levels(admin, loggers)).containsEntry(CATEGORY, "DEBUG");
            assertThat(probe.isLoggable(org.jboss.logmanager.Level.DEBUG)).as("the logger itself").isTrue();

            alter(admin, loggers, new AlterConfigOp(new ConfigEntry(CATEGORY, ""), AlterConfigOp.OpType.DELETE));
            assertThat(probe.getLevel()).as("its parent's level again").isNull();
            assertThat(levels(admin, loggers)).containsEntry(CATEGORY, before.get(CATEGORY));

            // Refused, naming what is wrong; nothing of the same request applied.
            assertThatThrownBy(() -> alter(admin, loggers, set(CATEGORY, "ERROR"), set("other.category", "LOUD")))
                    .cause().isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("LOUD")
                    .hasMessageContaining("FATAL, ERROR, WARN, INFO, DEBUG, TRACE");
            assertThat(probe.getLevel()).isNull();
            assertThatThrownBy(() -> alter(admin, loggers, new AlterConfigOp(
                    new ConfigEntry(KafkaBrokerLoggers.ROOT, ""), AlterConfigOp.OpType.DELETE)))
                    .cause().isInstanceOf(InvalidRequestException.class).hasMessageContaining("root");
            assertThatThrownBy(() -> alter(admin, loggers, new AlterConfigOp(new ConfigEntry(CATEGORY, "DEBUG"),
                    AlterConfigOp.OpType.APPEND))).cause().isInstanceOf(InvalidRequestException.class);
            assertThatThrownBy(() -> alter(admin, loggers, set("not a/logger", "DEBUG")))
                    .cause().isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("not a/logger");
            // Another broker's loggers are that broker's to change (Admin sends the request there; sent here, refused).
            try (RawKafka raw = RawKafka.authenticated(listener.port(), TokenModeProfile.BOOTSTRAP)) {
                String other = String.valueOf(Integer.parseInt(loggers.name()) + 1000);
                IncrementalAlterConfigsResponse refused = raw.call(new IncrementalAlterConfigsRequest.Builder(
                        new IncrementalAlterConfigsRequestData().setResources(
                                new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection(List.of(
                                        new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                                                .setResourceType(ConfigResource.Type.BROKER_LOGGER.id())
                                                .setResourceName(other)
                                                .setConfigs(new IncrementalAlterConfigsRequestData
                                                        .AlterableConfigCollection(List.of(
                                                        new IncrementalAlterConfigsRequestData.AlterableConfig()
                                                                .setName(CATEGORY).setValue("DEBUG")
                                                                .setConfigOperation(AlterConfigOp.OpType.SET.id()))
                                                        .iterator()))).iterator()))),
                        ApiKeys.INCREMENTAL_ALTER_CONFIGS);
                assertThat(refused.data().responses()).singleElement().satisfies(r -> {
                    assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
                    assertThat(r.errorMessage()).contains("this is broker " + loggers.name());
                });
            }
            assertThat(probe.getLevel()).isNull();
            admin.incrementalAlterConfigs(Map.of(loggers, List.of(set(CATEGORY, "TRACE"))),
                    new AlterConfigsOptions().validateOnly(true)).all().get();
            assertThat(probe.getLevel()).as("validateOnly changes nothing").isNull();
        }
        try (Admin user = KafkaClients.admin(listener.port(),
                MintedToken.mint("broker-loggers", "produce:topic:* read:group:* describe:topic:*").secret())) {
            ConfigResource loggers = self(user);
            assertThatThrownBy(() -> levels(user, loggers)).cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> alter(user, loggers, set(CATEGORY, "DEBUG")))
                    .cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThat(probe.getLevel()).isNull();
        }
    }

    @Test
    void kafkaConfigsSetsAPackagesLevelForTheLoggersBelowIt() throws Exception {
        Logger probe = Logger.getLogger(CATEGORY); // a class's logger, created as the class first logs
        Path config = Files.createTempFile(Path.of("target"), "kafka-configs", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP).store(w, null);
        }
        String node;
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            node = self(admin).name();
        }
        String[] common = {"--bootstrap-server", KafkaClients.bootstrap(listener.port()), "--command-config",
                config.toString(), "--entity-type", "broker-loggers", "--entity-name", node};
        String altered = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand",
                concat(common, "--alter", "--add-config", PARENT + "=WARN")));
        assertThat(altered).contains("Completed updating config for broker-logger " + node);
        assertThat(probe.getLevel()).as("its own level unset").isNull();
        assertThat(probe.isLoggable(Level.INFO)).as("inherited from the category above").isFalse();
        String described = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand",
                concat(common, "--describe")));
        assertThat(described).contains(PARENT + "=WARN").contains(CATEGORY + "=WARN");
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
