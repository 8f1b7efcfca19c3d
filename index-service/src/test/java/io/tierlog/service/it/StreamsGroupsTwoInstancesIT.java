package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import io.tierlog.service.kafka.StreamsApps;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

import static io.tierlog.service.kafka.StreamsApps.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A streams group (Kafka Streams on {@code group.protocol=streams}) whose two members are coordinated by two packaged
 * instances on one hot volume (each answers FindCoordinator with itself): the members share one topology and divide
 * its tasks across both instances. Then the instance coordinating one member is killed with SIGKILL, mid-stream:
 * both members go on through the survivor, every task still runs on exactly one member, and the exactly-once counts
 * come out exact (nothing acknowledged lost, nothing counted twice). Logs under {@code target/it/streams-groups}.
 */
class StreamsGroupsTwoInstancesIT {
    static final String APP = "wordcount-two-instances";
    static final String INPUT = "lines-two-instances";
    static final String OUTPUT = "counts-two-instances";

    private final Path work = Path.of("target", "it", "streams-groups").toAbsolutePath();

    @Test
    void theTasksSpanTwoInstancesAndTheApplicationOutlivesOne() throws Exception {
        KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s");
        List<KafkaStreams> apps = new ArrayList<>();
        try {
            try (Admin admin = KafkaInstances.admin(both.kafkaA())) {
                admin.createTopics(List.of(new NewTopic(INPUT, 4, (short) 1), new NewTopic(OUTPUT, 4, (short) 1)))
                        .all().get();
            }
            KafkaStreams one = wordCount(both.kafkaA(), "one");
            KafkaStreams two = wordCount(both.kafkaB(), "two");
            apps.add(one);
            apps.add(two);
            one.start();
            two.start();
            await("both members run tasks, 8 in all", () -> running(one) && running(two) && activeTasks(one) > 0
                    && activeTasks(two) > 0 && activeTasks(one) + activeTasks(two) == 8);
            produce(both.kafkaA(), List.of("log tier log", "tier cold hot", "log log"));
            awaitCounts(both.kafkaA(), Map.of("log", 4L, "tier", 2L, "cold", 1L, "hot", 1L));

            both.b().process().destroyForcibly().waitFor(); // two's coordinator, SIGKILL
            produce(both.kafkaA(), List.of("log hot", "hot", "cold cold"));
            awaitCounts(both.kafkaA(), Map.of("log", 5L, "hot", 3L, "cold", 3L, "tier", 2L));
            await("every task on exactly one member, through the survivor", () -> {
                try (Admin admin = KafkaInstances.admin(both.kafkaA())) {
                    StreamsGroupDescription g = admin.describeStreamsGroups(List.of(APP)).all().get().get(APP);
                    Set<String> tasks = new TreeSet<>();
                    int count = 0;
                    for (var m : g.members()) {
                        for (var t : m.assignment().activeTasks()) {
                            for (int p : t.partitions()) {
                                tasks.add(t.subtopologyId() + "_" + p);
                                count++;
                            }
                        }
                    }
                    return running(one) && running(two) && tasks.size() == 8 && count == 8;
                }
            });
        } finally {
            apps.forEach(a -> a.close(Duration.ofSeconds(10)));
            both.close();
        }
    }

    private KafkaStreams wordCount(int port, String instance) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(StreamsConfig.STATE_DIR_CONFIG, work.resolve("state-" + instance).toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.METADATA_MAX_AGE_CONFIG), "1000");
        p.put(StreamsConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaStreams(StreamsApps.wordCount(INPUT, OUTPUT), p);
    }

    private static boolean running(KafkaStreams app) {
        assertThat(app.state()).as("no member failed").isNotIn(KafkaStreams.State.ERROR,
                KafkaStreams.State.PENDING_ERROR);
        return app.state() == KafkaStreams.State.RUNNING;
    }

    private static int activeTasks(KafkaStreams app) {
        return app.metadataForLocalThreads().stream().mapToInt(t -> t.activeTasks().size()).sum();
    }

    private static void produce(int port, List<String> lines) throws Exception {
        try (KafkaProducer<String, String> producer = KafkaInstances.producer(port, "lines")) {
            StreamsApps.produce(producer, INPUT, lines);
        }
    }

    private static void awaitCounts(int port, Map<String, Long> expected) {
        StreamsApps.awaitCounts("127.0.0.1:" + port, OUTPUT, expected, "read_committed");
    }
}
