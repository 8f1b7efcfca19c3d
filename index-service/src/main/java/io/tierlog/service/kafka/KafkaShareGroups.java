package io.tierlog.service.kafka;

import io.tierlog.groups.TopicPartitions;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.sharegroups.ShareGroupMembers;
import io.tierlog.sharegroups.ShareMembersDescription;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The membership half of Kafka's share groups (KIP-932) over the listener: ShareGroupHeartbeat and ShareGroupDescribe
 * through {@link ShareGroupMembers}, whose state is on the hot volume, so any instance answers any share consumer.
 * Every member is assigned every partition of the topics it subscribes to (records are leased one by one, so members
 * need not split partitions); topics go by their Kafka topic id on the wire.
 *
 * <p>Blocking (each call is a locked read-modify-write of the group's members file): run on a worker thread.
 * Thread-safe and stateless.
 */
@Singleton
public class KafkaShareGroups {
    /** The assignor ShareGroupDescribe names: Kafka's share-group assignor is "simple" too. */
    static final String ASSIGNOR = "simple";

    private final ShareGroupMembers members;
    private final TopicStore topicStore;

    public KafkaShareGroups(ShareGroupMembers members, TopicStore topicStore) {
        this.members = members;
        this.topicStore = topicStore;
    }

    /**
     * Joins (epoch 0, under the member id the client chose), heartbeats or leaves (-1). The answer carries the
     * assignment when the member joined or its epoch moved (as Kafka's coordinator sends it); a subscribed topic that
     * does not exist is not assigned until it does.
     *
     * @param clientId         the request header's client id, shown by ShareGroupDescribe
     * @param mayDescribeTopic whether the caller may describe a topic: one subscribed topic it may not refuses the
     *                         whole heartbeat with TOPIC_AUTHORIZATION_FAILED and leaves the group untouched, as Kafka
     *                         does since ShareGroupHeartbeat v1
     */
    public ShareGroupHeartbeatResponse heartbeat(ShareGroupHeartbeatRequest request, String clientId,
                                                 Predicate<String> mayDescribeTopic) {
        ShareGroupHeartbeatRequestData in = request.data();
        ShareGroupHeartbeatResponseData out = new ShareGroupHeartbeatResponseData();
        List<String> subscribed = in.subscribedTopicNames();
        if (subscribed != null && !subscribed.stream().allMatch(mayDescribeTopic)) {
            return new ShareGroupHeartbeatResponse(out.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                    .setErrorMessage("not authorized to describe every subscribed topic"));
        }
        if (in.rackId() != null && in.rackId().isBlank()) {
            return new ShareGroupHeartbeatResponse(out.setErrorCode(Errors.INVALID_REQUEST.code())
                    .setErrorMessage("RackId can't be empty."));
        }
        try {
            // The group id, the member id, the epoch and a join's subscription are checked by ShareGroupMembers.
            ShareGroupMembers.Answer answer = members.heartbeat(in.groupId(), in.memberId(), in.memberEpoch(),
                    subscribed, clientId, in.rackId());
            out.setMemberId(answer.memberId()).setMemberEpoch(answer.memberEpoch())
                    .setHeartbeatIntervalMs((int) answer.heartbeatIntervalMs());
            if (answer.memberEpoch() >= 0 && (in.memberEpoch() == ShareGroupMembers.JOIN
                    || answer.memberEpoch() != in.memberEpoch())) {
                out.setAssignment(assignment(answer.assignment()));
            }
        } catch (RuntimeException e) {
            out.setErrorCode(KafkaGroups.error(e, Errors.FENCED_MEMBER_EPOCH).code())
                    .setErrorMessage(KafkaErrors.message(e));
        }
        return new ShareGroupHeartbeatResponse(out);
    }

    private ShareGroupHeartbeatResponseData.Assignment assignment(List<TopicPartitions> assigned) {
        ShareGroupHeartbeatResponseData.Assignment a = new ShareGroupHeartbeatResponseData.Assignment();
        for (TopicPartitions tps : assigned) {
            idOf(tps.topic()).ifPresent(id -> a.topicPartitions().add(new ShareGroupHeartbeatResponseData.TopicPartitions()
                    .setTopicId(id).setPartitions(new ArrayList<>(tps.partitions()))));
        }
        return a;
    }

    /** Each group's members and assignments; GROUP_ID_NOT_FOUND for a group no share consumer ever joined. */
    public ShareGroupDescribeResponse describe(ShareGroupDescribeRequest request) {
        ShareGroupDescribeResponseData out = new ShareGroupDescribeResponseData();
        for (String group : request.data().groupIds()) {
            ShareGroupDescribeResponseData.DescribedGroup g = new ShareGroupDescribeResponseData.DescribedGroup()
                    .setGroupId(group);
            try {
                Optional<ShareMembersDescription> d = members.describe(group);
                if (d.isEmpty()) {
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + group + " not found.");
                } else {
                    describe(g, d.get());
                }
            } catch (RuntimeException e) {
                g.setErrorCode(KafkaGroups.error(e, Errors.UNKNOWN_SERVER_ERROR).code())
                        .setErrorMessage(KafkaErrors.message(e));
            }
            out.groups().add(g);
        }
        return new ShareGroupDescribeResponse(out);
    }

    private void describe(ShareGroupDescribeResponseData.DescribedGroup g, ShareMembersDescription d) {
        // Each member's assignment is its target as soon as it is computed: the assignment epoch is the group's.
        g.setGroupState(d.state().kafkaName()).setGroupEpoch(d.groupEpoch()).setAssignmentEpoch(d.groupEpoch())
                .setAssignorName(ASSIGNOR);
        for (ShareMembersDescription.Member m : d.members()) {
            ShareGroupDescribeResponseData.Assignment a = new ShareGroupDescribeResponseData.Assignment();
            for (TopicPartitions tps : m.assignment()) {
                idOf(tps.topic()).ifPresent(id -> a.topicPartitions().add(
                        new ShareGroupDescribeResponseData.TopicPartitions().setTopicId(id).setTopicName(tps.topic())
                                .setPartitions(new ArrayList<>(tps.partitions()))));
            }
            g.members().add(new ShareGroupDescribeResponseData.Member().setMemberId(m.memberId())
                    .setRackId(m.rackId()).setMemberEpoch(m.memberEpoch())
                    .setClientId(m.clientId() == null ? "" : m.clientId()).setClientHost("")
                    .setSubscribedTopicNames(new ArrayList<>(m.subscribedTopics())).setAssignment(a));
        }
    }

    /**
     * Adds the share groups the caller may see to a ListGroups answer (type "share", state Empty or Stable), unless
     * its filters leave them out.
     */
    void listGroups(ListGroupsRequestData request, Predicate<String> visible,
                    ListGroupsResponseData out) {
        Set<String> types = new HashSet<>();
        request.typesFilter().forEach(t -> types.add(t.toLowerCase(Locale.ROOT)));
        if (!types.isEmpty() && !types.contains("share")) {
            return;
        }
        Set<String> states = new HashSet<>();
        request.statesFilter().forEach(st -> states.add(st.toLowerCase(Locale.ROOT)));
        members.describeAll(visible).forEach((group, d) -> {
            String state = d.state() == ShareMembersDescription.State.STABLE ? "Stable" : "Empty";
            if (states.isEmpty() || states.contains(state.toLowerCase(Locale.ROOT))) {
                out.groups().add(new ListGroupsResponseData.ListedGroup()
                        .setGroupId(group).setProtocolType("share").setGroupState(state).setGroupType("share"));
            }
        });
    }

    /** The topic's Kafka id now; empty once it is gone (a topic deleted since the assignment is left out). */
    private Optional<Uuid> idOf(String topic) {
        return topicStore.find(topic).map(KafkaTopics::idOf);
    }
}
