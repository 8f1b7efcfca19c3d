package io.tierlog.service.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka share consumers (KIP-932) over two packaged instances on one hot volume: the share group's per-record state
 * is the volume's, so two consumers, each bootstrapped at a different instance, take records from both; then one
 * instance is killed with SIGKILL mid-stream. The consumers carry on through the survivor, records the dead instance
 * had handed out come back when their locks run out, and every acknowledged record is delivered (at least once;
 * the ones delivered twice are exactly those). Finally an HTTP lease of the group finds nothing left. Logs stay under
 * {@code target/it/kafka-share-groups}.
 */
class KafkaShareGroupsIT {
    static final Duration LIVENESS = Duration.ofSeconds(3);
    /**
     * Long enough for a consumer to acknowledge a fetch made while the cluster fails over: with 3 s, one CI run (at
     * f971144) saw a whole fetch of 50 records made after the kill come back after its lock, acknowledged too late.
     */
    static final Duration LOCK = Duration.ofSeconds(8);
    static final String TOPIC = "jobs";
    static final String GROUP = "workers";
    static final int PARTITIONS = 4;
    static final int RECORDS = 400;

    private final Path work = Path.of("target", "it", "kafka-share-groups").toAbsolutePath();

    @Test
    void consumersOnTwoInstancesShareRecordsAndOutliveOneOfThem() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=" + LIVENESS,
                "-Dtierlog.kafka.share-record-lock-duration=" + LOCK.toSeconds() + "s")) {
            try (Admin admin = KafkaInstances.admin(both.kafkaA())) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, GROUP), List.of(
                        new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                                AlterConfigOp.OpType.SET)))).all().get();
            }
            Set<String> acked = new HashSet<>();
            List<String> delivered = new ArrayList<>();
            try (KafkaProducer<String, String> producer = KafkaInstances.producer(both.kafkaB(), null);
                 KafkaShareConsumer<String, String> viaA = consumer(both.kafkaA());
                 KafkaShareConsumer<String, String> viaB = consumer(both.kafkaB())) {
                viaA.subscribe(List.of(TOPIC));
                viaB.subscribe(List.of(TOPIC));
                acked.addAll(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "job-", 0, RECORDS));
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (delivered.size() < RECORDS / 2 && System.nanoTime() < deadline) {
                    poll(viaA, delivered);
                    poll(viaB, delivered);
                }
                both.a().process().destroyForcibly().waitFor(); // mid-stream: A holds some records unacknowledged
                // Handed out before the kill: what the polls returned, and what each consumer had already fetched
                // (up to max.poll.records, one fetch) and returns at its next poll (seen in CI at bf1b69e: 50 records
                // of one fetch, buffered at the kill, acknowledged to no one and delivered again after their lock).
                poll(viaA, delivered);
                poll(viaB, delivered);
                Set<String> beforeKill = new HashSet<>(delivered);

                acked.addAll(KafkaInstances.sendAcknowledged(producer, TOPIC, PARTITIONS, "job-", RECORDS, RECORDS));
                // Until everything was delivered and then nothing more came for a lock and 2 s: records whose
                // acknowledgements went to the dead instance come back once their locks run out, and each was locked
                // before the last delivery (the kill came first).
                deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                long quietSince = System.nanoTime();
                while (System.nanoTime() < deadline && (!new HashSet<>(delivered).containsAll(acked)
                        || System.nanoTime() - quietSince < LOCK.plusSeconds(2).toNanos())) {
                    int before = delivered.size();
                    poll(viaA, delivered);
                    poll(viaB, delivered);
                    if (delivered.size() > before) {
                        quietSince = System.nanoTime();
                    }
                }
                viaA.commitSync(Duration.ofSeconds(10));
                viaB.commitSync(Duration.ofSeconds(10));

                assertThat(new HashSet<>(delivered)).as("every acknowledged record delivered").containsAll(acked);
                Set<String> seen = new HashSet<>();
                List<String> again = delivered.stream().filter(v -> !seen.add(v)).toList();
                assertThat(beforeKill).as("only records handed out before the kill are delivered twice")
                        .containsAll(again);
                System.out.println("delivered " + delivered.size() + " for " + acked.size() + " records; again: "
                        + again.size());
            }

            HttpResponse<String> lease = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                            both.b().base() + "/v1/share-groups/" + GROUP + "/topics/" + TOPIC + "/lease"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"maxRecords\": 1000}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(lease.statusCode()).isEqualTo(200);
            assertThat(lease.body()).as("all accepted: nothing left to lease").contains("\"records\":[]");
        }
    }

    /** Polls once; implicit mode accepts what the previous poll delivered. */
    private static void poll(KafkaShareConsumer<String, String> consumer, List<String> delivered) {
        try {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                delivered.add(r.value());
            }
        } catch (org.apache.kafka.common.KafkaException brokerGone) {
            // A request to the killed instance failed; the client moves to the survivor by itself.
        }
    }

    private static KafkaShareConsumer<String, String> consumer(int port) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put("share.acknowledgement.mode", "implicit");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
