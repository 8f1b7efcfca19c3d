package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 100,000 records sent while the service is killed (SIGKILL, mid-stream) and started again on the same port and
 * data (it is ready again when the test ends): the producer retries through refused connections and lost answers, every send completes, and every record
 * is in the log exactly once, at the offset its future reported.
 */
@Tag("slow")
class CrashRestartTest {
    static final int RECORDS = 100_000;

    @Test
    void everyRecordOnceAcrossAKillAndRestart() throws Exception {
        // The shared service (the other test classes run before or after, never during): a second one would cost
        // a start-up more on a machine where it takes 10-30 s.
        TestService service = TestService.shared();
        {
            TierlogClient client = service.adminClient();
            String topic = TestService.uniqueName("crash");
            client.admin().createTopic(topic, 4, null);
            AtomicInteger acked = new AtomicInteger();
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>(RECORDS);
            try (Producer producer = client.producer(ProducerConfig.defaults().withBatchBytes(32 * 1024)
                    .withBackoff(new Backoff(Duration.ofMillis(20), Duration.ofMillis(500)))
                    .withDeliveryTimeout(Duration.ofMinutes(3)))) {
                for (int i = 0; i < RECORDS; i++) {
                    CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of(topic, "k" + (i % 1000), "v" + i));
                    f.thenRun(acked::incrementAndGet);
                    sent.add(f);
                    if (i == RECORDS / 3) {
                        GroupConsumerTest.await(() -> acked.get() > RECORDS / 5, "some records acknowledged");
                        service.kill();
                        service.restart();
                    }
                }
                producer.flush();
            }
            for (CompletableFuture<RecordMetadata> f : sent) {
                assertThat(f).isCompletedWithValueMatching(m -> m.offset() >= 0);
            }
            service.awaitReady(Duration.ofSeconds(60));
            Map<Integer, List<ConsumerRecord>> read = readAll(client, topic, 4);
            BitSet seen = new BitSet(RECORDS);
            int total = 0;
            for (List<ConsumerRecord> rs : read.values()) {
                for (ConsumerRecord r : rs) {
                    int i = Integer.parseInt(r.valueAsString().substring(1));
                    assertThat(seen.get(i)).as("v%d twice", i).isFalse();
                    seen.set(i);
                    total++;
                }
            }
            assertThat(total).isEqualTo(RECORDS);
            for (int i = 0; i < RECORDS; i += 997) {
                RecordMetadata m = sent.get(i).get(1, TimeUnit.SECONDS);
                assertThat(read.get(m.partition()).get((int) m.offset()).valueAsString()).isEqualTo("v" + i);
            }
        }
    }

    private static Map<Integer, List<ConsumerRecord>> readAll(TierlogClient client, String topic, int partitions) {
        Map<Integer, List<ConsumerRecord>> out = new java.util.TreeMap<>();
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(10_000))) {
            List<TopicPartition> tps = new ArrayList<>();
            long end = 0;
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
                out.put(p, new ArrayList<>());
                end += client.admin().latestOffset(topic, p);
            }
            consumer.assign(tps);
            int got = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (got < end) {
                assertThat(System.nanoTime()).as("read to the end in time").isLessThan(deadline);
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(5))) {
                    out.get(r.partition()).add(r);
                    got++;
                }
            }
        }
        return out;
    }
}
