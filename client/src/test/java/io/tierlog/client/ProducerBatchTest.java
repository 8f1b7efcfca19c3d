package io.tierlog.client;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * How the producer's batches hold and finish their records (docs/adr/0039): records are written into their batch at
 * {@code send}, a batch's records complete together, and {@code flush} waits for batches. Against the packaged
 * service over real sockets.
 */
@Tag("slow")
class ProducerBatchTest {
    static TierlogClient client;

    @BeforeAll
    static void start() throws Exception {
        client = TestService.shared().adminClient();
    }

    @Test
    void aRecordIsWrittenAtSendSoTheApplicationMayReuseItsArrays() throws Exception {
        String topic = TestService.uniqueName("reuse");
        client.admin().createTopic(topic, 1, null);
        byte[] buffer = "first".getBytes(StandardCharsets.UTF_8);
        // A linger far longer than the test: the batch is sent by flush, after the array changed.
        try (Producer producer = client.producer(ProducerConfig.defaults().withLinger(Duration.ofHours(1)))) {
            CompletableFuture<RecordMetadata> first = producer.send(new ProducerRecord(topic, 0, null, buffer, null, null));
            byte[] reused = "other".getBytes(StandardCharsets.UTF_8);
            System.arraycopy(reused, 0, buffer, 0, reused.length); // the application's buffer, filled again
            CompletableFuture<RecordMetadata> second = producer.send(new ProducerRecord(topic, 0, null, buffer, null, null));
            producer.flush();
            assertThat(first.join().offset()).isZero();
            assertThat(second.join().offset()).isEqualTo(1);
        }
        List<ConsumerRecord> read = ProduceConsumeTest.readAll(client, topic, 1, 2, true).get(0);
        assertThat(read).extracting(ConsumerRecord::valueAsString).containsExactly("first", "other");
    }

    @Test
    void everyRecordOfABatchThatFailsFailsWithItsProblemAndFlushReturns() throws Exception {
        String topic = TestService.uniqueName("failed-batch");
        client.admin().createTopic(topic, 1, null);
        try (Producer producer = client.producer(ProducerConfig.defaults().withLinger(Duration.ofHours(1)))) {
            List<CompletableFuture<RecordMetadata>> refused = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                // Partition 5 of a topic of 1: one batch, refused with a 4xx, so never retried.
                refused.add(producer.send(new ProducerRecord(topic, 5, null, utf8("r" + i), null, null)));
            }
            assertTimeoutPreemptively(Duration.ofSeconds(60), producer::flush, "flush waits for the failed batch");
            assertThat(refused).allMatch(CompletableFuture::isCompletedExceptionally);
            Throwable problem = failure(refused.get(0));
            assertThat(problem).isInstanceOf(ProblemException.class);
            assertThat(((ProblemException) problem).status()).isBetween(400, 499);
            for (CompletableFuture<RecordMetadata> f : refused) {
                assertThat(failure(f)).as("the batch's one problem, for each of its records").isSameAs(problem);
            }
            // The producer goes on: a later record of another partition is appended.
            CompletableFuture<RecordMetadata> ok = producer.send(new ProducerRecord(topic, 0, null, utf8("ok"), null, null));
            assertTimeoutPreemptively(Duration.ofSeconds(60), producer::flush);
            assertThat(ok.join().offset()).isZero();
        }
    }

    @Test
    void offsetsFollowSendOrderWhenBatchesOutgrowThePartitionsLastBatch() throws Exception {
        String topic = TestService.uniqueName("growing");
        client.admin().createTopic(topic, 2, null);
        int n = 3_000;
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (Producer producer = client.producer(ProducerConfig.defaults().withBatchBytes(256 * 1024))) {
            for (int i = 0; i < n; i++) {
                // Small records first, then larger ones: a batch starts at its partition's last batch size and grows.
                int size = i < 1_000 ? 10 : 10 + (i % 97) * 40;
                byte[] value = new byte[size];
                Arrays.fill(value, (byte) ('a' + i % 26));
                sent.add(producer.send(new ProducerRecord(topic, i % 2, null, value,
                        Map.of("i", utf8(Integer.toString(i))), null)));
            }
            producer.flush();
        }
        Map<Integer, List<ConsumerRecord>> read = ProduceConsumeTest.readAll(client, topic, 2, n, true);
        for (int p = 0; p < 2; p++) {
            List<ConsumerRecord> records = read.get(p);
            assertThat(records).hasSize(n / 2);
            for (int k = 0; k < records.size(); k++) {
                int i = 2 * k + p; // the k-th record sent to partition p
                ConsumerRecord r = records.get(k);
                assertThat(new String(r.headers().get("i"), StandardCharsets.UTF_8)).isEqualTo(Integer.toString(i));
                assertThat(r.offset()).as("record %d's future", i).isEqualTo(sent.get(i).join().offset());
                assertThat(sent.get(i).join().partition()).isEqualTo(p);
                assertThat(r.valueSize()).isEqualTo(i < 1_000 ? 10 : 10 + (i % 97) * 40);
            }
        }
    }

    @Test
    void aBatchWrittenIntoTheArrayOfAnAcknowledgedOneHoldsOnlyItsOwnRecords() throws Exception {
        String topic = TestService.uniqueName("reused-array");
        client.admin().createTopic(topic, 2, null);
        int perBatch = 63; // 1,000-byte values: 63 fill a 64 KiB batch (1,040 counted bytes each)
        try (Producer producer = client.producer(ProducerConfig.defaults().withLinger(Duration.ofHours(1))
                .withBatchBytes(64 * 1024))) {
            List<CompletableFuture<RecordMetadata>> first = new ArrayList<>();
            for (int i = 0; i < perBatch; i++) {
                first.add(producer.send(new ProducerRecord(topic, 0, null, filled(1_000, 'a'), null, null)));
            }
            producer.flush();
            assertThat(first).allMatch(f -> f.join().offset() >= 0);
            // The first batch's full-size array is free now: a new batch of partition 1 is written into it.
            CompletableFuture<RecordMetadata> small = producer.send(new ProducerRecord(topic, 1, null, utf8("small"),
                    null, null));
            producer.flush();
            assertThat(small.join().offset()).isZero();
        }
        Map<Integer, List<ConsumerRecord>> read = ProduceConsumeTest.readAll(client, topic, 2, perBatch + 1, true);
        assertThat(read.get(1)).extracting(ConsumerRecord::valueAsString).containsExactly("small");
        assertThat(read.get(0)).hasSize(perBatch).allMatch(r -> r.valueSize() == 1_000);
    }

    private static byte[] filled(int size, char c) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) c);
        return b;
    }

    private static Throwable failure(CompletableFuture<?> f) {
        try {
            f.join();
            throw new AssertionError("completed normally");
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
