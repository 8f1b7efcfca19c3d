package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DeleteShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AlterShareGroupOffsets and DeleteShareGroupOffsets over the listener with kafka-clients 4.4.0's Admin
 * ({@code alterShareGroupOffsets}, {@code deleteShareGroupOffsets}) and {@link KafkaShareConsumer}: a share consumer
 * starts at the offset an alter set and not before it, starts again per {@code share.auto.offset.reset} after a
 * delete, and neither is allowed while a share consumer is a member (NON_EMPTY_GROUP).
 */
@QuarkusTest
class KafkaShareGroupOffsetsTest {
    static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    KafkaListener listener;

    private String topicWithRecords(String prefix, int partitions, int perPartition) throws Exception {
        return KafkaClients.topicWithRecords(listener.port(), prefix, partitions, perPartition);
    }

    private void startAtEarliest(String group) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get();
        }
    }

    private KafkaShareConsumer<String, String> consumer(String group) {
        return KafkaClients.shareConsumer(listener.port(), group, "implicit", Map.of());
    }

    /** The values a new share consumer of the group receives until {@code n} came (then accepted), then leaves. */
    private List<String> consume(String group, String topic, int n) {
        List<String> out = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = consumer(group)) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (out.size() < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                }
            }
            // Nothing more comes: what came is all there was from where the group started.
            c.poll(Duration.ofSeconds(1)).forEach(r -> out.add(r.value()));
            c.commitSync();
        }
        return out;
    }

    private Map<TopicPartition, SharePartitionOffsetInfo> offsets(Admin admin, String group) throws Exception {
        return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                .get();
    }

    private static Throwable cause(ExecutionException e) {
        return e.getCause();
    }

    @Test
    void aShareConsumerStartsAtTheOffsetAnAlterSetAndNotBeforeIt() throws Exception {
        String topic = topicWithRecords("sho", 2, 10);
        String group = KafkaListenerTest.unique("sho-g"); // never used: the alter creates it
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 4L,
                    new TopicPartition(topic, 1), 10L)).all().get();
            Map<TopicPartition, SharePartitionOffsetInfo> after = offsets(admin, group);
            assertThat(after.get(new TopicPartition(topic, 0)).startOffset()).isEqualTo(4);
            assertThat(after.get(new TopicPartition(topic, 0)).lag()).contains(6L);
            assertThat(after.get(new TopicPartition(topic, 1)).startOffset()).isEqualTo(10);
        }
        assertThat(consume(group, topic, 6)).containsExactlyInAnyOrder("0-4", "0-5", "0-6", "0-7", "0-8", "0-9");

        // Back to the start of partition 0: what was accepted is delivered again.
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 0L)).all().get();
        }
        assertThat(consume(group, topic, 10)).hasSize(10).allMatch(v -> v.startsWith("0-"));
    }

    @Test
    void afterADeleteTheGroupStartsAgainWhereShareAutoOffsetResetSays() throws Exception {
        String topic = topicWithRecords("shd", 1, 5);
        String other = topicWithRecords("shd-o", 1, 3);
        String group = KafkaListenerTest.unique("shd-g");
        startAtEarliest(group);
        assertThat(consume(group, topic, 5)).hasSize(5);
        assertThat(consume(group, other, 3)).hasSize(3);

        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            assertThat(offsets(admin, group)).containsOnlyKeys(new TopicPartition(other, 0));
        }
        assertThat(consume(group, topic, 5)).as("earliest: from the start again")
                .containsExactlyInAnyOrder("0-0", "0-1", "0-2", "0-3", "0-4");
        KafkaClients.produceToEachPartition(listener.port(), other, 1, 3, 1);
        assertThat(consume(group, other, 1)).as("the other topic's state stays: only the new record")
                .containsExactly("0-3");
    }

    @Test
    void neitherIsAllowedWhileAShareConsumerIsAMember() throws Exception {
        String topic = topicWithRecords("shn", 1, 5);
        String group = KafkaListenerTest.unique("shn-g");
        startAtEarliest(group);
        try (KafkaShareConsumer<String, String> member = consumer(group);
             Admin admin = KafkaClients.admin(listener.port())) {
            member.subscribe(List.of(topic));
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (got.size() < 5 && System.nanoTime() < deadline) {
                member.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
            }
            member.commitSync();
            assertThat(got).hasSize(5);

            TopicPartition tp = new TopicPartition(topic, 0);
            assertThatThrownBy(() -> admin.alterShareGroupOffsets(group, Map.of(tp, 0L)).all().get())
                    .isInstanceOfSatisfying(ExecutionException.class,
                            e -> assertThat(cause(e)).isInstanceOf(GroupNotEmptyException.class));
            assertThatThrownBy(() -> admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get())
                    .isInstanceOfSatisfying(ExecutionException.class,
                            e -> assertThat(cause(e)).isInstanceOf(GroupNotEmptyException.class));
            assertThat(offsets(admin, group).get(tp).startOffset()).as("nothing changed").isEqualTo(5);
            assertThat(member.poll(Duration.ofSeconds(1))).as("nothing redelivered").isEmpty();
        }
        // Once the member left, the same alter is allowed.
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 3L)).all().get();
        }
        assertThat(consume(group, topic, 2)).containsExactlyInAnyOrder("0-3", "0-4");
    }

    @Test
    void unknownTopicsPartitionsAndGroupsAreAnsweredWithKafkasErrors() throws Exception {
        String topic = topicWithRecords("shu", 1, 3);
        String group = KafkaListenerTest.unique("shu-g");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            TopicPartition known = new TopicPartition(topic, 0);
            TopicPartition noPartition = new TopicPartition(topic, 7);
            TopicPartition noTopic = new TopicPartition(KafkaListenerTest.unique("nope"), 0);
            AlterShareGroupOffsetsResult altered = admin.alterShareGroupOffsets(group,
                    Map.of(known, 1L, noPartition, 0L, noTopic, 0L));
            altered.partitionResult(known).get();
            for (TopicPartition unknown : List.of(noPartition, noTopic)) {
                assertThatThrownBy(() -> altered.partitionResult(unknown).get()).isInstanceOfSatisfying(
                        ExecutionException.class,
                        e -> assertThat(cause(e)).isInstanceOf(UnknownTopicOrPartitionException.class));
            }
            assertThat(offsets(admin, group)).containsOnlyKeys(known);

            DeleteShareGroupOffsetsResult deleted = admin.deleteShareGroupOffsets(group, Set.of(topic, noTopic.topic()));
            deleted.topicResult(topic).get();
            assertThatThrownBy(() -> deleted.topicResult(noTopic.topic()).get()).isInstanceOfSatisfying(
                    ExecutionException.class, e -> assertThat(cause(e)).isInstanceOf(UnknownTopicOrPartitionException.class));

            assertThatThrownBy(() -> admin.deleteShareGroupOffsets(KafkaListenerTest.unique("never"), Set.of(topic))
                    .all().get()).isInstanceOfSatisfying(ExecutionException.class,
                    e -> assertThat(cause(e)).isInstanceOf(GroupIdNotFoundException.class));
        }
    }
}
