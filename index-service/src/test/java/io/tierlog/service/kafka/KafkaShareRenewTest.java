package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.ShareTimersProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShareFetch and ShareAcknowledge v2's renewal (KIP-1222) with kafka-clients 4.4.0's {@code KafkaShareConsumer}, with
 * 2-second record locks: a consumer that renews the record it holds keeps it past its lock while a second consumer
 * of the group polls and gets nothing, then accepts it, and nobody gets it again.
 */
@QuarkusTest
@TestProfile(ShareTimersProfile.class)
class KafkaShareRenewTest {
    static final Duration LOCK = ShareTimersProfile.KAFKA_RECORD_LOCK;

    @Inject
    KafkaListener listener;

    private KafkaShareConsumer<String, String> consumer(String group) {
        return KafkaClients.shareConsumer(listener.port(), group, "explicit", Map.of());
    }

    /** The record at {@code offset} as the holder's next polls hand it back after a renewal (the client replays it). */
    private static ConsumerRecord<String, String> replayed(KafkaShareConsumer<String, String> holder, long offset) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : holder.poll(Duration.ofMillis(100))) {
                assertThat(r.offset()).as("the holder gets back only the record it renewed").isEqualTo(offset);
                return r;
            }
        }
        throw new AssertionError("the renewed record was not handed back");
    }

    /** One poll; whatever it returns is released (explicit mode wants every record acknowledged) and returned. */
    private static List<ConsumerRecord<String, String>> pollReleasing(KafkaShareConsumer<String, String> c) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
            c.acknowledge(r, AcknowledgeType.RELEASE);
            got.add(r);
        }
        return got;
    }

    @Test
    void aRenewedRecordStaysItsHoldersPastItsLockUntilAccepted() throws Exception {
        String topic = KafkaClients.topicWithRecords(listener.port(), "renew", 1, 1);
        String group = KafkaListenerTest.unique("renew-g");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        try (KafkaShareConsumer<String, String> holder = consumer(group);
             KafkaShareConsumer<String, String> other = consumer(group)) {
            holder.subscribe(List.of(topic));
            ConsumerRecord<String, String> held = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (held == null && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : holder.poll(Duration.ofMillis(200))) {
                    held = r;
                }
            }
            assertThat(held).as("the holder acquired the record").isNotNull();
            other.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> stolen = new ArrayList<>();
            // Three locks' time: without renewals the record's lock runs out and the other consumer gets it.
            long until = System.nanoTime() + LOCK.multipliedBy(3).toNanos();
            long renewAt = 0;
            while (System.nanoTime() < until) {
                if (System.nanoTime() >= renewAt) {
                    holder.acknowledge(held, AcknowledgeType.RENEW);
                    assertThat(holder.commitSync()).allSatisfy((tp, error) -> assertThat(error).isEmpty());
                    held = replayed(holder, held.offset());
                    renewAt = System.nanoTime() + LOCK.dividedBy(3).toNanos();
                }
                stolen.addAll(pollReleasing(other));
            }
            assertThat(stolen).as("nothing reached the other consumer while the holder renewed").isEmpty();
            holder.acknowledge(held, AcknowledgeType.ACCEPT);
            assertThat(holder.commitSync()).allSatisfy((tp, error) -> assertThat(error).isEmpty());
            until = System.nanoTime() + LOCK.multipliedBy(2).toNanos();
            while (System.nanoTime() < until) {
                stolen.addAll(pollReleasing(other));
                stolen.addAll(pollReleasing(holder));
            }
            assertThat(stolen).as("accepted: delivered to nobody again").isEmpty();
        }
    }
}
