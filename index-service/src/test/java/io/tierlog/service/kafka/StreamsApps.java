package io.tierlog.service.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kafka Streams application the listener's Streams tests run (a word count with a repartition topic and a
 * changelog), and the writes, reads and waits around it.
 */
public final class StreamsApps {
    private StreamsApps() {
    }

    /** A condition that may call a client. */
    public interface Check {
        boolean holds() throws Exception;
    }

    /**
     * Lines of {@code input} split into words, re-keyed by word (the repartition topic), counted in an in-memory store
     * named {@code counts} (its changelog), each new count written to {@code output}.
     */
    public static Topology wordCount(String input, String output) {
        return wordCount(input, output, Stores.inMemoryKeyValueStore("counts"));
    }

    /** {@link #wordCount(String, String)} counting in {@code store} (a persistent one keeps its counts on disk). */
    public static Topology wordCount(String input, String output, KeyValueBytesStoreSupplier store) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> List.of(line.split(" ")))
                .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.as(store))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** Creates the application's input and output topics, {@code partitions} each. */
    public static void createTopics(Admin admin, String input, String output, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(input, partitions, (short) 1),
                new NewTopic(output, partitions, (short) 1))).all().get();
    }

    /** Sends {@code lines} to the listener on {@code port} keyed by their index, each acknowledged. */
    static void produce(int port, String topic, List<String> lines) throws Exception {
        try (KafkaProducer<String, String> producer = KafkaClients.producer(port, "all", "none")) {
            produce(producer, topic, lines);
        }
    }

    /** Sends {@code lines} keyed by their index, each acknowledged. */
    public static void produce(KafkaProducer<String, String> producer, String topic, List<String> lines)
            throws Exception {
        for (int i = 0; i < lines.size(); i++) {
            producer.send(new ProducerRecord<>(topic, Integer.toString(i), lines.get(i))).get();
        }
    }

    /**
     * Reads {@code output} from the start, at {@code isolation}, until every expected word's latest count is the one
     * expected (90 s): a count past it (a record counted twice) never matches.
     */
    public static void awaitCounts(String bootstrap, String output, Map<String, Long> expected, String isolation) {
        Map<String, Long> latest = new HashMap<>();
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(p, Serdes.String().deserializer(),
                Serdes.Long().deserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            consumer.partitionsFor(output).forEach(i -> parts.add(new TopicPartition(output, i.partition())));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Instant deadline = Instant.now().plusSeconds(90);
            while (!latest.entrySet().containsAll(expected.entrySet())) {
                assertThat(Instant.now()).as("counts " + expected + ", so far " + latest).isBefore(deadline);
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    latest.put(r.key(), r.value());
                }
            }
        }
    }

    /** Waits until every instance is RUNNING; fails at once if one failed. */
    public static void awaitRunning(KafkaStreams... apps) throws Exception {
        await("every instance RUNNING", () -> {
            for (KafkaStreams a : apps) {
                assertThat(a.state()).as("no instance failed").isNotIn(KafkaStreams.State.ERROR,
                        KafkaStreams.State.PENDING_ERROR);
            }
            return List.of(apps).stream().allMatch(a -> a.state() == KafkaStreams.State.RUNNING);
        });
    }

    /** Polls {@code condition} until it holds (90 s): the clients' progress gives nothing to wait on. */
    public static void await(String what, Check condition) throws Exception {
        Instant deadline = Instant.now().plusSeconds(90);
        while (!condition.holds()) {
            assertThat(Instant.now()).as(what).isBefore(deadline);
            Thread.sleep(50);
        }
    }
}
