package io.tierlog.service.it;

import io.tierlog.service.kafka.LabelledAssignor;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A classic group whose members assign among themselves, its members coordinated by two packaged instances on one
 * hot volume (each answers FindCoordinator with itself, so consumers bootstrapped at different instances wait in
 * their JoinGroups on different instances): one round closes over both, with the leader seeing every member. Then
 * the instance coordinating the member that owns every partition is killed with SIGKILL: that member goes on through
 * the other instance, and the group keeps consuming and committing, nothing acknowledged lost. Logs under {@code target/it/classic-groups}.
 */
class ClassicGroupsTwoInstancesIT {
    static final String TOPIC = "labelled-two-instances";
    static final String GROUP = "labelled-two-instances";

    private final Path work = Path.of("target", "it", "classic-groups").toAbsolutePath();

    @Test
    void aRoundClosesOverTwoInstancesAndTheGroupOutlivesOne() throws Exception {
        KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s",
                "-Dtierlog.kafka.group-initial-rebalance-delay=1s");
        int kafkaA = both.kafkaA();
        int kafkaB = both.kafkaB();
        Map<String, KafkaConsumer<String, String>> consumers = new TreeMap<>();
        try {
            try (Admin admin = KafkaInstances.admin(kafkaA)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 4, (short) 1))).all().get();
            }
            Set<String> acked = new HashSet<>(send(kafkaA, 0, 20));
            LabelledAssignor.told.clear();
            // The leader gives every partition to "a", the member coordinated by the instance to be killed.
            consumers.put("a", consumer(kafkaB, "a"));
            consumers.put("b", consumer(kafkaA, "b"));
            consumers.put("c", consumer(kafkaA, "c"));
            consumers.values().forEach(c -> c.subscribe(List.of(TOPIC)));
            Set<String> consumed = new HashSet<>();
            pollUntil("one round over both instances, and a reading everything", consumers, consumed,
                    () -> List.of("a", "b", "c").stream()
                            .allMatch(l -> "leader-saw:a,b,c".equals(LabelledAssignor.told.get(l)))
                            && consumed.containsAll(acked));
            assertThat(consumers.get("a").assignment()).hasSize(4);
            consumers.get("a").commitSync();

            both.b().process().destroyForcibly().waitFor(); // a's coordinator, SIGKILL
            acked.addAll(send(kafkaA, 20, 20));
            pollUntil("the group consuming on through the surviving instance", consumers, consumed,
                    () -> consumed.containsAll(acked));
            KafkaConsumer<String, String> owner = consumers.values().stream().filter(c -> !c.assignment().isEmpty())
                    .findFirst().orElseThrow();
            owner.commitSync();
            Map<TopicPartition, OffsetAndMetadata> committed = owner.committed(Set.of(new TopicPartition(TOPIC, 0),
                    new TopicPartition(TOPIC, 3)));
            assertThat(committed.values()).extracting(OffsetAndMetadata::offset).containsOnly(10L);
        } finally {
            consumers.values().forEach(c -> c.close(Duration.ofSeconds(5)));
            both.close();
        }
    }

    private static void pollUntil(String what, Map<String, KafkaConsumer<String, String>> consumers,
                                  Set<String> consumed, BooleanSupplier done) {
        Instant deadline = Instant.now().plusSeconds(90);
        while (!done.getAsBoolean()) {
            assertThat(Instant.now()).as(what).isBefore(deadline);
            for (KafkaConsumer<String, String> c : consumers.values()) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    consumed.add(r.value());
                }
            }
        }
    }

    /** {@code count} records over the 4 partitions, each acknowledged; their values. */
    private static List<String> send(int port, int from, int count) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        List<String> values = new java.util.ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, i % 4, null, "v" + i)).get();
                values.add("v" + i);
            }
        }
        return values;
    }

    private static KafkaConsumer<String, String> consumer(int port, String label) {
        Properties p = new Properties();
        p.putAll(LabelledAssignor.consumerConfig(GROUP, label));
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
