package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An idempotent producer streaming through two packaged instances on one hot volume while one of them is killed with
 * SIGKILL: the batches it had in flight to the dead instance are retried through the survivor with the same producer
 * id and sequences. Every acknowledged record must be read, none twice (a retried batch the dead instance had already
 * appended is recognised from the producer state on the shared volume, not appended again), and no send may fail.
 * Logs stay under {@code target/it/kafka-idempotence}.
 */
class KafkaIdempotenceIT {
    static final String TOPIC = "stream";
    static final int PARTITIONS = 4;
    /** Acknowledgements before the kill, and again after it, so batches are in flight to both sides of it. */
    static final int ACKED_EACH_SIDE = 3000;

    private final Path work = Path.of("target", "it", "kafka-idempotence").toAbsolutePath();

    @Test
    void aStreamThroughAnInstanceKilledUnderItLosesNothingAcknowledgedAndDuplicatesNothing() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s")) {
            try (Admin admin = KafkaInstances.admin(both.kafkaB())) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            List<String> failures = new CopyOnWriteArrayList<>();
            AtomicInteger sent = new AtomicInteger();
            CountDownLatch beforeKill = new CountDownLatch(ACKED_EACH_SIDE);
            CountDownLatch afterKill = new CountDownLatch(ACKED_EACH_SIDE);
            AtomicBoolean killed = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            try (KafkaProducer<String, String> producer = producer(both)) {
                Thread stream = new Thread(() -> {
                    while (!stop.get()) {
                        String value = "r" + sent.getAndIncrement();
                        boolean sentAfterKill = killed.get();
                        producer.send(new ProducerRecord<>(TOPIC, Math.floorMod(value.hashCode(), PARTITIONS), value,
                                value), (metadata, e) -> {
                            if (e != null) {
                                failures.add(value + ": " + e);
                                return;
                            }
                            acked.add(value);
                            (sentAfterKill ? afterKill : beforeKill).countDown();
                        });
                    }
                }, "stream");
                stream.start();
                assertThat(beforeKill.await(120, TimeUnit.SECONDS)).as("acknowledged before the kill").isTrue();
                killed.set(true);
                both.a().process().destroyForcibly().waitFor(); // mid-stream: sends keep going meanwhile
                assertThat(afterKill.await(180, TimeUnit.SECONDS)).as("acknowledged through the survivor").isTrue();
                stop.set(true);
                stream.join();
                producer.flush();
            }
            assertThat(failures).as("sends that failed").isEmpty();
            List<String> read = readAll(both.kafkaB());
            System.out.printf("sent %d, acknowledged %d, read %d%n", sent.get(), acked.size(), read.size());
            // Sets, not AssertJ's list assertions, which compare element by element: minutes for 100k records.
            Set<String> distinct = new HashSet<>();
            List<String> twice = new ArrayList<>();
            for (String value : read) {
                if (!distinct.add(value) && twice.size() < 10) {
                    twice.add(value);
                }
            }
            assertThat(twice).as("records read twice (the first ten)").isEmpty();
            Set<String> missing = new HashSet<>(acked);
            missing.removeAll(distinct);
            assertThat(missing).as("acknowledged records not read").isEmpty();
        }
    }

    /** Bootstrapped at both instances, so Metadata outlives the dead one; idempotent, 5 requests in flight. */
    private static KafkaProducer<String, String> producer(KafkaInstances both) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + both.kafkaA() + ",127.0.0.1:" + both.kafkaB());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096"); // small batches: many in flight when the instance dies
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "120000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Every value in the topic, read from the start of each partition up to its end offset at the time of asking. */
    private static List<String> readAll(int port) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> partitions = IntStream.range(0, PARTITIONS)
                    .mapToObj(i -> new TopicPartition(TOPIC, i)).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(partitions));
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))
                    && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(r.value());
                }
            }
            assertThat(partitions).as("every partition read to its end")
                    .allMatch(tp -> consumer.position(tp) >= end.get(tp));
        }
        return values;
    }
}
