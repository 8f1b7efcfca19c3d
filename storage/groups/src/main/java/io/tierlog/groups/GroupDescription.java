package io.tierlog.groups;

import java.util.List;
import java.util.Set;

/**
 * A group as {@code GET /v1/groups/{group}} shows it.
 *
 * @param assignor the assignor that computed the members' targets ({@link GroupAssignor#wireName()})
 * @param streams  a streams group (Kafka Streams' rebalance protocol): its members' topics are subtopologies and
 *                 their partitions tasks ({@link GroupCoordinator#describeStreams})
 */
public record GroupDescription(String group, State state, long groupEpoch, List<MemberDescription> members,
                               String assignor, boolean streams) {
    /** A consumer group's description. */
    public GroupDescription(String group, State state, long groupEpoch, List<MemberDescription> members,
                            String assignor) {
        this(group, state, groupEpoch, members, assignor, false);
    }

    /** A group whose targets come from the default assignor, {@code uniform}. */
    public GroupDescription(String group, State state, long groupEpoch, List<MemberDescription> members) {
        this(group, state, groupEpoch, members, GroupAssignor.UNIFORM.wireName());
    }

    public enum State {
        EMPTY, STABLE, RECONCILING;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * @param topics the member's subscription: the topics it names and those its {@code topicRegex} matched last
     * @param target where the assignor wants the member's partitions (its assignment once reconciled)
     * @param instanceId a static member's instance id, else null
     * @param memberEpoch the member's epoch; -2 for a static member that left for a while
     * @param topicRegex the member's subscription by regular expression, else null
     */
    public record MemberDescription(String memberId, String clientId, int memberEpoch,
                                    List<TopicPartitions> assignment, long lastHeartbeatMs, Set<String> topics,
                                    List<TopicPartitions> target, String instanceId, String topicRegex) {
        public MemberDescription(String memberId, String clientId, int memberEpoch, List<TopicPartitions> assignment,
                                 long lastHeartbeatMs) {
            this(memberId, clientId, memberEpoch, assignment, lastHeartbeatMs, Set.of(), assignment, null, null);
        }
    }
}
