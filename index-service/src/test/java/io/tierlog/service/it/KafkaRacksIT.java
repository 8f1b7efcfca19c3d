package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two packaged instances on one hot volume in two racks (availability zones), {@code az-a} and {@code az-b}
 * (docs/kafka.md, "Racks"). Clients of az-b bootstrapped at the az-a instance stay in their zone: a producer that
 * names its rack in its client id is given az-b leaders for every partition, and a consumer with
 * {@code client.rack=az-b} is sent to the az-b instance for every partition (KIP-392's preferred read replica), so
 * the az-a instance appends and serves none of their records, which each instance's own counters show; a consumer
 * of no rack reads through both. Then the az-b instance is killed with SIGKILL, and the same producer and consumer
 * carry on through az-a, nothing acknowledged lost. Logs stay under {@code target/it/kafka-racks}.
 */
class KafkaRacksIT {
    static final Duration LIVENESS = Duration.ofSeconds(3);
    static final String TOPIC = "zoned";
    static final int PARTITIONS = 6;
    static final int RECORDS = 60;
    private static final Pattern FETCHED = Pattern.compile("(?m)^tierlog_fetch_records_total(?:\\{[^}]*})? (\\S+)$");
    private static final Pattern PRODUCED = Pattern.compile("(?m)^tierlog_produce_records_total(?:\\{[^}]*})? (\\S+)$");

    private final Path work = Path.of("target", "it", "kafka-racks").toAbsolutePath();
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void clientsOfARackAreServedInItAndFailOverToAnotherWhenItsInstanceDies() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, List.of("-Dtierlog.kafka.rack=az-a"),
                List.of("-Dtierlog.kafka.rack=az-b"), "-Dtierlog.kafka.broker-liveness=" + LIVENESS)) {
            PackagedService a = both.a();
            PackagedService b = both.b();
            int kafkaA = both.kafkaA();
            int kafkaB = both.kafkaB();
            try (Admin admin = KafkaInstances.admin(kafkaA)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
                Map<Integer, String> racks = awaitRacks(admin, 2);
                assertThat(racks).as("each broker with its rack").containsEntry(kafkaA, "az-a").containsEntry(kafkaB, "az-b");
                TopicDescription topic = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
                for (TopicPartitionInfo p : topic.partitions()) {
                    assertThat(p.replicas()).extracting(Node::port).as("every instance serves every partition")
                            .containsExactlyInAnyOrder(kafkaA, kafkaB);
                    assertThat(p.isr()).containsExactlyInAnyOrderElementsOf(p.replicas());
                    assertThat(p.replicas().get(0)).as("the leader first").isEqualTo(p.leader());
                }
            }

            Set<String> acked = new HashSet<>();
            try (KafkaProducer<String, String> producer = KafkaInstances.producer(kafkaA, "orders-app,tierlog_rack=az-b");
                 KafkaConsumer<String, String> consumer = consumer(kafkaA, "az-b")) {
                double producedA = counter(a, PRODUCED);
                double producedB = counter(b, PRODUCED);
                acked.addAll(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "v", 0, RECORDS));
                assertThat(counter(a, PRODUCED) - producedA).as("the az-a instance appended none").isZero();
                assertThat(counter(b, PRODUCED) - producedB).as("the az-b instance appended all")
                        .isEqualTo(RECORDS);

                double fetchedA = counter(a, FETCHED);
                double fetchedB = counter(b, FETCHED);
                Set<String> consumed = new HashSet<>();
                KafkaInstances.pollUntil(consumer, consumed, acked);
                assertThat(consumed).containsAll(acked);
                assertThat(counter(a, FETCHED) - fetchedA).as("the az-a instance served no record").isZero();
                assertThat(counter(b, FETCHED) - fetchedB).as("the az-b instance served them")
                        .isGreaterThanOrEqualTo(RECORDS);

                try (KafkaConsumer<String, String> anywhere = consumer(kafkaA, null)) {
                    double before = counter(a, FETCHED);
                    KafkaInstances.pollUntil(anywhere, new HashSet<>(), acked);
                    assertThat(counter(a, FETCHED) - before)
                            .as("a consumer of no rack reads the partitions az-a leads from az-a").isPositive();
                }

                b.process().destroyForcibly().waitFor();
                acked.addAll(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "v", RECORDS, RECORDS));
                assertThat(acked).hasSize(2 * RECORDS);
                KafkaInstances.pollUntil(consumer, consumed, acked);
                assertThat(consumed).as("everything acknowledged, before and after az-b's instance died, consumed")
                        .containsAll(acked);
            }
        }
    }

    /** The brokers' racks by port once DescribeCluster lists at least {@code atLeast} of them (or 60 s passed). */
    private static Map<Integer, String> awaitRacks(Admin admin, int atLeast) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            Map<Integer, String> racks = admin.describeCluster().nodes().get().stream()
                    .collect(Collectors.toMap(Node::port, n -> String.valueOf(n.rack())));
            if (racks.size() >= atLeast || System.nanoTime() > deadline) {
                return racks;
            }
            Thread.sleep(200); // the other instance's first heartbeat
        }
    }

    private double counter(PackagedService service, Pattern meter) throws Exception {
        String body = service.send(http, "GET", "/q/metrics", null).body();
        Matcher m = meter.matcher(body);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    /** A consumer of every partition of the topic, from the start, in {@code rack} (null: none). */
    private static KafkaConsumer<String, String> consumer(int port, String rack) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        if (rack != null) {
            p.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        }
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer());
        consumer.assign(IntStream.range(0, PARTITIONS).mapToObj(i -> new TopicPartition(TOPIC, i)).toList());
        return consumer;
    }
}
