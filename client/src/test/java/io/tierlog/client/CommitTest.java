package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Commits: asynchronous ones, a group's resumption from them, and the member fencing of commits. */
@Tag("slow")
class CommitTest {
    @Test
    void anAsyncCommitIsWhereTheNextConsumerOfTheGroupStarts() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("commit");
        String group = TestService.uniqueName("g");
        client.admin().createTopic(topic, 1, null);
        produce(client, topic, 20);
        TopicPartition tp = new TopicPartition(topic, 0);
        ConsumerConfig config = ConsumerConfig.group(group).withMaxPollRecords(7).withAutoCommit(false);
        try (Consumer consumer = client.consumer(config)) {
            consumer.assign(List.of(tp)); // by hand, committing under the group's name (it has no members)
            assertThat(consumer.poll(Duration.ofSeconds(10))).hasSize(7);
            CompletableFuture<Map<TopicPartition, Long>> called = new CompletableFuture<>();
            consumer.commitAsync((offsets, error) -> {
                if (error == null) {
                    called.complete(offsets);
                } else {
                    called.completeExceptionally(error);
                }
            });
            assertThat(called.get(30, TimeUnit.SECONDS)).containsEntry(tp, 7L);
        }
        assertThat(client.admin().groupOffsets(group)).containsEntry(tp, 7L);
        try (Consumer next = client.consumer(config)) {
            next.assign(List.of(tp));
            assertThat(next.poll(Duration.ofSeconds(10))).first().extracting(ConsumerRecord::offset).isEqualTo(7L);
        }
    }

    @Test
    void aMemberCannotCommitForAPartitionItDoesNotHold() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("fenced");
        String other = TestService.uniqueName("other");
        String group = TestService.uniqueName("g");
        client.admin().createTopic(topic, 1, null);
        client.admin().createTopic(other, 1, null);
        produce(client, topic, 3);
        try (Consumer member = client.consumer(ConsumerConfig.group(group).withAutoCommit(false))) {
            member.subscribe(List.of(topic));
            List<ConsumerRecord> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (got.size() < 3 && System.nanoTime() < deadline) {
                got.addAll(member.poll(Duration.ofSeconds(1)));
            }
            assertThat(got).hasSize(3);
            member.commitSync();
            assertThat(client.admin().groupOffsets(group)).containsEntry(new TopicPartition(topic, 0), 3L);
            assertThatThrownBy(() -> member.commitSync(Map.of(new TopicPartition(other, 0), 0L)))
                    .isInstanceOfSatisfying(ProblemException.class, p -> assertThat(p.type()).isEqualTo("fenced-member"));
            // And while it is a member, a commit without membership is refused too.
            assertThatThrownBy(() -> client.admin().commitOffsets(group, Map.of(new TopicPartition(topic, 0), 0L)))
                    .isInstanceOfSatisfying(ProblemException.class, p -> assertThat(p.type()).isEqualTo("fenced-member"));
        }
        assertThat(client.admin().groupOffsets(group)).containsEntry(new TopicPartition(topic, 0), 3L);
    }

    private static void produce(TierlogClient client, String topic, int n) {
        try (Producer p = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < n; i++) {
                p.send(ProducerRecord.of(topic, null, "v" + i));
            }
            p.flush();
        }
    }
}
