package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two packaged index-service instances on one hot volume are two Kafka brokers (docs/kafka.md, "Several
 * instances"). Clients bootstrapped at instance A see both brokers, with partition leadership spread over them;
 * a producer and a group consumer work through both. Then A is killed with SIGKILL: within the broker liveness
 * timeout B stops advertising it, and the same producer and consumer (still bootstrapped at the dead A) carry on
 * through B, nothing acknowledged lost. Logs stay under {@code target/it/kafka-brokers}.
 */
class KafkaBrokersIT {
    static final Duration LIVENESS = Duration.ofSeconds(3);
    /** Liveness timeout plus one refresh period, plus scheduling slack on a loaded shared machine. */
    static final Duration DROPPED_WITHIN = LIVENESS.plus(LIVENESS.dividedBy(3)).plusSeconds(5);
    static final String TOPIC = "spread";
    static final int PARTITIONS = 6;
    static final int RECORDS = 60;

    private final Path work = Path.of("target", "it", "kafka-brokers").toAbsolutePath();

    @Test
    void instancesAreBrokersAndClientsOutliveOne() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=" + LIVENESS)) {
            PackagedService a = both.a();
            int kafkaA = both.kafkaA();
            int kafkaB = both.kafkaB();
            try (Admin adminA = KafkaInstances.admin(kafkaA)) {
                adminA.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
                Set<Integer> ports = awaitBrokers(adminA, 2);
                assertThat(ports).as("both instances advertised, each with its own port")
                        .containsExactlyInAnyOrder(kafkaA, kafkaB);
                TopicDescription topic = adminA.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
                Set<Integer> leaderPorts = topic.partitions().stream().map(p -> p.leader().port())
                        .collect(Collectors.toSet());
                assertThat(leaderPorts).as("partition leaders spread over both instances")
                        .containsExactlyInAnyOrder(kafkaA, kafkaB);
            }

            try (KafkaProducer<String, String> producer = KafkaInstances.producer(kafkaA, null);
                 KafkaConsumer<String, String> consumer = consumer(kafkaA)) {
                consumer.subscribe(List.of(TOPIC));
                Set<String> acked = new HashSet<>(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "v", 0, RECORDS));
                Set<String> consumed = new HashSet<>();
                KafkaInstances.pollUntil(consumer, consumed, acked);

                a.process().destroyForcibly().waitFor();
                long killed = System.nanoTime();
                try (Admin adminB = KafkaInstances.admin(kafkaB)) {
                    while (awaitBrokers(adminB, 1).contains(kafkaA)) {
                        assertThat(Duration.ofNanos(System.nanoTime() - killed))
                                .as("the killed instance is dropped within the liveness timeout")
                                .isLessThan(DROPPED_WITHIN);
                        Thread.sleep(100); // B's registry refreshes on its own timer; nothing to wait on here
                    }
                    Duration dropped = Duration.ofNanos(System.nanoTime() - killed);
                    System.out.println("killed instance dropped from Metadata after " + dropped.toMillis() + " ms");
                    TopicDescription topic = adminB.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
                    assertThat(topic.partitions()).extracting(TopicPartitionInfo::leader).extracting(Node::port)
                            .as("every partition led by the survivor").containsOnly(kafkaB);
                }

                acked.addAll(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "v", RECORDS, RECORDS));
                assertThat(acked).hasSize(2 * RECORDS);
                KafkaInstances.pollUntil(consumer, consumed, acked);
                assertThat(consumed).as("everything acknowledged, before and after the kill, consumed")
                        .containsAll(acked);
            }
        }
    }

    /** The brokers' ports once DescribeCluster lists at least {@code atLeast} of them (or 60 s have passed). */
    private static Set<Integer> awaitBrokers(Admin admin, int atLeast) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            Set<Integer> ports = admin.describeCluster().nodes().get().stream().map(Node::port)
                    .collect(Collectors.toCollection(TreeSet::new));
            if (ports.size() >= atLeast || System.nanoTime() > deadline) {
                return ports;
            }
            Thread.sleep(200); // the other instance's first heartbeat
        }
    }

    private static KafkaConsumer<String, String> consumer(int port) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "brokers-it");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
