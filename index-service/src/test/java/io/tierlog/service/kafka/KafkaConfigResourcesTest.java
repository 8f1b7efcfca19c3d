package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * ListConfigResources v1 (KIP-1142) with kafka-clients 4.4.0 and kafka-tools' {@code kafka-configs}: every config
 * resource an administrator may describe, by type, including consumer and share groups that have only configs (no
 * members, no offsets), which ListGroups does not show. In token mode: listing needs {@code admin:cluster}.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaConfigResourcesTest {
    @Inject
    KafkaListener listener;

    private static Collection<ConfigResource> list(Admin admin, Set<ConfigResource.Type> types) throws Exception {
        return admin.listConfigResources(types, new ListConfigResourcesOptions()).all().get();
    }

    @Test
    void everyTypeIsListedAndAGroupWithOnlyConfigsToo() throws Exception {
        String topic = KafkaListenerTest.unique("listed");
        String configured = KafkaListenerTest.unique("g-configured");
        String committed = KafkaListenerTest.unique("g-committed");
        String subscription = KafkaListenerTest.unique("cm-listed");
        String shareConfigured = KafkaListenerTest.unique("g-share-configured");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(
                    new ConfigResource(ConfigResource.Type.GROUP, configured), List.of(new AlterConfigOp(
                            new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET)),
                    new ConfigResource(ConfigResource.Type.GROUP, shareConfigured), List.of(new AlterConfigOp(
                            new ConfigEntry("share.record.lock.duration.ms", "20000"), AlterConfigOp.OpType.SET)),
                    new ConfigResource(ConfigResource.Type.CLIENT_METRICS, subscription), List.of(new AlterConfigOp(
                            new ConfigEntry("metrics", "org.apache.kafka.producer."), AlterConfigOp.OpType.SET))))
                    .all().get();
            admin.alterConsumerGroupOffsets(committed, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)))
                    .all().get();

            Collection<ConfigResource> all = list(admin, Set.of());
            assertThat(all).contains(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    new ConfigResource(ConfigResource.Type.GROUP, configured),
                    new ConfigResource(ConfigResource.Type.GROUP, shareConfigured),
                    new ConfigResource(ConfigResource.Type.GROUP, committed),
                    new ConfigResource(ConfigResource.Type.CLIENT_METRICS, subscription),
                    new ConfigResource(ConfigResource.Type.BROKER,
                            admin.describeCluster().nodes().get().iterator().next().idString()));
            assertThat(all).as("the service's internal topics stay hidden")
                    .noneMatch(r -> r.type() == ConfigResource.Type.TOPIC && r.name().startsWith("__"));

            assertThat(list(admin, Set.of(ConfigResource.Type.GROUP)))
                    .allMatch(r -> r.type() == ConfigResource.Type.GROUP)
                    .contains(new ConfigResource(ConfigResource.Type.GROUP, configured));
            assertThatThrownBy(() -> list(admin, Set.of(ConfigResource.Type.UNKNOWN)))
                    .cause().isInstanceOf(UnsupportedVersionException.class);
        }
        try (Admin user = KafkaClients.admin(listener.port(),
                MintedToken.mint("config-resources", "produce:topic:* read:group:*").secret())) {
            assertThatThrownBy(() -> list(user, Set.of())).cause().isInstanceOf(ClusterAuthorizationException.class);
        }
    }

    @Test
    void kafkaConfigsDescribesEveryGroupWithConfigs() throws Exception {
        String group = KafkaListenerTest.unique("g-tool");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "4000"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        Path config = Files.createTempFile(Path.of("target"), "kafka-configs", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP).store(w, null);
        }
        String described = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.ConfigCommand",
                "--bootstrap-server", KafkaClients.bootstrap(listener.port()), "--command-config", config.toString(),
                "--describe", "--entity-type", "groups"));
        assertThat(described).contains("Dynamic configs for group " + group + " are:")
                .contains("consumer.heartbeat.interval.ms=4000");
    }
}
