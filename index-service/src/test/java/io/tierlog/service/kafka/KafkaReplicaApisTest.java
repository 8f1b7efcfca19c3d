package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's replica administration against a log with one copy of each partition: Admin's {@code electLeaders} finds no
 * election needed for a partition that exists and none at all for every partition, {@code listPartitionReassignments}
 * lists none, {@code alterPartitionReassignments} accepts the replica set as it is and refuses any other target or a
 * cancellation with why; unknown partitions are named so; only the administrator may ask; and
 * {@code kafka-leader-election} and {@code kafka-reassign-partitions --list} (kafka-tools 4.4.0) end successfully.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaReplicaApisTest {
    @Inject
    KafkaListener listener;

    private Admin administrator() {
        return KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP);
    }

    private String topic(Admin admin, String prefix) throws Exception {
        String topic = KafkaListenerTest.unique(prefix);
        admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        return topic;
    }

    @Test
    void noLeaderIsEverElectedAndUnknownPartitionsAreNamed() throws Exception {
        try (Admin admin = administrator()) {
            String topic = topic(admin, "elect");
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition missing = new TopicPartition(topic, 7);
            var elected = admin.electLeaders(ElectionType.PREFERRED, Set.of(p0, missing)).partitions().get();
            assertThat(elected.get(p0)).get().isInstanceOf(ElectionNotNeededException.class);
            assertThat(elected.get(missing)).get().isInstanceOf(UnknownTopicOrPartitionException.class);
            assertThat(admin.electLeaders(ElectionType.UNCLEAN, Set.of(p0)).partitions().get().get(p0)).get()
                    .isInstanceOf(ElectionNotNeededException.class);
            assertThat(admin.electLeaders(ElectionType.PREFERRED, null).partitions().get())
                    .as("every partition: none needed an election").isEmpty();
        }
    }

    @Test
    void theReplicaSetAsItIsIsAcceptedAndAnyOtherTargetIsRefusedWithWhy() throws Exception {
        try (Admin admin = administrator()) {
            String topic = topic(admin, "reassign");
            TopicDescription described = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            List<Integer> replicas = described.partitions().get(0).replicas().stream().map(Node::id).toList();
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);
            TopicPartition missing = new TopicPartition(topic, 9);
            var results = admin.alterPartitionReassignments(Map.of(
                    p0, Optional.of(new NewPartitionReassignment(replicas)),
                    p1, Optional.of(new NewPartitionReassignment(List.of(replicas.get(0) + 1000))),
                    missing, Optional.of(new NewPartitionReassignment(replicas)))).values();
            results.get(p0).get();
            assertThatThrownBy(() -> results.get(p1).get()).hasCauseInstanceOf(InvalidReplicaAssignmentException.class)
                    .hasMessageContaining("one copy of each partition");
            assertThatThrownBy(() -> results.get(missing).get())
                    .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
            assertThatThrownBy(() -> admin.alterPartitionReassignments(Map.of(p0, Optional.empty())).all().get())
                    .as("a cancellation").hasCauseInstanceOf(NoReassignmentInProgressException.class);
            assertThat(admin.listPartitionReassignments().reassignments().get()).isEmpty();
            assertThat(admin.listPartitionReassignments(Set.of(p0)).reassignments().get()).isEmpty();
        }
    }

    @Test
    void onlyTheAdministratorMayAsk() throws Exception {
        MintedToken token = MintedToken.mint("replicas-not-admin", "alter:topic:* describe:topic:*");
        try (Admin admin = KafkaClients.admin(listener.port(), token.secret())) {
            TopicPartition p = new TopicPartition("anything", 0);
            assertThatThrownBy(() -> admin.electLeaders(ElectionType.PREFERRED, Set.of(p)).partitions().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> admin.listPartitionReassignments().reassignments().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> admin.alterPartitionReassignments(Map.of(p, Optional.empty())).all().get())
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
        }
    }

    @Test
    void kafkasToolsEndSuccessfully() throws Exception {
        Path config = Files.createTempFile(Path.of("target"), "replica-tools", ".properties");
        try (Writer w = Files.newBufferedWriter(config)) {
            KafkaClients.saslPlain(listener.port(), TokenModeProfile.BOOTSTRAP).store(w, null);
        }
        String bootstrap = KafkaClients.bootstrap(listener.port());
        String topic;
        try (Admin admin = administrator()) {
            topic = topic(admin, "tools");
        }
        String listed = String.join("\n", KafkaToolsClasspath.run(null,
                "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", bootstrap,
                "--command-config", config.toString(), "--list"));
        assertThat(listed).contains("No partition reassignments found");
        String elected = String.join("\n", KafkaToolsClasspath.run(null, "org.apache.kafka.tools.LeaderElectionCommand",
                "--bootstrap-server", bootstrap, "--command-config", config.toString(), "--election-type", "preferred",
                "--topic", topic, "--partition", "0"));
        assertThat(elected).contains("Valid replica already elected for partitions " + topic + "-0");
    }
}
