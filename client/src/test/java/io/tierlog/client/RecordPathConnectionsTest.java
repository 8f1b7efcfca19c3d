package io.tierlog.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The produce path ({@link BlockingExchange}) against the real service: a producer's answers are handled on its few
 * request threads, not on a new thread per answer, as the JDK HttpClient's async path did on a machine with 2 cores
 * (or in a Lambda function with one).
 */
@Tag("slow")
class RecordPathConnectionsTest {

    @Test
    void answersAreHandledOnAFewReusedThreadsNotOnANewThreadPerRequest() throws Exception {
        TierlogClient client = TestService.shared().adminClient();
        String topic = TestService.uniqueName("request-threads");
        client.admin().createTopic(topic, 4, null);
        Set<Thread> completing = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        ProducerConfig config = ProducerConfig.defaults().withBatchBytes(4 * 1024).withLinger(Duration.ofMillis(1));
        try (Producer producer = client.producer(config)) {
            for (int i = 0; i < 4_000; i++) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord(topic, i % 4, null,
                        new byte[200], null, null));
                f.whenComplete((m, e) -> completing.add(Thread.currentThread()));
                sent.add(f);
            }
            producer.flush();
            CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            long requests = producer.stats().requests();
            assertThat(requests).as("requests sent").isGreaterThanOrEqualTo(100);
            // At most one thread per request in flight, plus the one that sends the next while answering (pump).
            assertThat(completing).as("threads that completed the futures of %d requests", requests)
                    .hasSizeLessThanOrEqualTo(2 * ProducerConfig.DEFAULT_MAX_IN_FLIGHT);
        }
    }
}
