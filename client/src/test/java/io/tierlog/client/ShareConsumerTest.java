package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Leases, acks and redelivery of a share group through {@link ShareConsumer}, against the real service. */
@Tag("slow")
class ShareConsumerTest {
    @Test
    void acceptedRecordsAreDoneReleasedAndExpiredOnesComeBackRejectedOnesGoToTheDeadLetterTopic() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("jobs");
        String dead = TestService.uniqueName("jobs-dlq");
        String group = TestService.uniqueName("share");
        client.admin().createTopic(topic, 1, null);
        client.admin().createTopic(dead, 1, null);
        client.admin().setShareGroupConfig(group, Map.of("start", "earliest", "dead.letter.topic", dead));
        try (Producer p = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 4; i++) {
                p.send(ProducerRecord.of(topic, null, "job-" + i));
            }
            p.flush();
        }
        ShareConsumer worker = client.shareConsumer(group, topic);
        List<SharedRecord> first = worker.lease(10, Duration.ofMillis(1500), Duration.ofSeconds(5));
        assertThat(first).extracting(SharedRecord::valueAsString).containsExactly("job-0", "job-1", "job-2", "job-3");
        assertThat(first).allMatch(r -> r.deliveryCount() == 1);
        assertThat(worker.accept(first.get(0))).isTrue();
        assertThat(worker.release(first.get(1))).isTrue();
        assertThat(worker.reject(first.get(2))).isTrue();
        assertThat(worker.renew(first.get(3))).isTrue();
        // job-3 is left unacknowledged: its lease runs out and it comes back.

        List<SharedRecord> again = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (again.size() < 2 && System.nanoTime() < deadline) {
            again.addAll(worker.lease(10, Duration.ofSeconds(30), Duration.ofSeconds(2)));
        }
        assertThat(again).extracting(SharedRecord::valueAsString).containsExactlyInAnyOrder("job-1", "job-3");
        assertThat(again).allMatch(r -> r.deliveryCount() == 2);
        again.forEach(r -> assertThat(worker.accept(r)).isTrue());
        assertThat(worker.lease(10, Duration.ofSeconds(1), Duration.ofMillis(300))).isEmpty();
        // An ack under a lease that is over changes nothing and says so.
        assertThat(worker.accept(first.get(3))).isFalse();

        assertThat(ProduceConsumeTest.readAll(client, dead, 1, 1, false).get(0)).extracting(ConsumerRecord::valueAsString)
                .containsExactly("job-2");
        assertThat(client.admin().describeShareGroup(group).path("group").asText()).isEqualTo(group);
        client.admin().deleteShareGroup(group);
    }

    @Test
    void aWholeBatchIsAcknowledgedByItsRangesAllOrNothingPerRange() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("ranges");
        String group = TestService.uniqueName("share");
        client.admin().createTopic(topic, 1, null);
        client.admin().setShareGroupConfig(group, Map.of("start", "earliest"));
        try (Producer p = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 6; i++) {
                p.send(ProducerRecord.of(topic, null, "job-" + i));
            }
            p.flush();
        }
        ShareConsumer worker = client.shareConsumer(group, topic);
        SharedBatch first = worker.leaseBatch(3, Duration.ofSeconds(30), Duration.ofSeconds(5));
        assertThat(first.records()).extracting(SharedRecord::valueAsString).containsExactly("job-0", "job-1", "job-2");
        assertThat(first.ranges()).singleElement().satisfies(r -> {
            assertThat(r.firstOffset()).isZero();
            assertThat(r.lastOffset()).isEqualTo(2);
            assertThat(first.records()).allMatch(r::holds);
        });
        // Release the middle record only: the run is narrowed to it.
        assertThat(worker.acknowledgeRange(first.ranges().get(0), 1, 1, ShareConsumer.Ack.RELEASE)).isTrue();
        assertThat(worker.acknowledgeRange(first.ranges().get(0), 0, 2, ShareConsumer.Ack.ACCEPT))
                .as("all or nothing: 1 is no longer leased under it").isFalse();
        assertThatThrownBy(() -> worker.acknowledgeRange(first.ranges().get(0), 0, 3, ShareConsumer.Ack.ACCEPT))
                .isInstanceOfSatisfying(ProblemException.class, e -> assertThat(e.status()).isEqualTo(400));
        assertThat(worker.accept(first.records().get(0))).isTrue();
        assertThat(worker.acknowledgeRange(first.ranges().get(0), 2, 2, ShareConsumer.Ack.ACCEPT)).isTrue();

        SharedBatch second = worker.leaseBatch(10, Duration.ofSeconds(30), Duration.ofSeconds(5));
        assertThat(second.records()).extracting(SharedRecord::valueAsString)
                .containsExactly("job-1", "job-3", "job-4", "job-5");
        assertThat(second.ranges()).extracting(r -> r.firstOffset() + ".." + r.lastOffset() + "#" + r.deliveryCount())
                .containsExactly("1..1#2", "3..5#1");
        assertThat(worker.acknowledgeAll(second, ShareConsumer.Ack.ACCEPT)).isEmpty();
        assertThat(worker.acknowledgeAll(second, ShareConsumer.Ack.ACCEPT)).as("already accepted")
                .containsExactlyElementsOf(second.ranges());
        assertThat(worker.lease(10, Duration.ofSeconds(1), Duration.ofMillis(200))).isEmpty();
        client.admin().deleteShareGroup(group);
    }
}
