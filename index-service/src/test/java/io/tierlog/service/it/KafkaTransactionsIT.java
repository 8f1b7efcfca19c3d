package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions across two packaged instances on one hot volume, one of them killed with SIGKILL mid-stream: a
 * transactional producer commits transactions of one record per partition (partitions led by both instances, the
 * coordinator whichever instance it asked) while instance A is killed. A new producer with the same transactional id
 * then initializes through B, which finishes or aborts whatever the dead instance left, and commits once more. A
 * read_committed consumer must then find: every transaction whose commit was acknowledged, whole; the one in doubt
 * at the kill, whole or not at all; no partial transaction; and no transaction left open (the last stable offset of
 * every partition reaches its high watermark). Logs stay under {@code target/it/kafka-transactions}.
 */
class KafkaTransactionsIT {
    static final String TOPIC = "ledger";
    static final String ID = "mover";
    static final int PARTITIONS = 4;

    private final Path work = Path.of("target", "it", "kafka-transactions").toAbsolutePath();

    @Test
    void acknowledgedCommitsSurviveAnInstanceKilledMidTransactionAndNothingIsLeftHalfDone() throws Exception {
        try (KafkaInstances both = KafkaInstances.start(work, "-Dtierlog.kafka.broker-liveness=3s")) {
            try (Admin admin = KafkaInstances.admin(both.kafkaB())) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            AtomicInteger acknowledged = new AtomicInteger();
            CountDownLatch enough = new CountDownLatch(20);
            Thread mover = new Thread(() -> {
                try (KafkaProducer<String, String> producer = transactional(both.kafkaA(), 10_000, 15_000)) {
                    producer.initTransactions();
                    for (int t = 0; ; t++) {
                        producer.beginTransaction();
                        for (int p = 0; p < PARTITIONS; p++) {
                            producer.send(new ProducerRecord<>(TOPIC, p, null, "t" + t));
                        }
                        producer.commitTransaction();
                        acknowledged.set(t + 1);
                        enough.countDown();
                    }
                } catch (KafkaException | IllegalStateException stopped) {
                    // the instance died under it, or the new producer fenced it
                }
            }, "mover");
            mover.start();
            assertThat(enough.await(90, TimeUnit.SECONDS)).as("20 transactions committed before the kill").isTrue();
            both.a().process().destroyForcibly().waitFor();
            int committedBeforeKill = acknowledged.get();

            try (KafkaProducer<String, String> successor = transactional(both.kafkaB())) {
                successor.initTransactions(); // fences the mover; completes or aborts what A left
                successor.beginTransaction();
                for (int p = 0; p < PARTITIONS; p++) {
                    successor.send(new ProducerRecord<>(TOPIC, p, null, "final"));
                }
                successor.commitTransaction();
            }
            mover.join(TimeUnit.SECONDS.toMillis(120));
            int committed = acknowledged.get();

            Map<String, Integer> copies = readCommitted(both.kafkaB());
            for (int t = 0; t < committed; t++) {
                assertThat(copies.get("t" + t)).as("acknowledged transaction t" + t).isEqualTo(PARTITIONS);
            }
            copies.forEach((value, n) -> assertThat(n).as("transaction " + value + " is whole").isEqualTo(PARTITIONS));
            assertThat(copies).containsKey("final");
            assertThat(copies.size()).as("at most the one in doubt beyond those acknowledged")
                    .isBetween(committed + 1, committed + 2);
            // An HTTP reader at read_committed on the surviving instance sees the same transactions as the consumer.
            assertThat(httpReadCommitted(both.b())).isEqualTo(copies);
            System.out.println("committed " + committedBeforeKill + " before the kill, " + committed
                    + " acknowledged in all; transactions visible: " + copies.size());
        }
    }

    /** Every partition from its start at read_committed, up to its end, which must be its high watermark. */
    private static Map<String, Integer> readCommitted(int port) {
        Map<String, Integer> copies = new HashMap<>();
        try (KafkaConsumer<String, String> committed = consumer(port, "read_committed");
             KafkaConsumer<String, String> all = consumer(port, "read_uncommitted")) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(TOPIC, p));
            }
            // No transaction is left open: every partition's last stable offset reaches its high watermark.
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Map<TopicPartition, Long> stable = committed.endOffsets(partitions);
            Map<TopicPartition, Long> ends = all.endOffsets(partitions);
            while (!stable.equals(ends) && System.nanoTime() < deadline) {
                stable = committed.endOffsets(partitions);
                ends = all.endOffsets(partitions);
            }
            assertThat(stable).as("last stable offsets = high watermarks").isEqualTo(ends);
            Map<TopicPartition, Long> end = ends;
            committed.assign(partitions);
            committed.seekToBeginning(partitions);
            deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline && partitions.stream()
                    .anyMatch(tp -> committed.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, String> r : committed.poll(Duration.ofMillis(500))) {
                    copies.merge(r.value(), 1, Integer::sum);
                }
            }
        }
        return copies;
    }

    /** Every partition from 0 over HTTP at {@code isolation=read_committed}, paged by {@code nextOffset}. */
    private static Map<String, Integer> httpReadCommitted(PackagedService service) throws Exception {
        ObjectMapper json = new ObjectMapper();
        HttpClient http = HttpClient.newHttpClient();
        Map<String, Integer> copies = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            long next = 0;
            for (int page = 0; page < 10_000; page++) {
                HttpResponse<String> r = service.send(http, "GET", "/v1/topics/" + TOPIC + "/partitions/" + p
                        + "/records?isolation=read_committed&maxRecords=7&encoding=base64&offset=" + next, null);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                JsonNode answer = json.readTree(r.body());
                answer.get("records").forEach(rec -> copies.merge(new String(Base64.getDecoder().decode(
                        rec.get("value").asText()), StandardCharsets.UTF_8), 1, Integer::sum));
                next = answer.get("nextOffset").asLong();
                if (next >= answer.get("lastStableOffset").asLong()) {
                    break;
                }
            }
        }
        return copies;
    }

    private static KafkaProducer<String, String> transactional(int port) {
        return transactional(port, 60_000, 30_000);
    }

    /**
     * The mover's producer gives up soon after its instance dies (it can reach no other): with the defaults above its
     * commit blocked 60 s and its close waited out the delivery timeout, and the test waited 2 minutes for it.
     */
    private static KafkaProducer<String, String> transactional(int port, int maxBlockMs, int deliveryTimeoutMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, ID);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(deliveryTimeoutMs));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(maxBlockMs));
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(int port, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
