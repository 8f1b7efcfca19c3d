package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.internals.TopicPartitionMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static io.tierlog.service.kafka.StreamsApps.await;
import static io.tierlog.service.kafka.StreamsApps.awaitRunning;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Kafka Streams 4.4.0 application against the listener: a word count with a repartition topic and a changelog
 * topic (both created by Streams through CreateTopics), counted in memory and written to an output topic. Two
 * instances divide the tasks with Streams' own assignor in Kafka's classic rounds; when one closes, the other takes
 * its tasks, restores their counts from the changelog and counts on. Seen failing with the service assigning
 * classic groups itself (Streams' assignor gets no assignment user data).
 */
@QuarkusTest
class KafkaStreamsTest {
    private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

    @Inject
    KafkaListener listener;

    @TempDir
    Path stateDir;

    private KafkaStreams wordCount(String app, String input, String output, String instance) {
        return wordCount(app, input, output, instance, StreamsConfig.AT_LEAST_ONCE);
    }

    private KafkaStreams wordCount(String app, String input, String output, String instance, String guarantee) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(instance).toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "300");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        return new KafkaStreams(StreamsApps.wordCount(input, output), p);
    }

    private void produce(String topic, List<String> lines) throws Exception {
        StreamsApps.produce(listener.port(), topic, lines);
    }

    private void awaitCounts(String output, Map<String, Long> expected) {
        awaitCounts(output, expected, "read_uncommitted");
    }

    private void awaitCounts(String output, Map<String, Long> expected, String isolation) {
        StreamsApps.awaitCounts(KafkaClients.bootstrap(listener.port()), output, expected, isolation);
    }

    /**
     * Exactly-once (`exactly_once_v2`, KIP-447): every task's output, changelog writes and input offsets commit in one
     * transaction per commit interval, and a read_committed reader of the output sees the counts; the application's
     * transactional producer is listed by ListTransactions.
     */
    @Test
    void exactlyOnceV2CommitsOutputAndOffsetsInTransactions() throws Exception {
        String app = "wordcount-eos-" + RUN;
        String input = "lines-eos-" + RUN;
        String output = "word-counts-eos-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 2);
        }
        try (KafkaStreams eos = wordCount(app, input, output, "eos", StreamsConfig.EXACTLY_ONCE_V2)) {
            eos.start();
            awaitRunning(eos);
            produce(input, List.of("log tier log", "tier cold hot", "log log"));
            awaitCounts(output, Map.of("log", 4L, "tier", 2L, "cold", 1L, "hot", 1L), "read_committed");
            try (Admin admin = KafkaClients.admin(listener.port())) {
                assertThat(admin.listTransactions().all().get())
                        .as("the application's transactional producer")
                        .anyMatch(t -> t.transactionalId().startsWith(app + "-"));
                Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
                admin.listConsumerGroupOffsets(app).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
                    if (tp.topic().equals(input) && o.offset() > 0) {
                        committed.put(tp, o);
                    }
                });
                assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum())
                        .as("input offsets committed in the transactions").isEqualTo(3);
                // Streams keeps each input partition's stream time in the commit's metadata and reads it back
                // when a task starts again (windows and grace periods go by it).
                committed.forEach((tp, o) -> assertThat(TopicPartitionMetadata.decode(o.metadata()).partitionTime())
                        .as("%s: the stream time committed with its offset", tp).isPositive());
            }
        }
    }

    @Test
    void twoInstancesDivideTheTasksAndOneTakesOverTheOthersCountsWhenItCloses() throws Exception {
        String app = "wordcount-" + RUN;
        String input = "lines-" + RUN;
        String output = "word-counts-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 4);
        }
        try (KafkaStreams one = wordCount(app, input, output, "one");
             KafkaStreams two = wordCount(app, input, output, "two")) {
            one.start();
            two.start();
            awaitRunning(one, two);
            produce(input, List.of("log tier log", "tier cold hot", "log log"));
            awaitCounts(output, Map.of("log", 4L, "tier", 2L, "cold", 1L, "hot", 1L));
            int tasksOfOne = one.metadataForLocalThreads().iterator().next().activeTasks().size();
            int tasksOfTwo = two.metadataForLocalThreads().iterator().next().activeTasks().size();
            assertThat(tasksOfOne).as("both instances have tasks").isPositive();
            assertThat(tasksOfTwo).isPositive();

            try (Admin admin = KafkaClients.admin(listener.port())) {
                Set<String> topics = admin.listTopics().names().get();
                assertThat(topics).as("the repartition and changelog topics Streams created")
                        .contains(app + "-counts-repartition", app + "-counts-changelog");
                assertThat(admin.describeConsumerGroups(List.of(app)).all().get().get(app).partitionAssignor())
                        .isEqualTo("stream");
            }

            two.close(Duration.ofSeconds(30));
            // Awaited, not asserted once running: one may still be RUNNING on its old tasks when two has left.
            await("one has every task", () -> one.state() == KafkaStreams.State.RUNNING
                    && one.metadataForLocalThreads().iterator().next().activeTasks().size()
                    == tasksOfOne + tasksOfTwo);
            produce(input, List.of("log hot", "hot"));
            awaitCounts(output, Map.of("log", 5L, "hot", 3L));
        }
    }
}
