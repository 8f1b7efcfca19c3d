package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.hamcrest.Matchers.equalTo;

/**
 * Classic groups whose members assign among themselves, with real kafka-clients 4.4.0 consumers and a client-side
 * assignor the service does not know ({@link LabelledAssignor}): the leader sees every member's subscription user
 * data, each member receives exactly what the leader assigned it (partitions and user data), a member leaving hands
 * its partitions over through a new round, and commits carry on. Admin describes and lists the group as classic.
 */
@QuarkusTest
class KafkaClassicGroupsTest {
    private static final Duration ROUND = Duration.ofMillis(100);
    /** Names of this run's topics and groups: the service's data directory outlives a test run. */
    private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

    @Inject
    KafkaListener listener;

    private KafkaConsumer<String, String> labelled(String group, String label) {
        Map<String, String> c = LabelledAssignor.consumerConfig(group, label);
        c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
        c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        return KafkaClients.consumer(listener.port(), c);
    }

    private void produce(String topic, int partitions, int from, int perPartition) {
        KafkaClients.produceToEachPartition(listener.port(), topic, partitions, from, perPartition);
    }

    /** Polls every consumer in turn, keeping what each read, until {@code done} or 60 s. */
    private static void pollUntil(String what, Map<String, KafkaConsumer<String, String>> consumers,
                                  Map<String, List<ConsumerRecord<String, String>>> read, BooleanSupplier done) {
        Instant deadline = Instant.now().plusSeconds(60);
        while (!done.getAsBoolean()) {
            assertThat(Instant.now()).as(what).isBefore(deadline);
            consumers.forEach((label, c) -> c.poll(ROUND).forEach(r -> read.computeIfAbsent(label,
                    k -> new ArrayList<>()).add(r)));
        }
    }

    @Test
    void theLeaderAssignsWithTheMembersOwnAssignorAndALeaverHandsOverThroughANewRound() throws Exception {
        String topic = "labelled-orders-" + RUN;
        String group = "labelled-group-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
        }
        produce(topic, 4, 0, 5);
        LabelledAssignor.told.clear();
        Map<String, KafkaConsumer<String, String>> consumers = new java.util.TreeMap<>();
        Map<String, List<ConsumerRecord<String, String>>> read = new HashMap<>();
        try {
            for (String label : List.of("a", "b", "c")) {
                KafkaConsumer<String, String> c = labelled(group, label);
                c.subscribe(List.of(topic));
                consumers.put(label, c);
            }
            pollUntil("all three told of one round with all of them, and a reading everything", consumers, read,
                    () -> List.of("a", "b", "c").stream().allMatch(
                            l -> "leader-saw:a,b,c".equals(LabelledAssignor.told.get(l)))
                            && read.getOrDefault("a", List.of()).size() == 20);
            assertThat(consumers.get("a").assignment()).hasSize(4);
            assertThat(consumers.get("b").assignment()).isEmpty();
            assertThat(consumers.get("c").assignment()).isEmpty();
            assertThat(read.get("b")).isNull();
            consumers.get("a").commitSync();

            try (Admin admin = KafkaClients.admin(listener.port())) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(d.partitionAssignor()).isEqualTo("labelled");
                assertThat(d.members()).hasSize(3);
                assertThat(d.members()).filteredOn(m -> !m.assignment().topicPartitions().isEmpty()).singleElement()
                        .satisfies(m -> assertThat(m.assignment().topicPartitions()).hasSize(4));
                GroupListing listed = admin.listGroups().all().get().stream()
                        .filter(g -> g.groupId().equals(group)).findFirst().orElseThrow();
                assertThat(listed.type()).contains(GroupType.CLASSIC);
                assertThat(listed.protocol()).isEqualTo("consumer");
                assertThatThrownBy(() -> admin.deleteConsumerGroupOffsets(group, Set.of(new TopicPartition(topic, 0)))
                        .all().get()).as("the members subscribe to it")
                        .hasCauseInstanceOf(GroupSubscribedToTopicException.class);
            }
            given().get("/v1/groups/" + group).then().statusCode(200).body("members.size()", equalTo(3));

            consumers.remove("a").close(); // LeaveGroup: a round for b and c
            produce(topic, 4, 5, 3);
            pollUntil("b and c in a round without a, and b reading on from a's commits", consumers, read,
                    () -> "leader-saw:b,c".equals(LabelledAssignor.told.get("b"))
                            && "leader-saw:b,c".equals(LabelledAssignor.told.get("c"))
                            && read.getOrDefault("b", List.of()).size() == 12);
            assertThat(consumers.get("b").assignment()).hasSize(4);
            assertThat(read.get("b")).extracting(ConsumerRecord::offset).allMatch(o -> o >= 5);
            assertThat(read.get("c")).isNull();
            consumers.get("b").commitSync();
            Map<TopicPartition, OffsetAndMetadata> committed = consumers.get("b").committed(
                    Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 3)));
            assertThat(committed.values()).extracting(OffsetAndMetadata::offset).containsOnly(8L);
        } finally {
            consumers.values().forEach(KafkaConsumer::close);
        }
    }

    /** Creates {@code topic} with 2 partitions of 5 records each, and forgets what members were told. */
    private void twoPartitionsOfFive(String topic) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        produce(topic, 2, 0, 5);
        LabelledAssignor.told.clear();
    }

    /** A KIP-848 consumer's config in {@code group}, reading from the start. */
    private static Map<String, String> kip848Config(String group) {
        Map<String, String> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return c;
    }

    @Test
    void aKip848ConsumerJoiningAGroupWhoseMembersAssignTakesItOverAndEveryRecordIsRead() throws Exception {
        String topic = "labelled-mixed-" + RUN;
        String group = "labelled-mixed-group-" + RUN;
        twoPartitionsOfFive(topic);
        Map<String, KafkaConsumer<String, String>> consumers = new HashMap<>();
        Map<String, List<ConsumerRecord<String, String>>> read = new HashMap<>();
        Map<String, String> c = kip848Config(group);
        try (KafkaConsumer<String, String> own = labelled(group, "x");
             KafkaConsumer<String, String> kip848 = KafkaClients.consumer(listener.port(), c)) {
            own.subscribe(List.of(topic));
            consumers.put("x", own);
            pollUntil("x assigned by itself", consumers, read,
                    () -> "leader-saw:x".equals(LabelledAssignor.told.get("x")));
            // Kafka 4's upgrade of a classic group: the KIP-848 member is served, and x, dropped from its rounds,
            // joins again and is served too, its own assignor no longer run.
            kip848.subscribe(List.of(topic));
            consumers.put("kip848", kip848);
            pollUntil("both members hold a partition", consumers, read,
                    () -> own.assignment().size() == 1 && kip848.assignment().size() == 1);
            assertThat(own.assignment()).doesNotContainAnyElementsOf(kip848.assignment());
            assertThat(LabelledAssignor.told.get("x")).as("x is assigned by the service now")
                    .isEqualTo(LabelledAssignor.SERVED);
            produce(topic, 2, 5, 5);
            pollUntil("every record read", consumers, read, () -> read.values().stream().flatMap(List::stream)
                    .map(r -> r.partition() + "@" + r.offset()).distinct().count() == 20);
            assertThat(read.get("kip848")).as("the KIP-848 member read its partition").isNotEmpty();
            given().get("/v1/groups/" + group).then().statusCode(200)
                    .body("members.size()", equalTo(2));
        }
    }

    /** Kafka 4's downgrade: the last KIP-848 member leaving hands the group back to its members' own assignor. */
    @Test
    void theGroupGoesBackToItsMembersAssignorWhenTheLastKip848ConsumerLeaves() throws Exception {
        String topic = "labelled-back-" + RUN;
        String group = "labelled-back-group-" + RUN;
        twoPartitionsOfFive(topic);
        Map<String, KafkaConsumer<String, String>> consumers = new HashMap<>();
        Map<String, List<ConsumerRecord<String, String>>> read = new HashMap<>();
        Map<String, String> c = kip848Config(group);
        try (KafkaConsumer<String, String> own = labelled(group, "y")) {
            own.subscribe(List.of(topic));
            consumers.put("y", own);
            try (KafkaConsumer<String, String> kip848 = KafkaClients.consumer(listener.port(), c)) {
                kip848.subscribe(List.of(topic));
                consumers.put("kip848", kip848);
                pollUntil("both members hold a partition, y served", consumers, read,
                        () -> own.assignment().size() == 1 && kip848.assignment().size() == 1
                                && LabelledAssignor.SERVED.equals(LabelledAssignor.told.get("y")));
            }
            consumers.remove("kip848");
            // Closing left the group: y learns at its next heartbeat and joins its own rounds again.
            pollUntil("y assigned by its own assignor again", consumers, read,
                    () -> "leader-saw:y".equals(LabelledAssignor.told.get("y")) && own.assignment().size() == 2);
            produce(topic, 2, 5, 5);
            pollUntil("y reads what is produced after", consumers, read, () -> read.getOrDefault("y", List.of())
                    .stream().filter(r -> r.offset() >= 5).count() == 10);
            try (Admin admin = KafkaClients.admin(listener.port())) {
                assertThat(admin.describeConsumerGroups(List.of(group)).all().get().get(group).type())
                        .isEqualTo(org.apache.kafka.common.GroupType.CLASSIC);
            }
        }
    }
}
