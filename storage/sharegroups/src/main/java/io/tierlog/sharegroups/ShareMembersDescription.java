package io.tierlog.sharegroups;

import io.tierlog.groups.TopicPartitions;

import java.util.List;

/** A share group's members as {@link ShareGroupMembers#describe} shows them (Kafka's ShareGroupDescribe). */
public record ShareMembersDescription(String group, State state, int groupEpoch, List<Member> members) {
    public ShareMembersDescription {
        members = List.copyOf(members);
    }

    /** Kafka's share-group states that apply here: a group is Stable as soon as it has a member. */
    public enum State {
        EMPTY("Empty"), STABLE("Stable");

        private final String kafkaName;

        State(String kafkaName) {
            this.kafkaName = kafkaName;
        }

        /** The name Kafka's ShareGroupDescribe and ListGroups answer. */
        public String kafkaName() {
            return kafkaName;
        }
    }

    /**
     * @param rackId           null when the member named none
     * @param subscribedTopics ascending
     * @param assignment       every partition of each subscribed topic that existed at its last change, by topic
     * @param lastHeartbeatMs  wall-clock epoch ms of the instance that received its last heartbeat
     */
    public record Member(String memberId, int memberEpoch, String clientId, String rackId,
                         List<String> subscribedTopics, List<TopicPartitions> assignment, long lastHeartbeatMs) {
        public Member {
            subscribedTopics = List.copyOf(subscribedTopics);
            assignment = List.copyOf(assignment);
        }
    }
}
