package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.tierlog.log.HotLog;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka transactions end to end with kafka-clients' own transactional producer and read_committed consumer against
 * the listener: commits are seen, aborts are not, an open transaction holds back every later record of its
 * partition (the last stable offset), a new producer with the same transactional id fences the old one and aborts
 * what it left open, offsets sent to a transaction commit with it, a dead producer's transaction is aborted after its
 * timeout, aborted transactions stay aborted once their segments are cold, and Admin's
 * listTransactions/describeTransactions (what {@code kafka-transactions} runs) show them.
 */
@QuarkusTest
class KafkaTransactionsTest {
    @Inject
    KafkaListener listener;
    @Inject
    TieredStorage tiered;

    @Test
    void readCommittedConsumersSeeCommitsAndNotAborts() throws Exception {
        String topic = topic("txn-commit", 2);
        try (KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, "a" + i));
                producer.send(new ProducerRecord<>(topic, 1, null, "b" + i));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, "x" + i));
            }
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "c0"));
            producer.send(new ProducerRecord<>(topic, 0, null, "c1"));
            producer.commitTransaction();
        }
        assertThat(values(read(topic, "read_committed"), 0))
                .containsExactly("a0", "a1", "a2", "a3", "a4", "c0", "c1");
        assertThat(values(read(topic, "read_committed"), 1))
                .containsExactly("b0", "b1", "b2", "b3", "b4");
        assertThat(values(read(topic, "read_uncommitted"), 0))
                .containsExactly("a0", "a1", "a2", "a3", "a4", "x0", "x1", "x2", "c0", "c1");
        // HTTP reads every data record (read_uncommitted, as Kafka's default) and never a marker: offsets 5, 9 and
        // 12 are the three transactions' markers.
        var page = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0&maxRecords=100")
                .then().statusCode(200).extract().jsonPath();
        assertThat(page.getList("records.offset", Long.class)).containsExactly(0L, 1L, 2L, 3L, 4L, 6L, 7L, 8L, 10L, 11L);
        assertThat(page.getLong("highWatermark")).isEqualTo(13);
    }

    @Test
    void anOpenTransactionHoldsBackEveryLaterRecordOfItsPartition() throws Exception {
        String topic = topic("txn-open", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000);
             KafkaProducer<String, String> plain = KafkaClients.producer(listener.port(), "all", "none")) {
            plain.send(new ProducerRecord<>(topic, 0, null, "before")).get();
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "t0"));
            producer.send(new ProducerRecord<>(topic, 0, null, "t1"));
            producer.flush();
            plain.send(new ProducerRecord<>(topic, 0, null, "after")).get();
            try (KafkaConsumer<String, String> consumer = consumer("read_committed")) {
                // ListOffsets at read_committed answers the last stable offset: the open transaction's first offset.
                assertThat(consumer.endOffsets(List.of(tp))).containsEntry(tp, 1L);
            }
            assertThat(values(read(topic, "read_committed"), 0)).containsExactly("before");
            producer.commitTransaction();
        }
        assertThat(values(read(topic, "read_committed"), 0))
                .containsExactly("before", "t0", "t1", "after");
    }

    @Test
    void aNewProducerWithTheSameIdFencesTheOldAndAbortsWhatItLeftOpen() throws Exception {
        String topic = topic("txn-fence", 1);
        String id = KafkaListenerTest.unique("tx");
        try (KafkaProducer<String, String> zombie = transactional(id, 60_000)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, null, "zombie"));
            zombie.flush();
            try (KafkaProducer<String, String> fresh = transactional(id, 60_000)) {
                fresh.initTransactions();
                assertThatThrownBy(zombie::commitTransaction).isInstanceOf(ProducerFencedException.class);
                fresh.beginTransaction();
                fresh.send(new ProducerRecord<>(topic, 0, null, "fresh"));
                fresh.commitTransaction();
            }
        }
        assertThat(values(read(topic, "read_committed"), 0)).containsExactly("fresh");
    }

    @Test
    void offsetsSentToATransactionAreCommittedWithItAndOnlyThen() throws Exception {
        String topic = topic("txn-offsets", 1);
        String group = KafkaListenerTest.unique("txn-group");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000);
             Admin admin = KafkaClients.admin(listener.port())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "out-1"));
            producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(1)), new ConsumerGroupMetadata(group));
            producer.abortTransaction();
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()).isEmpty();

            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "out-2"));
            producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(2, "stream-time=42")),
                    new ConsumerGroupMetadata(group));
            producer.commitTransaction();
            OffsetAndMetadata committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                    .get(tp);
            assertThat(committed.offset()).isEqualTo(2);
            assertThat(committed.metadata()).as("the metadata commits with the transaction").isEqualTo("stream-time=42");
        }
    }

    /** Offsets of a topic deleted before the commit are dropped; the commit goes through rather than hang. */
    @Test
    void offsetsOfATopicDeletedBeforeTheCommitDoNotHoldItBack() throws Exception {
        String input = topic("txn-gone", 1);
        String output = topic("txn-out", 1);
        String group = KafkaListenerTest.unique("txn-group");
        KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(output, 0, null, "kept"));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(input, 0), new OffsetAndMetadata(0)),
                    new ConsumerGroupMetadata(group));
            admin.deleteTopics(List.of(input)).all().get();
            producer.commitTransaction();
        } finally {
            producer.close(Duration.ofSeconds(5)); // a commit that never ends would keep close() waiting for good
        }
        assertThat(values(read(output, "read_committed"), 0)).containsExactly("kept");
    }

    @Test
    void aTransactionPastItsTimeoutIsAbortedAndItsPartitionsMoveOn() throws Exception {
        String topic = topic("txn-timeout", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        KafkaProducer<String, String> dead = transactional(KafkaListenerTest.unique("tx"), 1_000);
        dead.initTransactions();
        dead.beginTransaction();
        dead.send(new ProducerRecord<>(topic, 0, null, "never"));
        dead.flush();
        // The producer goes away without ending its transaction, as a crashed one does.
        dead.close(Duration.ZERO);
        try (KafkaConsumer<String, String> consumer = consumer("read_committed")) {
            assertThat(consumer.endOffsets(List.of(tp))).containsEntry(tp, 0L);
            // The sweep (every 500 ms in tests) aborts it after its 1 s; the abort marker is offset 1.
            assertThat(waitFor(() -> consumer.endOffsets(List.of(tp)).get(tp), end -> end == 2L)).isEqualTo(2L);
        }
        assertThat(read(topic, "read_committed")).isEmpty();
    }

    /**
     * Transactions whose segments moved to the cold tier and left the hot one, and whose entries retention then
     * trimmed from the hot transaction index: a read_committed consumer from offset 0 still drops the aborted ones,
     * told of them by the cold segments' sidecars, and so does a share group at read_committed.
     */
    @Test
    void abortedTransactionsStayAbortedOnceTheirSegmentsAreCold() throws Exception {
        String topic = KafkaListenerTest.unique("txn-cold");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("segment.bytes", "4096",
                    "local.retention.bytes", "0")))).all().get();
        }
        List<String> committed = new ArrayList<>();
        try (KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000)) {
            producer.initTransactions();
            for (int t = 0; t < 20; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    String value = "t" + t + "-" + i + "-" + "x".repeat(100);
                    producer.send(new ProducerRecord<>(topic, 0, null, value)).get();
                    if (t % 2 == 0) {
                        committed.add(value);
                    }
                }
                if (t % 2 == 0) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
        io.tierlog.log.TopicPartition tp = new io.tierlog.log.TopicPartition(topic, 0);
        Path index = tiered.dataDir().resolve(tp.dirName()).resolve("txn.index");
        long indexBefore = Files.size(index);
        tiered.runTieringPass();
        tiered.runRetentionPass();
        var state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).as(state.prettify()).isGreaterThan(3);
        long hotStart = state.getLong("partitionStates[0].hotStartOffset");
        assertThat(hotStart).isGreaterThan(50);
        assertThat(Files.size(index)).as("the hot index was trimmed").isLessThan(indexBefore);
        assertThat(new HotLog(tiered.dataDir()).transactions(tp).aborted(0, hotStart))
                .as("no aborted transaction below the hot tier is left in the hot index").isEmpty();
        assertThat(values(read(topic, "read_committed"), 0))
                .containsExactlyElementsOf(committed);

        // A share group at read_committed passes over the cold aborted records too (ADR 0067).
        String group = KafkaListenerTest.unique("txn-cold-share");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.isolation.level", "read_committed"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        List<String> shared = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = KafkaClients.shareConsumer(listener.port(), group,
                "implicit", Map.of())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (shared.size() < committed.size() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> shared.add(r.value()));
            }
            consumer.poll(Duration.ofMillis(500)).forEach(r -> shared.add(r.value()));
        }
        assertThat(shared).containsExactlyInAnyOrderElementsOf(committed);
    }

    /**
     * Compaction follows Kafka's transaction rules: the value an aborted transaction wrote for a key is dropped and
     * never shadows the committed value before it (which a cleaner that mapped it as the key's latest would drop,
     * leaving read_committed consumers neither). Checked on whichever tier serves the read after a compaction pass
     * of both tiers, then on the cold tier once retention evicted the hot segments.
     */
    @Test
    void compactionDropsAnAbortedValueAndKeepsTheCommittedValueItWouldHaveShadowed() throws Exception {
        String topic = KafkaListenerTest.unique("txn-compact");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact", "segment.bytes", "1024", "local.retention.bytes", "0")))).all().get();
        }
        String pad = "x".repeat(200);
        try (KafkaProducer<String, String> producer = transactional(KafkaListenerTest.unique("tx"), 60_000);
             KafkaProducer<String, String> plain = KafkaClients.producer(listener.port(), "all", "none")) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "v1"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "v2"));
            producer.flush();
            producer.abortTransaction();
            for (int i = 0; i < 20; i++) {
                plain.send(new ProducerRecord<>(topic, 0, "pad" + (i % 4), i + pad)).get();
            }
        }
        tiered.runTieringPass();
        assertThat(tiered.runCompactionPass()).as("both tiers cleaned the partition").isEqualTo(2);
        assertCommittedValueOfKIsV1AndV2IsGone(topic);

        tiered.runRetentionPass();
        long hotStart = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                .getLong("partitionStates[0].hotStartOffset");
        assertThat(hotStart).as("k's records are now read from the cold tier").isGreaterThan(3);
        assertCommittedValueOfKIsV1AndV2IsGone(topic);
    }

    private void assertCommittedValueOfKIsV1AndV2IsGone(String topic) {
        List<ConsumerRecord<String, String>> committed = read(topic, "read_committed");
        assertThat(committed.stream().filter(r -> "k".equals(r.key())).map(ConsumerRecord::value))
                .containsExactly("v1");
        assertThat(values(read(topic, "read_uncommitted"), 0)).contains("v1").doesNotContain("v2");
    }

    @Test
    void adminListsAndDescribesTransactions() throws Exception {
        String topic = topic("txn-describe", 2);
        String id = KafkaListenerTest.unique("tx");
        try (KafkaProducer<String, String> producer = transactional(id, 60_000);
             Admin admin = KafkaClients.admin(listener.port())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 1, null, "v"));
            producer.flush();
            TransactionDescription open = admin.describeTransactions(List.of(id)).description(id).get();
            assertThat(open.state()).isEqualTo(TransactionState.ONGOING);
            assertThat(open.topicPartitions()).containsExactly(new TopicPartition(topic, 1));
            assertThat(open.transactionStartTimeMs()).isPresent();
            List<TransactionListing> ongoing = new ArrayList<>(admin.listTransactions(
                    new org.apache.kafka.clients.admin.ListTransactionsOptions()
                            .filterStates(List.of(TransactionState.ONGOING))).all().get());
            assertThat(ongoing).extracting(TransactionListing::transactionalId).contains(id);
            // kafka-transactions list --transactional-id-pattern (KIP-1152): RE2J over the whole id.
            assertThat(admin.listTransactions(new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterOnTransactionalIdPattern(id.substring(0, id.length() - 1) + "."))
                    .all().get()).extracting(TransactionListing::transactionalId).containsExactly(id);
            assertThat(admin.listTransactions(new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterOnTransactionalIdPattern(id.substring(1))).all().get())
                    .as("a pattern matches the whole id").isEmpty();
            assertThatThrownBy(() -> admin.listTransactions(new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterOnTransactionalIdPattern("(unclosed")).all().get())
                    .cause().isInstanceOf(org.apache.kafka.common.errors.InvalidRegularExpression.class);
            producer.commitTransaction();
            assertThat(admin.describeTransactions(List.of(id)).description(id).get().state())
                    .isEqualTo(TransactionState.COMPLETE_COMMIT);
        }
    }

    private String topic(String prefix, int partitions) throws Exception {
        String topic = KafkaListenerTest.unique(prefix);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        return topic;
    }

    private KafkaProducer<String, String> transactional(String transactionalId, int timeoutMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(timeoutMs));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer(String isolation) {
        return KafkaClients.consumer(listener.port(), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation));
    }

    /**
     * Every partition of {@code topic} from its start at {@code isolation}, up to the end offsets a consumer at that
     * isolation is told (the last stable offset at read_committed), then one more poll to catch anything beyond.
     */
    private List<ConsumerRecord<String, String>> read(String topic, String isolation) {
        try (KafkaConsumer<String, String> consumer = consumer(isolation)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            List<ConsumerRecord<String, String>> out = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(20);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))
                    && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            return out;
        }
    }

    private static List<String> values(List<ConsumerRecord<String, String>> records, int partition) {
        return records.stream().filter(r -> r.partition() == partition).map(ConsumerRecord::value).toList();
    }

    private static <T> T waitFor(java.util.function.Supplier<T> probe, Predicate<T> done) {
        Instant deadline = Instant.now().plusSeconds(20);
        T last = probe.get();
        while (!done.test(last) && Instant.now().isBefore(deadline)) {
            last = probe.get();
        }
        return last;
    }
}
