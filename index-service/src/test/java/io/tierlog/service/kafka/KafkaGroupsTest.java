package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.InvalidRegularExpression;
import org.apache.kafka.common.errors.UnreleasedInstanceIdException;
import org.apache.kafka.common.errors.UnsupportedAssignorException;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Consumer groups over the Kafka listener, through the coordinator HTTP members use: two kafka-clients consumers
 * (KIP-848 {@code group.protocol=consumer}, and classic) share a 4-partition topic 2 and 2; when one leaves, the
 * other gets all 4 and resumes where the leaver committed; an HTTP member and a Kafka consumer share one group;
 * Admin lists, describes and deletes offsets. Static members ({@code group.instance.id}): a restarted one gets its
 * partitions back and the other member sees no rebalance; a replaced one is fenced; Admin removes one by instance id.
 * Range assignment keeps co-partitioned topics together under both protocols.
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
    private void produce(String topic, int partitions, int from, int perPartition) {
        KafkaClients.produceToEachPartition(listener.port(), topic, partitions, from, perPartition);
    }

    private KafkaConsumer<String, String> consumer(String group, String protocol) {
        return consumer(group, protocol, null);
    }

    private KafkaConsumer<String, String> consumer(String group, String protocol, String instanceId) {
        Map<String, String> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        if (instanceId != null) {
            c.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
        }
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

    /** A consumer polling for 30 s, for {@code assertThatThrownBy}: the error the client raises meanwhile. */
    private static ThrowableAssert.ThrowingCallable pollingFor30s(KafkaConsumer<String, String> consumer) {
        return () -> {
            Instant deadline = Instant.now().plusSeconds(30);
            while (Instant.now().isBefore(deadline)) {
                consumer.poll(ROUND);
            }
        };
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

    @ParameterizedTest
    @ValueSource(strings = {"consumer", "classic"})
    void aRestartedStaticMemberGetsItsPartitionsBackAndTheOtherMemberSeesNoRebalance(String protocol) throws Exception {
        String topic = KafkaListenerTest.unique("static-" + protocol);
        String group = KafkaListenerTest.unique("gs-" + protocol);
        createTopic(topic, 4);
        Reader a = new Reader(consumer(group, protocol, "a"));
        Reader b = new Reader(consumer(group, protocol, "b"));
        List<Set<Integer>> bMoves = new ArrayList<>();
        Reader a2 = null;
        try {
            a.consumer.subscribe(List.of(topic));
            b.consumer.subscribe(List.of(topic), new RecordMoves(bMoves));
            pollUntil(List.of(a, b), () -> a.assigned().size() == 2 && b.assigned().size() == 2, "2 + 2 partitions");
            produce(topic, 4, 0, 5);
            pollUntil(List.of(a, b), () -> a.count() + b.count() == 20, "all 20 records");
            a.consumer.commitSync();
            Set<Integer> aHeld = a.assigned();
            Set<Integer> bHeld = b.assigned();
            int bMovesBefore = bMoves.size();
            try (Admin admin = KafkaClients.admin(listener.port())) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.members()).extracting(m -> m.groupInstanceId().orElse(null))
                        .containsExactlyInAnyOrder("a", "b");
            }

            // A restart: the process stops (a static member does not leave the group) and a new one starts.
            a.consumer.close();
            Reader restarted = new Reader(consumer(group, protocol, "a"));
            a2 = restarted;
            restarted.consumer.subscribe(List.of(topic));
            pollUntil(List.of(restarted, b), () -> restarted.assigned().size() == 2, "the restarted member's partitions");
            assertThat(restarted.assigned()).isEqualTo(aHeld);
            assertThat(b.assigned()).isEqualTo(bHeld);
            assertThat(bMoves.subList(bMovesBefore, bMoves.size())).as("b's partitions never moved").isEmpty();

            // It resumes where its predecessor committed: each of its partitions from offset 5.
            produce(topic, 4, 5, 1);
            pollUntil(List.of(restarted, b), () -> restarted.count() == 2, "offset 5 of the restarted member's partitions");
            aHeld.forEach(p -> assertThat(restarted.offsets.get(p)).as("partition " + p).containsExactly(5L));
        } finally {
            if (a2 != null) {
                a2.consumer.close();
            } else {
                a.consumer.close();
            }
            b.consumer.close();
        }
    }

    @Test
    void aClassicStaticMemberReplacedWhileStillRunningIsFenced() throws Exception {
        String topic = KafkaListenerTest.unique("static-zombie");
        String group = KafkaListenerTest.unique("gs-zombie");
        createTopic(topic, 2);
        Reader old = new Reader(consumer(group, "classic", "a"));
        Reader replacement = new Reader(consumer(group, "classic", "a"));
        try {
            old.consumer.subscribe(List.of(topic));
            pollUntil(List.of(old), () -> old.assigned().size() == 2, "the first process's 2 partitions");
            replacement.consumer.subscribe(List.of(topic));
            pollUntil(List.of(replacement), () -> replacement.assigned().size() == 2, "the replacement's 2 partitions");
            // The first process must stop: its next heartbeat, poll or commit says it was fenced.
            assertPollingThrows(old, true, FencedInstanceIdException.class);
            try (Admin admin = KafkaClients.admin(listener.port())) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.members()).singleElement().satisfies(m -> {
                    assertThat(m.groupInstanceId()).contains("a");
                    assertThat(m.assignment().topicPartitions()).hasSize(2);
                });
            }
        } finally {
            old.consumer.close();
            replacement.consumer.close();
        }
    }

    @Test
    void aConsumerProtocolStaticMemberWaitsUntilTheHolderOfItsInstanceIdLeaves() throws Exception {
        String topic = KafkaListenerTest.unique("static-unreleased");
        String group = KafkaListenerTest.unique("gs-unreleased");
        createTopic(topic, 2);
        Reader holder = new Reader(consumer(group, "consumer", "a"));
        Reader second = new Reader(consumer(group, "consumer", "a"));
        try {
            holder.consumer.subscribe(List.of(topic));
            pollUntil(List.of(holder), () -> holder.assigned().size() == 2, "the holder's 2 partitions");
            second.consumer.subscribe(List.of(topic));
            assertPollingThrows(second, false, UnreleasedInstanceIdException.class);
            holder.poll();
            assertThat(holder.assigned()).hasSize(2);
        } finally {
            holder.consumer.close();
            second.consumer.close();
        }
    }

    @Test
    void adminRemovesAStoppedStaticMemberByItsInstanceIdAndItsPartitionsMoveAtOnce() throws Exception {
        String topic = KafkaListenerTest.unique("static-remove");
        String group = KafkaListenerTest.unique("gs-remove");
        createTopic(topic, 4);
        Reader a = new Reader(consumer(group, "classic", "a"));
        Reader b = new Reader(consumer(group, "classic", "b"));
        try {
            a.consumer.subscribe(List.of(topic));
            b.consumer.subscribe(List.of(topic));
            pollUntil(List.of(a, b), () -> a.assigned().size() == 2 && b.assigned().size() == 2, "2 + 2 partitions");
            a.consumer.close(); // a static member stays in the group, its partitions unserved, until its session ends
            Instant removedAt;
            try (Admin admin = KafkaClients.admin(listener.port())) {
                admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(
                        Set.of(new MemberToRemove("a")))).all().get();
                removedAt = Instant.now();
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.members()).extracting(m -> m.groupInstanceId().orElse(null)).containsExactly("b");
            }
            pollUntil(List.of(b), () -> b.assigned().size() == 4, "b to take all 4");
            // Sooner than a's 10 s session would have ended on its own.
            assertThat(Duration.between(removedAt, Instant.now())).isLessThan(Duration.ofSeconds(8));
        } finally {
            b.consumer.close();
        }
    }

    /** Polls (and commits, with {@code commit}) until the consumer throws {@code expected}, for at most 30 s. */
    @Test
    void aSubscriptionPatternIsResolvedByTheCoordinatorAndPicksUpATopicCreatedLater() throws Exception {
        String prefix = KafkaListenerTest.unique("rx");
        String group = KafkaListenerTest.unique("g-rx");
        createTopic(prefix + "-a", 2);
        createTopic(prefix + "-b", 1);
        createTopic(prefix + "x-c", 1); // does not match
        produce(prefix + "-a", 2, 0, 3);
        produce(prefix + "-b", 1, 0, 3);
        try (KafkaConsumer<String, String> c = consumer(group, "consumer")) {
            String pattern = java.util.regex.Pattern.quote(prefix) + "-.*";
            c.subscribe(new SubscriptionPattern(pattern));
            Map<String, Integer> read = new HashMap<>();
            pollCountingUntil(c, read, () -> total(read) >= 9, "reading both matching topics");
            assertThat(read).containsOnlyKeys(prefix + "-a", prefix + "-b");

            // A matching topic created now joins the subscription: the client says nothing new.
            createTopic(prefix + "-later", 1);
            produce(prefix + "-later", 1, 0, 2);
            pollCountingUntil(c, read, () -> read.getOrDefault(prefix + "-later", 0) >= 2, "the topic created later");
            assertThat(c.assignment()).extracting(TopicPartition::topic)
                    .containsOnly(prefix + "-a", prefix + "-b", prefix + "-later");
            try (RawKafka raw = new RawKafka(listener.port())) {
                ConsumerGroupDescribeResponse d = raw.call(new ConsumerGroupDescribeRequest.Builder(
                        new ConsumerGroupDescribeRequestData().setGroupIds(List.of(group))), (short) 0);
                assertThat(d.data().groups().get(0).members()).singleElement().satisfies(m -> {
                    assertThat(m.subscribedTopicRegex()).isEqualTo(pattern);
                    assertThat(m.subscribedTopicNames()).contains(prefix + "-later");
                });
            }
        }
    }

    /**
     * Range (KIP-848's {@code group.remote.assignor}, the classic consumer's RangeAssignor, its default): two
     * co-partitioned topics reach each consumer with the same partition numbers, so a join by key stays local.
     */
    @ParameterizedTest
    @ValueSource(strings = {"consumer", "classic"})
    void rangeKeepsCoPartitionedTopicsTogether(String protocol) throws Exception {
        String orders = KafkaListenerTest.unique("range-orders-" + protocol);
        String payments = KafkaListenerTest.unique("range-payments-" + protocol);
        String group = KafkaListenerTest.unique("g-range-" + protocol);
        createTopic(orders, 4);
        createTopic(payments, 4);
        Map<String, String> range = new HashMap<>();
        range.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        range.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("consumer")) {
            range.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, "range");
        } else {
            range.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                    org.apache.kafka.clients.consumer.RangeAssignor.class.getName());
            range.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
        }
        Reader a = new Reader(KafkaClients.consumer(listener.port(), range));
        Reader b = new Reader(KafkaClients.consumer(listener.port(), range));
        try {
            a.consumer.subscribe(List.of(orders, payments));
            b.consumer.subscribe(List.of(orders, payments));
            pollUntil(List.of(a, b), () -> a.consumer.assignment().size() == 4 && b.consumer.assignment().size() == 4,
                    "4 + 4 partitions");
            for (Reader r : List.of(a, b)) {
                Set<Integer> ofOrders = new HashSet<>();
                Set<Integer> ofPayments = new HashSet<>();
                r.consumer.assignment().forEach(tp -> (tp.topic().equals(orders) ? ofOrders : ofPayments)
                        .add(tp.partition()));
                assertThat(ofOrders).as("%s: the same partitions of both topics", r.consumer.assignment())
                        .hasSize(2).isEqualTo(ofPayments);
            }
            try (Admin admin = KafkaClients.admin(listener.port())) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.partitionAssignor()).isEqualTo("range");
            }
        } finally {
            a.consumer.close();
            b.consumer.close();
        }
    }

    @Test
    void aServerAssignorTheServiceLacksIsRefusedWithUnsupportedAssignor() throws Exception {
        String topic = KafkaListenerTest.unique("assignor-unknown");
        createTopic(topic, 1);
        Map<String, String> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, KafkaListenerTest.unique("g-assignor-unknown"));
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        c.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, "sticky");
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(), c)) {
            consumer.subscribe(List.of(topic));
            assertThatThrownBy(pollingFor30s(consumer)).isInstanceOf(UnsupportedAssignorException.class)
                    .hasMessageContaining("sticky");
        }
    }

    @Test
    void anInvalidSubscriptionPatternIsRefusedWithInvalidRegularExpression() {
        try (KafkaConsumer<String, String> c = consumer(KafkaListenerTest.unique("g-badrx"), "consumer")) {
            c.subscribe(new SubscriptionPattern("orders-(unclosed"));
            assertThatThrownBy(pollingFor30s(c)).isInstanceOf(InvalidRegularExpression.class);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"consumer", "classic"})
    void aJavaPatternSubscriptionIsResolvedByTheClientUnderEitherProtocol(String protocol) throws Exception {
        String prefix = KafkaListenerTest.unique("jrx-" + protocol);
        createTopic(prefix + "-a", 1);
        createTopic(prefix + "-b", 1);
        produce(prefix + "-a", 1, 0, 2);
        produce(prefix + "-b", 1, 0, 2);
        try (KafkaConsumer<String, String> c = consumer(KafkaListenerTest.unique("g-jrx"), protocol)) {
            c.subscribe(java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(prefix) + "-.*"));
            Map<String, Integer> read = new HashMap<>();
            pollCountingUntil(c, read, () -> total(read) >= 4, "reading both matching topics");
            assertThat(read).containsOnly(Map.entry(prefix + "-a", 2), Map.entry(prefix + "-b", 2));
        }
    }

    /** Polls {@code c}, counting records per topic into {@code read}, until {@code done} (at most 90 s). */
    private static void pollCountingUntil(KafkaConsumer<String, String> c, Map<String, Integer> read,
                                          BooleanSupplier done, String what) {
        Instant deadline = Instant.now().plusSeconds(90);
        while (!done.getAsBoolean()) {
            assertThat(Instant.now()).as("waiting for " + what).isBefore(deadline);
            c.poll(ROUND).forEach(r -> read.merge(r.topic(), 1, Integer::sum));
        }
    }

    private static int total(Map<String, Integer> counts) {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }

    private static void assertPollingThrows(Reader r, boolean commit, Class<? extends Throwable> expected) {
        Instant deadline = Instant.now().plusSeconds(30);
        assertThatThrownBy(() -> {
            while (Instant.now().isBefore(deadline)) {
                r.poll();
                if (commit) {
                    try {
                        r.consumer.commitSync();
                    } catch (CommitFailedException e) {
                        // The commit's answer came after its heartbeat's in the same poll: the client had reset
                        // its generation and reports the commit's error as this; its next poll throws the
                        // heartbeat's.
                    }
                }
            }
        }).isInstanceOf(expected);
    }

    /** A rebalance listener that records every non-empty set of partitions given or taken. */
    private static final class RecordMoves implements ConsumerRebalanceListener {
        private final List<Set<Integer>> moves;

        RecordMoves(List<Set<Integer>> moves) {
            this.moves = moves;
        }

        private void record(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                Set<Integer> s = new HashSet<>();
                partitions.forEach(tp -> s.add(tp.partition()));
                moves.add(s);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            record(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            record(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            record(partitions);
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
