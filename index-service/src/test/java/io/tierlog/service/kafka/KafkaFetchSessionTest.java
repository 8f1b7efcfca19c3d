package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Incremental fetch sessions (KIP-227) over a socket: the exact answers to raw session fetches (only partitions with
 * news, epochs, unknown and closed sessions, forgotten partitions), and a kafka-clients consumer reading everything
 * in order through incremental fetches.
 */
@QuarkusTest
class KafkaFetchSessionTest {
    private static final short V12 = 12; // topics by name, sessions (7+)

    @Inject
    KafkaListener listener;
    @Inject
    KafkaFetch fetch;

    private void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    private void produce(String topic, int partition, int n) throws Exception {
        try (KafkaProducer<String, String> p = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, partition, "k", "v" + i)).get();
            }
        }
    }

    private static FetchRequest fetch(int sessionId, int epoch, String topic, Map<Integer, Long> offsets,
                                      List<Integer> forgotten) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
        offsets.forEach((p, o) -> t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p)
                .setFetchOffset(o).setPartitionMaxBytes(1 << 20)));
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(200).setMinBytes(1)
                .setMaxBytes(1 << 24).setSessionId(sessionId).setSessionEpoch(epoch)
                .setTopics(offsets.isEmpty() ? List.of() : List.of(t));
        if (!forgotten.isEmpty()) {
            data.forgottenTopicsData().add(new FetchRequestData.ForgottenTopic().setTopic(topic).setPartitions(forgotten));
        }
        return new FetchRequest(data, V12);
    }

    /** partition → records count in the answer (partitions the answer names). */
    private static Map<Integer, Integer> named(FetchResponse r) {
        Map<Integer, Integer> out = new HashMap<>();
        for (FetchResponseData.FetchableTopicResponse t : r.data().responses()) {
            for (FetchResponseData.PartitionData p : t.partitions()) {
                int n = 0;
                for (var b : ((Records) p.records()).batches()) {
                    n += (int) (b.nextOffset() - b.baseOffset());
                }
                out.put(p.partitionIndex(), n);
            }
        }
        return out;
    }

    @Test
    void anIncrementalFetchNamesOnlyWhatChanged() throws Exception {
        String topic = KafkaListenerTest.unique("session");
        createTopic(topic, 3);
        produce(topic, 0, 5);
        try (RawKafka raw = new RawKafka(listener.port())) {
            // Epoch 0: a full fetch that starts a session of partitions 0-2; every partition is in the answer.
            FetchResponse full = raw.call(fetch(0, 0, topic, Map.of(0, 0L, 1, 0L, 2, 0L), List.of()));
            assertThat(full.error()).isEqualTo(Errors.NONE);
            int id = full.sessionId();
            assertThat(id).isPositive();
            assertThat(named(full)).isEqualTo(Map.of(0, 5, 1, 0, 2, 0));

            // Epoch 1 names partition 0 at its end: no partition has news, so none is named.
            FetchResponse quiet = raw.call(fetch(id, 1, topic, Map.of(0, 5L), List.of()));
            assertThat(quiet.error()).isEqualTo(Errors.NONE);
            assertThat(quiet.sessionId()).isEqualTo(id);
            assertThat(named(quiet)).isEmpty();

            // Records on partition 1, which the request does not name: the session still fetches it.
            produce(topic, 1, 3);
            FetchResponse news = raw.call(fetch(id, 2, topic, Map.of(), List.of()));
            assertThat(named(news)).isEqualTo(Map.of(1, 3));

            // The same epoch again, or one from another session: refused as Kafka refuses them.
            FetchResponse repeated = raw.call(fetch(id, 2, topic, Map.of(), List.of()));
            assertThat(repeated.error()).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
            assertThat(repeated.data().responses()).isEmpty();
            FetchResponse unknown = raw.call(fetch(id == 1 ? 2 : 1, 1, topic, Map.of(), List.of()));
            assertThat(unknown.error()).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);

            // Forgetting partition 1 (at offset 0 in the session, so it would answer its 3 records again) and
            // moving it along: only partition 2's new record is named.
            produce(topic, 2, 1);
            FetchResponse forgot = raw.call(fetch(id, 3, topic, Map.of(), List.of(1)));
            assertThat(named(forgot)).isEqualTo(Map.of(2, 1));

            // Epoch -1 with the id closes the session (a full fetch without one); its id is then unknown.
            FetchResponse closing = raw.call(fetch(id, -1, topic, Map.of(0, 0L), List.of()));
            assertThat(closing.sessionId()).isZero();
            assertThat(named(closing)).isEqualTo(Map.of(0, 5));
            assertThat(raw.<FetchResponse>call(fetch(id, 4, topic, Map.of(), List.of())).error())
                    .isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
        }
    }

    @Test
    void aConsumerReadsEverythingInOrderThroughIncrementalFetches() throws Exception {
        String topic = KafkaListenerTest.unique("session-consumer");
        createTopic(topic, 3);
        long incrementalBefore = fetch.sessions().incrementalFetches();
        List<TopicPartition> parts = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                new TopicPartition(topic, 2));
        Map<Integer, List<String>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(), Map.of());
             KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            int total = 0;
            // Produce in rounds while consuming, so later fetches are incremental ones finding new records.
            for (int round = 0; round < 10; round++) {
                for (int i = 0; i < 30; i++) {
                    producer.send(new ProducerRecord<>(topic, i % 3, "k", round + "-" + i));
                }
                producer.flush();
                total += 30;
                Instant deadline = Instant.now().plusSeconds(30);
                while (read.values().stream().mapToInt(List::size).sum() < total && Instant.now().isBefore(deadline)) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        List<String> values = read.computeIfAbsent(r.partition(), k -> new ArrayList<>());
                        assertThat(r.offset()).isEqualTo(values.size());
                        values.add(r.value());
                    }
                }
            }
        }
        for (int p = 0; p < 3; p++) {
            List<String> expected = new ArrayList<>();
            for (int round = 0; round < 10; round++) {
                for (int i = p; i < 30; i += 3) {
                    expected.add(round + "-" + i);
                }
            }
            assertThat(read.get(p)).as("partition %d", p).isEqualTo(expected);
        }
        // The consumer used a session: its fetches after the first were incremental.
        assertThat(fetch.sessions().incrementalFetches() - incrementalBefore).isGreaterThanOrEqualTo(10);
    }
}
