package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@link Consumer}'s fetches running one ahead of the caller: the next fetch of a partition is in flight while
 * records of the previous one are still buffered, and with fetches ahead every record is still returned once, in
 * offset order per partition, also when the service is killed and started again in the middle of the read.
 */
@Tag("slow")
class ConsumerPrefetchTest {

    @Test
    void theNextFetchRunsWhileRecordsAreStillBuffered() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("ahead");
        client.admin().createTopic(topic, 1, null);
        produce(client, topic, 1, 3_000);
        // 100 records per poll, 500 per fetch: after the first poll 400 are buffered.
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(100))) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            List<ConsumerRecord> first = consumer.poll(Duration.ofSeconds(10));
            assertThat(first).hasSize(100);
            assertThat(consumer.bufferedRecords()).as("records of the first fetch still buffered").isPositive();
            assertThat(consumer.fetchesInFlight()).as("the next fetch runs before the buffer is empty").isEqualTo(1);
        }
    }

    @Test
    void theFetchThreadGoesOnFetchingWithoutTheNextPoll() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("ahead-chain");
        client.admin().createTopic(topic, 1, null);
        produce(client, topic, 1, 5_000);
        // 100 records per poll, 500 per fetch. A next fetch started only by poll makes every chain one fetch long.
        // The first chain starts with nothing buffered, so it goes on after its first 500 whatever the poll takes
        // meanwhile: two fetches' worth (1,000) fetched with no further poll. How many of them are still ahead depends
        // on whether the poll counted its 100 before the chain's second answer (900) or after (1,400, a third fetch).
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(100))) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            assertThat(consumer.poll(Duration.ofSeconds(10))).hasSize(100);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (consumer.longestChain() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5); // the fetch thread's progress has no signal to wait on; 2 cores: no busy spin
            }
            assertThat(consumer.longestChain()).as("fetches one after the other without another poll")
                    .isGreaterThanOrEqualTo(2);
            assertThat(consumer.fetchedAhead() + 100).as("two fetches' worth fetched").isGreaterThanOrEqualTo(1_000);
            assertThat(consumer.fetchedAhead()).as("at most about three fetches deep").isLessThanOrEqualTo(1_500);
        }
    }

    @Test
    void everyRecordOnceInOrderPerPartitionAcrossAServiceRestart() throws Exception {
        TestService service = TestService.shared();
        TierlogClient client = service.adminClient();
        String topic = TestService.uniqueName("ahead-restart");
        int partitions = 3;
        int perPartition = 10_000;
        client.admin().createTopic(topic, partitions, null);
        produce(client, topic, partitions, perPartition);
        List<List<ConsumerRecord>> read = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            read.add(new ArrayList<>());
        }
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(200))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            int got = 0;
            boolean restarted = false;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (got < partitions * perPartition) {
                assertThat(System.nanoTime()).as("read to the end in time (%d read)", got).isLessThan(deadline);
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(5))) {
                    read.get(r.partition()).add(r);
                    got++;
                }
                if (!restarted && got >= partitions * perPartition / 3) {
                    // Fetches ahead are in flight or buffered now: they are lost with the service or kept.
                    service.kill();
                    service.restart();
                    restarted = true;
                }
            }
            assertThat(restarted).isTrue();
            assertThat(consumer.poll(Duration.ofMillis(200))).as("nothing after the end").isEmpty();
            for (int p = 0; p < partitions; p++) {
                assertThat(consumer.position(tps.get(p))).isEqualTo(perPartition);
            }
        } finally {
            service.awaitReady(Duration.ofSeconds(60));
        }
        for (int p = 0; p < partitions; p++) {
            List<ConsumerRecord> rs = read.get(p);
            assertThat(rs).as("partition %d: every record once", p).hasSize(perPartition);
            for (int i = 0; i < perPartition; i++) {
                assertThat(rs.get(i).offset()).as("partition %d, record %d", p, i).isEqualTo(i);
                assertThat(rs.get(i).valueAsString()).isEqualTo(p + ":" + i);
            }
        }
    }

    /** {@code perPartition} records "p:i" to each partition, in stored batches of 250. */
    private static void produce(TierlogClient client, String topic, int partitions, int perPartition) {
        try (Producer producer = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < perPartition; i++) {
                for (int p = 0; p < partitions; p++) {
                    producer.send(new ProducerRecord(topic, p, null, (p + ":" + i).getBytes(StandardCharsets.UTF_8),
                            null, null));
                }
                if (i % 250 == 249) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }
}
