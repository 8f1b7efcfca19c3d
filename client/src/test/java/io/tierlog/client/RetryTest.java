package io.tierlog.client;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Retries through {@link FaultProxy} in front of the real service: answers lost after the append (the idempotent
 * producer must not append twice), and 429/503 with {@code Retry-After} (the client must wait that long, although
 * its own backoff is a few milliseconds).
 */
@Tag("slow")
class RetryTest {
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

    private static ProducerConfig fastRetries() {
        return ProducerConfig.defaults().withBackoff(new Backoff(Duration.ofMillis(5), Duration.ofMillis(20)))
                .withBatchBytes(16 * 1024);
    }

    @Test
    void aRetryAfterALostAnswerAppendsNothingTwice() throws Exception {
        String topic = TestService.uniqueName("lost-answers");
        direct.admin().createTopic(topic, 2, null);
        proxy.loseAnswerOfNext("/v1/topics/" + topic + "/records", 6);
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (Producer producer = viaProxy.producer(fastRetries())) {
            for (int i = 0; i < 2_000; i++) {
                sent.add(producer.send(ProducerRecord.of(topic, "k" + (i % 7), "v" + i)));
            }
            producer.flush();
        }
        assertThat(proxy.lostAnswers.get()).as("answers lost after the service appended").isEqualTo(6);
        assertThat(sent).allMatch(f -> !f.isCompletedExceptionally());
        assertThat(sent.stream().map(CompletableFuture::join).filter(RecordMetadata::duplicate))
                .as("records answered from the service's memory of the lost requests").isNotEmpty();
        Map<Integer, List<ConsumerRecord>> read = ProduceConsumeTest.readAll(direct, topic, 2, 2_000, true);
        Set<String> values = new HashSet<>();
        read.values().forEach(rs -> rs.forEach(r -> assertThat(values.add(r.valueAsString()))
                .as("%s once", r.valueAsString()).isTrue()));
        assertThat(values).hasSize(2_000);
        // Every acknowledged offset holds the record it was acknowledged for.
        for (int i = 0; i < sent.size(); i++) {
            RecordMetadata m = sent.get(i).join();
            assertThat(read.get(m.partition()).get((int) m.offset()).valueAsString()).isEqualTo("v" + i);
        }
    }

    @Test
    void theProducerWaitsRetryAfterOn503And429() throws Exception {
        String topic = TestService.uniqueName("retry-after");
        direct.admin().createTopic(topic, 1, null);
        for (int status : new int[]{503, 429}) {
            proxy.arrivals.clear();
            proxy.refuseNext("/v1/topics/" + topic + "/records", 2, status,
                    status == 503 ? "hot-tier-full" : "quota-exceeded", 1);
            try (Producer producer = viaProxy.producer(fastRetries())) {
                RecordMetadata m = producer.send(ProducerRecord.of(topic, null, "after " + status))
                        .get(30, TimeUnit.SECONDS);
                assertThat(m.duplicate()).isFalse();
            }
            assertThat(proxy.arrivals).hasSize(3);
            for (int i = 1; i < 3; i++) {
                assertThat(Duration.ofNanos(proxy.arrivals.get(i) - proxy.arrivals.get(i - 1)))
                        .as("retry %d after a %d with Retry-After: 1", i, status)
                        .isGreaterThanOrEqualTo(Duration.ofMillis(990));
            }
        }
        assertThat(ProduceConsumeTest.readAll(direct, topic, 1, 2, true).get(0))
                .extracting(ConsumerRecord::valueAsString).containsExactly("after 503", "after 429");
    }

    @Test
    void adminReadsWaitRetryAfterToo() {
        String topic = TestService.uniqueName("admin-retry");
        direct.admin().createTopic(topic, 3, null);
        proxy.arrivals.clear();
        proxy.refuseNext("/v1/topics/" + topic, 1, 503, "service-stopping", 1);
        assertThat(viaProxy.admin().describeTopic(topic).partitions()).isEqualTo(3);
        assertThat(proxy.arrivals).hasSize(2);
        assertThat(Duration.ofNanos(proxy.arrivals.get(1) - proxy.arrivals.get(0)))
                .isGreaterThanOrEqualTo(Duration.ofMillis(990));
    }

    @Test
    void aPollOutlivesAnOutageWhileItLooksUpWhereToStart() {
        String topic = TestService.uniqueName("start-outage");
        direct.admin().createTopic(topic, 1, null);
        try (Producer p = direct.producer(ProducerConfig.defaults())) {
            p.send(ProducerRecord.of(topic, null, "a"));
            p.send(ProducerRecord.of(topic, null, "b")).join();
        }
        TierlogClient noRetries = TierlogClient.builder().url(proxy.url()).token(TestService.ADMIN_TOKEN).maxRetries(0)
                .backoff(new Backoff(Duration.ofMillis(5), Duration.ofMillis(20))).build();
        proxy.arrivals.clear();
        proxy.refuseNext("/v1/topics/" + topic + "/partitions/0/offsets", 2, 503, "service-stopping", 0);
        List<String> got = new ArrayList<>();
        try (Consumer consumer = noRetries.consumer(ConsumerConfig.defaults())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.size() < 2 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.valueAsString()));
            }
        }
        assertThat(got).containsExactly("a", "b");
        assertThat(proxy.arrivals).as("two refused look-ups of the start, then one answered").hasSize(3);
    }

    @Test
    void aBadRequestIsNotRetried() {
        proxy.arrivals.clear();
        proxy.refuseNext("/v1/topics/never", 5, 400, "bad-request", 0);
        assertThatThrownBy(() -> viaProxy.admin().describeTopic("never")).isInstanceOfSatisfying(
                ProblemException.class, e -> assertThat(e.type()).isEqualTo("bad-request"));
        assertThat(proxy.arrivals).hasSize(1);
    }
}
