package io.tierlog.client;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The producer's requests in flight per partition ({@code maxInFlightPerPartition} above its default 1) through
 * {@link FaultProxy} in front of the real service: several in flight at once, and Kafka's idempotent-producer
 * guarantees kept through failures in the middle of the window (every record once, in send order, at the offset its
 * future names).
 */
@Tag("slow")
class PipeliningTest {
    static TestService service;
    static FaultProxy proxy;
    static TierlogClient direct;
    static TierlogClient viaProxy;

    @BeforeAll
    static void start() throws Exception {
        service = TestService.shared();
        proxy = new FaultProxy(service.url());
        direct = service.adminClient();
        viaProxy = TierlogClient.builder().url(proxy.url()).token(TestService.ADMIN_TOKEN)
                .backoff(new Backoff(Duration.ofMillis(5), Duration.ofMillis(20))).build();
    }

    @AfterAll
    static void stop() {
        proxy.close();
    }

    private static ProducerConfig smallBatches() {
        return ProducerConfig.defaults().withBackoff(new Backoff(Duration.ofMillis(5), Duration.ofMillis(20)))
                .withBatchBytes(8 * 1024).withMaxInFlightPerPartition(5);
    }

    @Test
    void upToMaxInFlightPerPartitionRequestsOfOnePartitionAreInFlightAtOnce() throws Exception {
        for (int maxInFlight : new int[]{5, 1}) {
            String topic = TestService.uniqueName("in-flight-" + maxInFlight);
            direct.admin().createTopic(topic, 1, null);
            proxy.loseAnswerOfNext("/v1/topics/" + topic + "/records", 0); // arms the counters for this topic
            proxy.maxConcurrent.set(0);
            List<CompletableFuture<RecordMetadata>> sent = sendAll(viaProxy, smallBatches().withMaxInFlightPerPartition(maxInFlight),
                    topic, 2_000);
            if (maxInFlight == 1) {
                assertThat(proxy.maxConcurrent.get()).as("requests in flight with maxInFlightPerPartition 1").isEqualTo(1);
            } else {
                assertThat(proxy.maxConcurrent.get()).as("requests in flight with maxInFlightPerPartition 5").isBetween(2, 5);
            }
            assertInSendOrderOnce(topic, sent);
        }
    }

    @Test
    void theProducerWideLimitHoldsAcrossPartitionsAndNoBatchIsRefusedAsOutOfOrder() throws Exception {
        // The defaults (one request per partition) with a producer-wide limit of 3 over 8 partitions: requests go to
        // several partitions at once, never more than 3, and none overtakes another of its partition.
        String topic = TestService.uniqueName("across-partitions");
        int partitions = 8;
        int n = 20_000;
        direct.admin().createTopic(topic, partitions, null);
        proxy.loseAnswerOfNext("/v1/topics/" + topic + "/records", 0); // arms the counters for this topic
        proxy.maxConcurrent.set(0);
        proxy.relayedStatuses.clear();
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        ProducerStats stats;
        try (Producer producer = viaProxy.producer(ProducerConfig.defaults().withBatchBytes(8 * 1024)
                .withMaxInFlight(3))) {
            for (int i = 0; i < n; i++) {
                sent.add(producer.send(ProducerRecord.of(topic, null, "v" + i)));
            }
            producer.flush();
            stats = producer.stats();
        }
        assertThat(proxy.maxConcurrent.get()).as("requests in flight, all partitions").isBetween(2, 3);
        assertThat(proxy.relayedStatuses.keySet()).as("statuses relayed").containsExactly(200);
        assertThat(stats.outOfOrder()).isZero();
        assertThat(stats.retries()).isZero();
        assertThat(stats.recordsAcknowledged()).isEqualTo(n);
        assertThat(stats.requests()).isEqualTo(stats.batchesAcknowledged());
        Map<Integer, List<ConsumerRecord>> log = ProduceConsumeTest.readAll(direct, topic, partitions, n, true);
        assertThat(log.values().stream().filter(l -> !l.isEmpty()).count()).as("partitions used").isGreaterThan(2);
        for (List<ConsumerRecord> records : log.values()) {
            int previous = -1;
            for (ConsumerRecord r : records) {
                int i = Integer.parseInt(r.valueAsString().substring(1));
                assertThat(i).as("send order within partition %d", r.partition()).isGreaterThan(previous);
                previous = i;
                RecordMetadata m = sent.get(i).join();
                assertThat(m.partition()).isEqualTo(r.partition());
                assertThat(m.offset()).isEqualTo(r.offset());
            }
        }
        assertThat(log.values().stream().mapToInt(List::size).sum()).isEqualTo(n);
    }

    @Test
    void aBatchRefusedInTheMiddleOfTheWindowIsAppendedBeforeTheBatchesBehindIt() throws Exception {
        String topic = TestService.uniqueName("refused-in-window");
        String path = "/v1/topics/" + topic + "/records";
        List<CompletableFuture<RecordMetadata>> sent = sendWithFaultAfterFirst(topic, 3_000, () -> {
            // The next request is refused with 503 only after the 4 behind it reached the service, which must refuse
            // them as out of order (their predecessor is missing); the producer then resends all five in order.
            proxy.relayedStatuses.clear();
            proxy.refuseNextHolding(path, 503, "hot-tier-full", 4);
        });
        assertThat(proxy.relayedStatuses.getOrDefault(409, new AtomicInteger()).get())
                .as("batches behind the refused one, refused by the service as out of order")
                .isGreaterThanOrEqualTo(4);
        assertInSendOrderOnce(topic, sent);
    }

    @Test
    void answersLostInTheMiddleOfTheWindowAppendNothingTwice() throws Exception {
        String topic = TestService.uniqueName("lost-in-window");
        List<CompletableFuture<RecordMetadata>> sent = sendWithFaultAfterFirst(topic, 3_000,
                () -> proxy.loseAnswerOfNext("/v1/topics/" + topic + "/records", 4));
        assertThat(proxy.lostAnswers.get()).isGreaterThanOrEqualTo(4);
        assertThat(sent.stream().filter(f -> !f.isCompletedExceptionally()).map(CompletableFuture::join)
                .filter(RecordMetadata::duplicate)).as("answered from the service's memory of the lost ones")
                .isNotEmpty();
        assertInSendOrderOnce(topic, sent);
    }

    @Test
    void aBatchWhoseAnswerIsLostLateIsNotAppendedAgain() throws Exception {
        // A batch takes effect but its client learns of the lost answer only after the batches behind it were
        // acknowledged. The service remembers a producer's last 5 batches: had a sixth been appended
        // meanwhile, the resend would be refused as out of order and, renumbered, appended a second time.
        String topic = TestService.uniqueName("lost-late");
        List<CompletableFuture<RecordMetadata>> sent = sendWithFaultAfterFirst(topic, 10_000,
                () -> proxy.loseAnswerLate("/v1/topics/" + topic + "/records", 1, 5, Duration.ofSeconds(3)));
        assertThat(proxy.lostAnswers.get()).isEqualTo(1);
        assertInSendOrderOnce(topic, sent);
    }

    /**
     * To a new topic of one partition: v0 through the proxy (the service then knows the producer, so the window opens
     * to 5), then {@code fault} armed, then v1 .. v(n-1); all flushed, so every future is complete.
     */
    private static List<CompletableFuture<RecordMetadata>> sendWithFaultAfterFirst(String topic, int n,
                                                                                  Runnable fault) throws Exception {
        direct.admin().createTopic(topic, 1, null);
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (Producer producer = viaProxy.producer(smallBatches())) {
            sent.add(producer.send(ProducerRecord.of(topic, null, "v0")));
            producer.flush();
            fault.run();
            for (int i = 1; i < n; i++) {
                sent.add(producer.send(ProducerRecord.of(topic, null, "v" + i)));
            }
            producer.flush();
        }
        return sent;
    }

    private static List<CompletableFuture<RecordMetadata>> sendAll(TierlogClient client, ProducerConfig config,
                                                                   String topic, int n) {
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (Producer producer = client.producer(config)) {
            for (int i = 0; i < n; i++) {
                sent.add(producer.send(ProducerRecord.of(topic, null, "v" + i)));
            }
            producer.flush();
        }
        return sent;
    }

    /** Partition 0 of {@code topic} holds v0, v1, ... exactly once each, in send order, where the futures said. */
    private static void assertInSendOrderOnce(String topic, List<CompletableFuture<RecordMetadata>> sent) {
        assertThat(sent).allSatisfy(f -> assertThat(f).isCompleted().isNotCompletedExceptionally());
        List<ConsumerRecord> log = ProduceConsumeTest.readAll(direct, topic, 1, sent.size(), true).get(0);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            expected.add("v" + i);
            assertThat(sent.get(i).join().offset()).as("offset of v%d", i).isEqualTo(i);
        }
        assertThat(log).extracting(ConsumerRecord::valueAsString).containsExactlyElementsOf(expected);
    }
}
