package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

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
}
