package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Consumer groups over the Kafka listener, through the coordinator HTTP members use: two kafka-clients consumers
 * (KIP-848 {@code group.protocol=consumer}, and classic) share a 4-partition topic 2 and 2; when one leaves, the
 * other gets all 4 and resumes where the leaver committed; an HTTP member and a Kafka consumer share one group;
 * Admin lists, describes and deletes offsets.
 */
@QuarkusTest
class KafkaGroupsTest {
    private static final Duration ROUND = Duration.ofMillis(100);

    @Inject
    KafkaListener listener;

    private void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    /** {@code perPartition} records to each of the topic's partitions, values "p-i". */
    private void produce(String topic, int partitions, int from, int perPartition) throws Exception {
        try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int p = 0; p < partitions; p++) {
                for (int i = from; i < from + perPartition; i++) {
                    producer.send(new ProducerRecord<>(topic, p, null, p + "-" + i));
                }
            }
            producer.flush();
        }
    }

    private KafkaConsumer<String, String> consumer(String group, String protocol) {
        Map<String, String> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
            c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        }
        return KafkaClients.consumer(listener.port(), c);
    }

    /** One consumer's view: what it read per partition, in order. */
    private static final class Reader {
        final KafkaConsumer<String, String> consumer;
        final Map<Integer, List<Long>> offsets = new HashMap<>();

        Reader(KafkaConsumer<String, String> consumer) {
            this.consumer = consumer;
        }

        void poll() {
            for (ConsumerRecord<String, String> r : consumer.poll(ROUND)) {
                offsets.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
            }
        }

        Set<Integer> assigned() {
            Set<Integer> out = new HashSet<>();
            consumer.assignment().forEach(tp -> out.add(tp.partition()));
            return out;
        }

        int count() {
            return offsets.values().stream().mapToInt(List::size).sum();
        }
    }

    private static void pollUntil(List<Reader> readers, BooleanSupplier done, String what) {
        Instant deadline = Instant.now().plusSeconds(90);
        while (!done.getAsBoolean()) {
            assertThat(Instant.now()).as("waiting for " + what).isBefore(deadline);
            readers.forEach(Reader::poll);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"consumer", "classic"})
    void twoConsumersShareFourPartitionsAndTheSurvivorResumesFromCommits(String protocol) throws Exception {
        String topic = KafkaListenerTest.unique("grp-" + protocol);
        String group = KafkaListenerTest.unique("g-" + protocol);
        createTopic(topic, 4);
        Reader a = new Reader(consumer(group, protocol));
        Reader b = new Reader(consumer(group, protocol));
        boolean bClosed = false;
        try {
            a.consumer.subscribe(List.of(topic));
            b.consumer.subscribe(List.of(topic));
            List<Reader> both = List.of(a, b);
            pollUntil(both, () -> a.assigned().size() == 2 && b.assigned().size() == 2, "2 + 2 partitions");
            // Produced once the group is stable, so no partition moves while it is read.
            produce(topic, 4, 0, 10);
            pollUntil(both, () -> a.count() + b.count() == 40, "all 40 records");
            assertThat(a.assigned()).doesNotContainAnyElementsOf(b.assigned());
            // Every record once: each partition read by one member, from 0 to 9.
            Map<Integer, List<Long>> all = new HashMap<>(a.offsets);
            b.offsets.forEach((p, o) -> assertThat(all.put(p, o)).as("partition %d read twice", p).isNull());
            all.values().forEach(o -> assertThat(o).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L));
            a.consumer.commitSync();
            b.consumer.commitSync();

            try (Admin admin = KafkaClients.admin(listener.port())) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.members()).hasSize(2);
                assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(admin.listGroups().all().get()).extracting(GroupListing::groupId).contains(group);
            }
            // The same group over HTTP: two members, 2 partitions each.
            JsonPath http = given().get("/v1/groups/" + group).then().statusCode(200).extract().jsonPath();
            assertThat(http.getList("members")).hasSize(2);

            Set<Integer> inherited = b.assigned();
            b.consumer.close();
            bClosed = true;
            pollUntil(List.of(a), () -> a.assigned().size() == 4, "the survivor to hold all 4");
            produce(topic, 4, 10, 1);
            pollUntil(List.of(a), () -> a.offsets.values().stream().filter(o -> o.contains(10L)).count() == 4,
                    "offset 10 of every partition");
            // B committed offset 10 on its partitions: the survivor starts there, nothing read twice or skipped.
            for (int p : inherited) {
                assertThat(a.offsets.get(p)).as("partition " + p).containsExactly(10L);
            }
            a.consumer.commitSync();
            Map<TopicPartition, OffsetAndMetadata> committed = a.consumer.committed(
                    Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1), new TopicPartition(topic, 2),
                            new TopicPartition(topic, 3)));
            committed.values().forEach(o -> assertThat(o.offset()).isEqualTo(11));
        } finally {
            a.consumer.close();
            if (!bClosed) {
                b.consumer.close();
            }
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            // Empty now: its offsets can be deleted, one partition at a time.
            admin.deleteConsumerGroupOffsets(group, Set.of(new TopicPartition(topic, 0))).all().get();
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get())
                    .doesNotContainKey(new TopicPartition(topic, 0)).containsKey(new TopicPartition(topic, 1));
        }
    }

    @Test
    void anHttpMemberAndAKafkaConsumerShareAGroup() throws Exception {
        String topic = KafkaListenerTest.unique("grp-mixed");
        String group = KafkaListenerTest.unique("g-mixed");
        createTopic(topic, 4);
        produce(topic, 4, 0, 5);
        JsonPath joined = heartbeat(group, null, 0, topic, null);
        String memberId = joined.getString("memberId");
        assertThat(partitionsOf(joined)).hasSize(4);
        Reader kafka = new Reader(consumer(group, "consumer"));
        try {
            kafka.consumer.subscribe(List.of(topic));
            JsonPath[] last = {joined};
            pollUntil(List.of(kafka), () -> {
                // The HTTP member heartbeats, listing what it still owns: what it was last given.
                List<Integer> owned = partitionsOf(last[0]);
                last[0] = heartbeat(group, memberId, last[0].getInt("memberEpoch"), topic, owned);
                return partitionsOf(last[0]).size() == 2 && kafka.assigned().size() == 2;
            }, "2 partitions over HTTP, 2 over Kafka");
            assertThat(kafka.assigned()).doesNotContainAnyElementsOf(partitionsOf(last[0]));
            pollUntil(List.of(kafka), () -> kafka.count() == 10, "the Kafka member's 10 records");
            assertThat(kafka.offsets.keySet()).isEqualTo(kafka.assigned());
        } finally {
            kafka.consumer.close();
        }
    }

    private static JsonPath heartbeat(String group, String memberId, int epoch, String topic, List<Integer> owned) {
        StringBuilder body = new StringBuilder("{\"memberId\":").append(memberId == null ? "null" : "\"" + memberId + "\"")
                .append(",\"memberEpoch\":").append(epoch).append(",\"topics\":[\"").append(topic)
                .append("\"],\"sessionTimeoutMs\":30000");
        if (owned != null) {
            body.append(",\"ownedPartitions\":[{\"topic\":\"").append(topic).append("\",\"partitions\":")
                    .append(owned).append("}]");
        }
        body.append('}');
        return given().contentType(ContentType.JSON).body(body.toString()).post("/v1/groups/" + group + "/heartbeat")
                .then().statusCode(200).extract().jsonPath();
    }

    private static List<Integer> partitionsOf(JsonPath answer) {
        List<Integer> out = new ArrayList<>();
        List<List<Integer>> lists = answer.getList("assignment.partitions");
        lists.forEach(out::addAll);
        return out;
    }
}
