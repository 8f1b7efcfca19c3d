package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.TokenModeProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatRequest;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may be a streams group's member (token mode): read on the group and describe on every topic of the topology,
 * as Kafka asks; the internal topics the service creates for the group need create on each, or they are reported
 * missing (MISSING_INTERNAL_TOPICS) and not created; a join the group refuses creates none. Raw
 * StreamsGroupHeartbeats, so each refusal is seen as sent.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class KafkaStreamsGroupsAccessTest {
    @Inject
    KafkaListener listener;

    @Test
    void aMemberNeedsReadOnTheGroupDescribeOnItsTopicsAndCreateForTheInternalOnes() throws Exception {
        String input = KafkaListenerTest.unique("sg-in");
        String app = KafkaListenerTest.unique("sg-app");
        String changelog = app + "-store-changelog";
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            admin.createTopics(List.of(new NewTopic(input, 2, (short) 1))).all().get();
        }

        StreamsGroupHeartbeatResponseData noGroup = join("describe:topic:*", app, input, changelog);
        assertThat(Errors.forCode(noGroup.errorCode())).isEqualTo(Errors.GROUP_AUTHORIZATION_FAILED);
        StreamsGroupHeartbeatResponseData noTopic = join("read:group:* describe:topic:" + input, app, input,
                changelog);
        assertThat(Errors.forCode(noTopic.errorCode())).as("no describe on the changelog")
                .isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED);

        StreamsGroupHeartbeatResponseData noCreate = join("read:group:* describe:topic:*", app, input, changelog);
        assertThat(Errors.forCode(noCreate.errorCode())).isEqualTo(Errors.NONE);
        assertThat(noCreate.status()).extracting(StreamsGroupHeartbeatResponseData.Status::statusCode)
                .containsExactly((byte) 3);
        assertThat(noCreate.status().get(0).statusDetail()).contains(changelog).contains("not authorized");
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            assertThat(admin.listTopics().names().get()).doesNotContain(changelog);
        }

        // A join the group refuses (it is a consumer group with a member) creates nothing.
        String consumers = KafkaListenerTest.unique("sg-consumers");
        given().contentType("application/json").header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP)
                .body("{\"memberId\":null,\"memberEpoch\":0,\"topics\":[\"" + input
                        + "\"],\"sessionTimeoutMs\":30000}").post("/v1/groups/" + consumers + "/heartbeat")
                .then().statusCode(200);
        StreamsGroupHeartbeatResponseData refused = join("read:group:* describe:topic:* create:topic:*", consumers,
                input, consumers + "-store-changelog");
        assertThat(Errors.forCode(refused.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            assertThat(admin.listTopics().names().get()).doesNotContain(consumers + "-store-changelog");
        }

        StreamsGroupHeartbeatResponseData allowed = join("read:group:* describe:topic:* create:topic:" + app + "-*",
                app, input, changelog);
        assertThat(Errors.forCode(allowed.errorCode())).isEqualTo(Errors.NONE);
        assertThat(allowed.status()).isEmpty();
        try (Admin admin = KafkaClients.admin(listener.port(), TokenModeProfile.BOOTSTRAP)) {
            assertThat(admin.describeTopics(Set.of(changelog)).allTopicNames().get().get(changelog).partitions())
                    .as("the changelog has the input's 2 partitions").hasSize(2);
        }
    }

    /** A new member's join (its own member id) of a one-subtopology topology with a changelog, as a token's holder. */
    private StreamsGroupHeartbeatResponseData join(String scopes, String app, String input, String changelog)
            throws Exception {
        String token = MintedToken.mint("streams-member", scopes).secret();
        StreamsGroupHeartbeatRequestData.Subtopology subtopology = new StreamsGroupHeartbeatRequestData.Subtopology()
                .setSubtopologyId("0").setSourceTopics(List.of(input))
                .setStateChangelogTopics(List.of(new StreamsGroupHeartbeatRequestData.TopicInfo().setName(changelog)));
        StreamsGroupHeartbeatRequestData data = new StreamsGroupHeartbeatRequestData().setGroupId(app)
                .setMemberId(KafkaListenerTest.unique("member")).setMemberEpoch(0).setRebalanceTimeoutMs(30000)
                .setProcessId("process").setActiveTasks(List.of()).setStandbyTasks(List.of())
                .setWarmupTasks(List.of()).setTopology(new StreamsGroupHeartbeatRequestData.Topology().setEpoch(1)
                        .setSubtopologies(List.of(subtopology)));
        try (RawKafka raw = RawKafka.authenticated(listener.port(), token)) {
            StreamsGroupHeartbeatResponse r = raw.call(new StreamsGroupHeartbeatRequest.Builder(data),
                    ApiKeys.STREAMS_GROUP_HEARTBEAT);
            return r.data();
        }
    }
}
