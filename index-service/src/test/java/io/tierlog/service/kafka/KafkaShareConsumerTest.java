package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own share consumer (KIP-932, kafka-clients 4.4.0 {@link KafkaShareConsumer}) against the listener, on the
 * share-group engine HTTP's share groups use: consumers take records one at a time whatever the partitions,
 * accept, release (redelivered with a higher delivery count) and reject, a consumer that closes gives back what it
 * held, and an HTTP worker of the same group sees the same per-record state.
 */
@QuarkusTest
class KafkaShareConsumerTest {
    static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    KafkaListener listener;

    private String topicWithRecords(String prefix, int partitions, int perPartition) throws Exception {
        return KafkaClients.topicWithRecords(listener.port(), prefix, partitions, perPartition);
    }

    /** A new share group that starts at the beginning of its topics, set as Kafka users set it. */
    private String earliestGroup(String prefix) throws Exception {
        String group = KafkaListenerTest.unique(prefix);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get();
        }
        return group;
    }

    private KafkaShareConsumer<String, String> consumer(String group, String mode) {
        return KafkaClients.shareConsumer(listener.port(), group, mode, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                "50"));
    }

    @Test
    void twoConsumersShareThePartitionsRecordByRecordEachDeliveredOnce() throws Exception {
        String topic = topicWithRecords("sh", 2, 100);
        String group = earliestGroup("sh-g");
        Map<String, Integer> deliveries = new HashMap<>();
        Map<Integer, Set<Integer>> partitionsByConsumer = new HashMap<>();
        try (KafkaShareConsumer<String, String> a = consumer(group, "implicit");
             KafkaShareConsumer<String, String> b = consumer(group, "implicit")) {
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            List<KafkaShareConsumer<String, String>> both = List.of(a, b);
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (deliveries.size() < 200 && System.nanoTime() < deadline) {
                for (int i = 0; i < 2; i++) {
                    for (ConsumerRecord<String, String> r : both.get(i).poll(Duration.ofMillis(200))) {
                        deliveries.merge(r.value(), 1, Integer::sum);
                        partitionsByConsumer.computeIfAbsent(i, k -> new HashSet<>()).add(r.partition());
                    }
                }
            }
            a.commitSync(); // implicit mode: accepts what the last poll delivered
            b.commitSync();
            try (Admin admin = KafkaClients.admin(listener.port())) {
                assertThat(admin.listGroups().all().get()).filteredOn(g -> g.groupId().equals(group))
                        .singleElement().satisfies(g -> assertThat(g.type()).contains(GroupType.SHARE));
                assertThat(admin.describeShareGroups(List.of(group)).all().get().get(group).members())
                        .as("both consumers are members, each of both partitions").hasSize(2)
                        .allSatisfy(m -> assertThat(m.assignment().topicPartitions()).hasSize(2));
            }
        }
        assertThat(deliveries).hasSize(200);
        assertThat(deliveries.values()).as("each record delivered once").containsOnly(1);
        assertThat(partitionsByConsumer).as("both consumers got records").containsKeys(0, 1);

        // Accepted for good, through the group's one state: an HTTP worker of the group leases nothing of them.
        given().contentType(ContentType.JSON).body("{\"maxRecords\": 500}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease")
                .then().statusCode(200).body("records.size()", org.hamcrest.Matchers.is(0));
    }

    @Test
    void releasedRecordsComeBackWithAHigherDeliveryCountAndRejectedOnesNever() throws Exception {
        String topic = topicWithRecords("shr", 1, 10);
        String group = earliestGroup("shr-g");
        try (KafkaShareConsumer<String, String> c = consumer(group, "explicit")) {
            c.subscribe(List.of(topic));
            Map<String, List<Short>> deliveries = new HashMap<>();
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            // Explicit mode: every record of a poll is acknowledged before the next poll.
            while ((deliveries.size() < 10 || deliveries.get("0-0").size() < 2) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    deliveries.computeIfAbsent(r.value(), v -> new ArrayList<>()).add(r.deliveryCount().orElseThrow());
                    boolean firstOfZero = r.value().equals("0-0") && deliveries.get("0-0").size() == 1;
                    c.acknowledge(r, firstOfZero ? AcknowledgeType.RELEASE
                            : r.value().equals("0-1") ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
                }
                assertThat(c.commitSync()).allSatisfy((tp, error) -> assertThat(error).isEmpty());
            }
            assertThat(deliveries).hasSize(10);
            assertThat(deliveries.get("0-0")).as("released, then delivered again").containsExactly((short) 1, (short) 2);
            assertThat(c.poll(Duration.ofSeconds(2))).as("nothing more: the rejected record never comes back").isEmpty();
            assertThat(deliveries).allSatisfy((v, counts) -> assertThat(counts.size())
                    .isEqualTo(v.equals("0-0") ? 2 : 1));
        }
    }

    @Test
    void whatAClosingConsumerHeldGoesToAnother() throws Exception {
        String topic = topicWithRecords("shc", 1, 20);
        String group = earliestGroup("shc-g");
        List<ConsumerRecord<String, String>> held;
        try (KafkaShareConsumer<String, String> leaving = consumer(group, "explicit")) {
            leaving.subscribe(List.of(topic));
            held = pollUntil(leaving, 1);
            // Closed without acknowledging: the broker releases what it holds.
        }
        long closed = System.nanoTime();
        try (KafkaShareConsumer<String, String> next = consumer(group, "implicit")) {
            next.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = pollUntil(next, 20);
            assertThat(Duration.ofNanos(System.nanoTime() - closed)).as("released at the close, not when the "
                    + "records' 30 s locks ran out").isLessThan(Duration.ofSeconds(15));
            assertThat(got).extracting(ConsumerRecord::value).containsAll(held.stream().map(ConsumerRecord::value).toList());
            assertThat(got).filteredOn(r -> held.stream().anyMatch(h -> h.value().equals(r.value())))
                    .allSatisfy(r -> assertThat(r.deliveryCount()).contains((short) 2));
            next.commitSync();
        }
    }

    /**
     * A topic written in transactions, one committed, one aborted, one committed: the markers take offsets 3, 7 and 11
     * but are no records to deliver. Every data record is delivered once (the group reads uncommitted, Kafka's default
     * {@code share.isolation.level}), and the group's start offset moves past the last marker instead of waiting for
     * an acknowledgement of an offset no consumer was given.
     */
    @Test
    void aShareGroupReadsATransactionalTopicAndItsStartMovesPastTheMarkers() throws Exception {
        String topic = KafkaListenerTest.unique("shtx");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put(org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                KafkaClients.bootstrap(listener.port()));
        pp.put(org.apache.kafka.clients.producer.ProducerConfig.TRANSACTIONAL_ID_CONFIG, KafkaListenerTest.unique("tx"));
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<>(pp,
                new org.apache.kafka.common.serialization.StringSerializer(),
                new org.apache.kafka.common.serialization.StringSerializer())) {
            producer.initTransactions();
            for (int t = 0; t < 3; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null, t + "-" + i));
                }
                producer.flush();
                if (t == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        String group = earliestGroup("shtx-g");
        List<String> got = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = consumer(group, "implicit")) {
            c.subscribe(List.of(topic));
            pollUntil(c, 9).forEach(r -> got.add(r.value()));
            c.poll(Duration.ofMillis(500)).forEach(r -> got.add(r.value())); // nothing more: markers are not records
            c.commitSync();
        }
        assertThat(got).containsExactlyInAnyOrder("0-0", "0-1", "0-2", "1-0", "1-1", "1-2", "2-0", "2-1", "2-2");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            var offsets = admin.listShareGroupOffsets(Map.of(group,
                    new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
            assertThat(offsets.get(new org.apache.kafka.common.TopicPartition(topic, 0)).startOffset())
                    .as("start offset: past the last marker (offset 11)").isEqualTo(12);
        }
        // An HTTP worker of another group leases the same nine records, and no marker.
        given().contentType(ContentType.JSON).body("{\"maxRecords\": 100}")
                .post("/v1/share-groups/" + earliestGroup("shtx-h") + "/topics/" + topic + "/lease")
                .then().statusCode(200).body("records.size()", org.hamcrest.Matchers.is(9))
                .body("records.offset", org.hamcrest.Matchers.everyItem(org.hamcrest.Matchers.not(org.hamcrest.Matchers.oneOf(3, 7, 11))));
    }

    /** Polls until {@code n} records arrived (or {@link #PATIENCE} passed); acknowledges nothing itself. */
    private static List<ConsumerRecord<String, String>> pollUntil(KafkaShareConsumer<String, String> c, int n) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            c.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }
}
