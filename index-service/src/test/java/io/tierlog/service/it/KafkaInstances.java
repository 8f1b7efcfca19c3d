package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two packaged index-service instances on one hot volume under {@code work} (cleared first), each with its Kafka
 * listener on a free loopback port, started and ready. Closing kills both (SIGKILL).
 */
record KafkaInstances(PackagedService a, int kafkaA, PackagedService b, int kafkaB) implements AutoCloseable {
    static final Duration STARTUP = Duration.ofSeconds(120); // generous: JVM starts are slow on a loaded 2-core machine

    static KafkaInstances start(Path work, String... properties) throws Exception {
        return start(work, List.of(), List.of(), properties);
    }

    /** As {@link #start(Path, String...)}, with {@code onlyA} and {@code onlyB} given to one instance each. */
    static KafkaInstances start(Path work, List<String> onlyA, List<String> onlyB, String... properties)
            throws Exception {
        PackagedService.deleteTree(work);
        Path hot = work.resolve("hot");
        Files.createDirectories(work.resolve("a"));
        Files.createDirectories(work.resolve("b"));
        int kafkaA = freePort();
        int kafkaB = freePort();
        PackagedService a = PackagedService.start(work.resolve("a"), hot, with(properties, onlyA, kafkaA));
        PackagedService b = PackagedService.start(work.resolve("b"), hot, with(properties, onlyB, kafkaB));
        KafkaInstances both = new KafkaInstances(a, kafkaA, b, kafkaB);
        try {
            a.awaitReady(STARTUP);
            b.awaitReady(STARTUP);
        } catch (Exception | AssertionError e) {
            both.close();
            throw e;
        }
        return both;
    }

    private static String[] with(String[] properties, List<String> own, int kafkaPort) {
        List<String> all = new ArrayList<>(List.of(properties));
        all.addAll(own);
        all.add(0, "-Dtierlog.kafka.port=" + kafkaPort);
        return all.toArray(String[]::new);
    }

    /**
     * The instance that made a change, by its audit line ({@code change} then " by="): an Admin sends some requests to
     * any instance it knows, not the one it was pointed at. Fails unless exactly one instance's log holds it.
     */
    PackagedService auditedBy(String change) throws java.io.IOException {
        String line = change + " by=";
        boolean inA = Files.readString(a.log()).contains(line);
        boolean inB = Files.readString(b.log()).contains(line);
        assertThat(inA ^ inB).as("exactly one instance audited \"%s\"", line).isTrue();
        return inA ? a : b;
    }

    /** The instance that is not {@code one}. */
    PackagedService other(PackagedService one) {
        return one == a ? b : a;
    }

    /** {@code one}'s Kafka listener port. */
    int kafkaPort(PackagedService one) {
        return one == a ? kafkaA : kafkaB;
    }

    static Admin admin(int port) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    /**
     * A producer for instances that may die under it: acks=all, short request timeouts, a long delivery timeout
     * (it retries through the survivor) and Metadata refreshed every second; {@code clientId} null: the default.
     */
    static KafkaProducer<String, String> producer(int port, String clientId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        if (clientId != null) {
            p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        }
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "90000");
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /**
     * Sends {@code count} records {@code prefix + i} (i from {@code from}; key the same) round robin over the
     * topic's {@code partitions} and waits until each is acknowledged: from then on each must be read.
     */
    static List<String> sendAcknowledged(KafkaProducer<String, String> producer, String topic, int partitions,
                                         String prefix, int from, int count) throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            String value = prefix + i;
            sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, value, value)));
            values.add(value);
        }
        for (Future<RecordMetadata> f : sent) {
            f.get();
        }
        return values;
    }

    /** Polls until {@code consumed} holds every value of {@code wanted}, or 90 s passed. */
    static void pollUntil(KafkaConsumer<String, String> consumer, Set<String> consumed, Set<String> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!consumed.containsAll(wanted) && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                consumed.add(r.value());
            }
        }
    }

    static int freePort() throws Exception {
        return PackagedService.freePort();
    }

    @Override
    public void close() throws InterruptedException {
        a.process().destroyForcibly().waitFor();
        b.process().destroyForcibly().waitFor();
    }
}
