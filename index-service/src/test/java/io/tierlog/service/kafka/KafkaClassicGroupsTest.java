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
import org.apache.kafka.common.errors.InconsistentGroupProtocolException;
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

    @Test
    void neitherAKip848ConsumerNorAnHttpMemberJoinsAGroupWhoseMembersAssign() throws Exception {
        String topic = "labelled-mixed-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        LabelledAssignor.told.clear();
        Map<String, KafkaConsumer<String, String>> consumers = new HashMap<>();
        Map<String, List<ConsumerRecord<String, String>>> read = new HashMap<>();
        try (KafkaConsumer<String, String> own = labelled("labelled-mixed-group-" + RUN, "x")) {
            own.subscribe(List.of(topic));
            consumers.put("x", own);
            pollUntil("x assigned by itself", consumers, read,
                    () -> "leader-saw:x".equals(LabelledAssignor.told.get("x")));
            Map<String, String> c = new HashMap<>();
            c.put(ConsumerConfig.GROUP_ID_CONFIG, "labelled-mixed-group-" + RUN);
            c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            try (KafkaConsumer<String, String> kip848 = KafkaClients.consumer(listener.port(), c)) {
                kip848.subscribe(List.of(topic));
                assertThatThrownBy(() -> {
                    for (int i = 0; i < 100; i++) {
                        kip848.poll(ROUND);
                    }
                }).isInstanceOf(InconsistentGroupProtocolException.class);
            }
            given().contentType("application/json").body("{\"memberId\":null,\"memberEpoch\":0,\"topics\":[\""
                            + topic + "\"],\"sessionTimeoutMs\":10000}")
                    .post("/v1/groups/labelled-mixed-group-" + RUN + "/heartbeat")
                    .then().statusCode(409).contentType("application/problem+json")
                    .body("type", equalTo("group-protocol-mismatch"));
            assertThat(LabelledAssignor.told.get("x")).as("x's group did not move").isEqualTo("leader-saw:x");
        }
    }
}
