package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.tierlog.sharegroups.ShareGroupMembers;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ShareGroupDescribeRequestData;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Share-group membership over the listener with raw ShareGroupHeartbeat v1 and ShareGroupDescribe v1 requests, as
 * kafka-clients' {@code KafkaShareConsumer} sends them: a join under the client's own member id is assigned every
 * partition of the subscribed topic by topic id, heartbeats keep the epoch, a wrong epoch is fenced, an unknown
 * member is told so, a leave empties the group; ShareGroupDescribe shows the members and their assignments.
 */
@QuarkusTest
class KafkaShareGroupsTest {
    private static final short V1 = 1;

    @Inject
    KafkaListener listener;
    @Inject
    ShareGroupMembers shareMembers;

    private Uuid createTopic(String name, int partitions) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
            return admin.describeTopics(List.of(name)).allTopicNames().get().get(name).topicId();
        }
    }

    private static ShareGroupHeartbeatResponseData heartbeat(RawKafka raw, String group, String memberId, int epoch,
                                                             List<String> topics) throws IOException {
        ShareGroupHeartbeatResponse r = raw.call(new ShareGroupHeartbeatRequest.Builder(
                new ShareGroupHeartbeatRequestData().setGroupId(group).setMemberId(memberId).setMemberEpoch(epoch)
                        .setSubscribedTopicNames(topics)), V1);
        return r.data();
    }

    private static ShareGroupDescribeResponseData.DescribedGroup describe(RawKafka raw, String group) throws IOException {
        ShareGroupDescribeResponse r = raw.call(new ShareGroupDescribeRequest.Builder(
                new ShareGroupDescribeRequestData().setGroupIds(List.of(group))), V1);
        assertThat(r.data().groups()).hasSize(1);
        return r.data().groups().get(0);
    }

    @Test
    void aShareConsumerJoinsWithEveryPartitionHeartbeatsIsFencedOnAWrongEpochAndLeaves() throws Exception {
        String topic = KafkaListenerTest.unique("share-t");
        String group = KafkaListenerTest.unique("share-g");
        Uuid topicId = createTopic(topic, 3);
        String memberId = Uuid.randomUuid().toString(); // Kafka 4's share consumers choose their member id
        try (RawKafka raw = new RawKafka(listener.port())) {
            ShareGroupHeartbeatResponseData joined = heartbeat(raw, group, memberId, 0, List.of(topic));
            assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.NONE);
            assertThat(joined.memberId()).isEqualTo(memberId);
            assertThat(joined.memberEpoch()).isPositive();
            assertThat(joined.heartbeatIntervalMs()).isEqualTo(5_000);
            assertThat(joined.assignment().topicPartitions()).singleElement().satisfies(tp -> {
                assertThat(tp.topicId()).isEqualTo(topicId);
                assertThat(tp.partitions()).containsExactly(0, 1, 2);
            });
            int epoch = joined.memberEpoch();

            ShareGroupHeartbeatResponseData again = heartbeat(raw, group, memberId, epoch, null);
            assertThat(Errors.forCode(again.errorCode())).isEqualTo(Errors.NONE);
            assertThat(again.memberEpoch()).isEqualTo(epoch);
            assertThat(again.assignment()).as("unchanged: not sent again").isNull();

            assertThat(Errors.forCode(heartbeat(raw, group, memberId, epoch + 5, null).errorCode()))
                    .isEqualTo(Errors.FENCED_MEMBER_EPOCH);
            assertThat(Errors.forCode(heartbeat(raw, group, Uuid.randomUuid().toString(), 3, null).errorCode()))
                    .isEqualTo(Errors.UNKNOWN_MEMBER_ID);

            // Partitions added to the topic: a new epoch, and the whole assignment with it.
            try (Admin admin = KafkaClients.admin(listener.port())) {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
            }
            ShareGroupHeartbeatResponseData grown = heartbeat(raw, group, memberId, epoch, null);
            assertThat(grown.memberEpoch()).isGreaterThan(epoch);
            assertThat(grown.assignment().topicPartitions()).singleElement()
                    .satisfies(tp -> assertThat(tp.partitions()).containsExactly(0, 1, 2, 3));

            String other = Uuid.randomUuid().toString();
            ShareGroupHeartbeatResponseData second = heartbeat(raw, group, other, 0, List.of(topic));
            assertThat(second.assignment().topicPartitions()).as("every member gets every partition").singleElement()
                    .satisfies(tp -> assertThat(tp.partitions()).containsExactly(0, 1, 2, 3));

            ShareGroupDescribeResponseData.DescribedGroup d = describe(raw, group);
            assertThat(Errors.forCode(d.errorCode())).isEqualTo(Errors.NONE);
            assertThat(d.groupState()).isEqualTo("Stable");
            assertThat(d.assignorName()).isEqualTo("simple");
            assertThat(d.groupEpoch()).isEqualTo(second.memberEpoch()).isEqualTo(d.assignmentEpoch());
            assertThat(d.members()).extracting(ShareGroupDescribeResponseData.Member::memberId)
                    .containsExactlyInAnyOrder(memberId, other);
            assertThat(d.members()).allSatisfy(m -> {
                assertThat(m.subscribedTopicNames()).containsExactly(topic);
                assertThat(m.clientHost()).isEmpty();
                assertThat(m.clientId()).isNotNull();
                assertThat(m.assignment().topicPartitions()).singleElement().satisfies(tp -> {
                    assertThat(tp.topicId()).isEqualTo(topicId);
                    assertThat(tp.topicName()).isEqualTo(topic);
                    assertThat(tp.partitions()).containsExactly(0, 1, 2, 3);
                });
            });
            assertThat(shareMembers.describeAll(g -> true).keySet()).contains(group);

            for (String member : List.of(memberId, other)) {
                int current = member.equals(memberId) ? grown.memberEpoch() : second.memberEpoch();
                ShareGroupHeartbeatResponseData left = heartbeat(raw, group, member, -1, null);
                assertThat(Errors.forCode(left.errorCode())).isEqualTo(Errors.NONE);
                assertThat(left.memberId()).isEqualTo(member);
                assertThat(left.memberEpoch()).isEqualTo(-1);
                assertThat(Errors.forCode(heartbeat(raw, group, member, current, null).errorCode()))
                        .as("gone after leaving").isEqualTo(Errors.UNKNOWN_MEMBER_ID);
            }
            ShareGroupDescribeResponseData.DescribedGroup empty = describe(raw, group);
            assertThat(empty.groupState()).isEqualTo("Empty");
            assertThat(empty.members()).isEmpty();
        }
    }

    @Test
    void aTopicThatDoesNotExistYetIsAssignedOnceItDoes() throws Exception {
        String topic = KafkaListenerTest.unique("share-later");
        String group = KafkaListenerTest.unique("share-g");
        String memberId = Uuid.randomUuid().toString();
        try (RawKafka raw = new RawKafka(listener.port())) {
            ShareGroupHeartbeatResponseData joined = heartbeat(raw, group, memberId, 0, List.of(topic));
            assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.NONE);
            assertThat(joined.assignment().topicPartitions()).isEmpty();

            Uuid topicId = createTopic(topic, 2);
            ShareGroupHeartbeatResponseData later = heartbeat(raw, group, memberId, joined.memberEpoch(), null);
            assertThat(later.memberEpoch()).isGreaterThan(joined.memberEpoch());
            assertThat(later.assignment().topicPartitions()).singleElement().satisfies(tp -> {
                assertThat(tp.topicId()).isEqualTo(topicId);
                assertThat(tp.partitions()).containsExactly(0, 1);
            });
        }
    }

    @Test
    void badRequestsAndUnknownGroupsAreAnsweredWithKafkasErrors() throws Exception {
        String topic = KafkaListenerTest.unique("share-t");
        createTopic(topic, 1);
        String memberId = Uuid.randomUuid().toString();
        try (RawKafka raw = new RawKafka(listener.port())) {
            assertThat(Errors.forCode(heartbeat(raw, "", memberId, 0, List.of(topic)).errorCode()))
                    .isEqualTo(Errors.INVALID_GROUP_ID);
            String group = KafkaListenerTest.unique("share-g");
            assertThat(Errors.forCode(heartbeat(raw, group, memberId, 0, null).errorCode()))
                    .as("a join names its subscription").isEqualTo(Errors.INVALID_REQUEST);
            assertThat(Errors.forCode(heartbeat(raw, group, "", 0, List.of(topic)).errorCode()))
                    .as("the client chooses its member id").isEqualTo(Errors.INVALID_REQUEST);
            assertThat(Errors.forCode(heartbeat(raw, group, memberId, -2, null).errorCode()))
                    .isEqualTo(Errors.INVALID_REQUEST);

            ShareGroupDescribeResponseData.DescribedGroup unknown = describe(raw, group);
            assertThat(Errors.forCode(unknown.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
            assertThat(shareMembers.describeAll(g -> true).keySet()).doesNotContain(group);
        }
    }

    /**
     * A share group's own {@code share.session.timeout.ms} and {@code share.heartbeat.interval.ms} (kafka-configs'
     * group configs): described with the service's defaults until set; a group only configured is neither listed nor
     * described; a joining member is told the group's interval, and a silent one is gone after the group's session.
     */
    @Test
    void aShareGroupsOwnSessionTimeoutAndHeartbeatIntervalHoldForItsMembers() throws Exception {
        String topic = KafkaListenerTest.unique("share-t");
        String group = KafkaListenerTest.unique("share-cfg");
        createTopic(topic, 1);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        try (Admin admin = KafkaClients.admin(listener.port()); RawKafka raw = new RawKafka(listener.port())) {
            Config defaults = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(defaults.get("share.session.timeout.ms").value()).isEqualTo("45000");
            assertThat(defaults.get("share.heartbeat.interval.ms").value()).isEqualTo("5000");
            assertThat(defaults.get("share.session.timeout.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("share.session.timeout.ms", "1500"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.heartbeat.interval.ms", "500"),
                            AlterConfigOp.OpType.SET)))).all().get();
            Config set = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(set.get("share.session.timeout.ms").value()).isEqualTo("1500");
            assertThat(set.get("share.heartbeat.interval.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(admin.listGroups().all().get()).extracting(GroupListing::groupId).doesNotContain(group);
            assertThat(Errors.forCode(describe(raw, group).errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);

            ShareGroupHeartbeatResponseData joined = heartbeat(raw, group, Uuid.randomUuid().toString(), 0,
                    List.of(topic));
            long joinedAt = System.nanoTime();
            assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.NONE);
            assertThat(joined.heartbeatIntervalMs()).isEqualTo(500);
            assertThat(admin.listGroups().all().get()).extracting(GroupListing::groupId).contains(group);
            // Silent from here on: gone after the group's 1.5 s, well before the service's 45 s.
            while (!describe(raw, group).members().isEmpty()) {
                assertThat(Duration.ofNanos(System.nanoTime() - joinedAt)).as("removed on the group's session")
                        .isLessThan(Duration.ofSeconds(20));
                Thread.sleep(100); // members expire when the group is next touched
            }
        }
    }
}
