package io.tierlog.groups;

import java.util.List;
import java.util.Set;

/**
 * One member heartbeat, protocol-neutral (api.md, "Consumer groups that share work").
 *
 * @param memberId         null to join
 * @param memberEpoch      0 to join (with a known memberId: a fenced member rejoining, its partitions released),
 *                         the member's current epoch, -1 to leave, or -2 for a static member leaving for a while
 *                         (it keeps its partitions until its session ends or its instance id joins again)
 * @param topics           the topics subscribed to, by name; null: unchanged since the member's last heartbeat
 *                         (Kafka's ConsumerGroupHeartbeat sends them only when they change), none for a new member
 * @param sessionTimeoutMs how long without a heartbeat before the member is removed
 * @param ownedPartitions  the partitions the member still consumes; null when the client did not say (then it is
 *                         taken to still own everything it was given)
 * @param clientId         an optional label
 * @param instanceId       a static member's instance id (Kafka's {@code group.instance.id}): the name a member keeps
 *                         across restarts, so a new process under it takes over its partitions without moving any;
 *                         null for a dynamic member
 * @param topicRegex       a subscription by regular expression (Kafka's {@code SubscriptionPattern}, RE2J syntax),
 *                         in addition to {@code topics}: the caller resolves it into topic names on every heartbeat
 *                         ({@link GroupCoordinator#heartbeat(String, Heartbeat, JoinRules, RegexTopics)}), so topics
 *                         created later join the subscription; null: unchanged, empty: none
 * @param assignsItself    a classic consumer whose assignors the service does not run (custom, Kafka Streams'),
 *                         served because the group is the service's: when only such members are left, the group
 *                         goes back to their own rounds (Kafka's downgrade, ADR 0066)
 * @param assignor         the assignor the member asks the group to run ({@link GroupAssignor#wireName()}, Kafka's
 *                         {@code ServerAssignor}); null: unchanged since its last heartbeat, none for a new member
 */
public record Heartbeat(String memberId, int memberEpoch, Set<String> topics, long sessionTimeoutMs,
                        List<TopicPartitions> ownedPartitions, String clientId, String instanceId,
                        String topicRegex, boolean assignsItself, String assignor) {
    public static final int LEAVE = -1;
    /** A static member leaving for a while: its partitions wait for its instance id until its session ends. */
    public static final int STATIC_LEAVE = -2;

    public Heartbeat {
        topics = topics == null ? null : Set.copyOf(topics);
        ownedPartitions = ownedPartitions == null ? null : List.copyOf(ownedPartitions);
    }

    /** A heartbeat of a member the service assigns for. */
    public Heartbeat(String memberId, int memberEpoch, Set<String> topics, long sessionTimeoutMs,
                     List<TopicPartitions> ownedPartitions, String clientId, String instanceId, String topicRegex) {
        this(memberId, memberEpoch, topics, sessionTimeoutMs, ownedPartitions, clientId, instanceId, topicRegex,
                false, null);
    }

    /** A heartbeat that leaves the member's regular expression as it is. */
    public Heartbeat(String memberId, int memberEpoch, Set<String> topics, long sessionTimeoutMs,
                     List<TopicPartitions> ownedPartitions, String clientId, String instanceId) {
        this(memberId, memberEpoch, topics, sessionTimeoutMs, ownedPartitions, clientId, instanceId, null);
    }

    /** A dynamic member's heartbeat (no instance id). */
    public Heartbeat(String memberId, int memberEpoch, Set<String> topics, long sessionTimeoutMs,
                     List<TopicPartitions> ownedPartitions, String clientId) {
        this(memberId, memberEpoch, topics, sessionTimeoutMs, ownedPartitions, clientId, null);
    }

    /** This heartbeat with another session timeout. */
    public Heartbeat withSessionTimeout(long ms) {
        return new Heartbeat(memberId, memberEpoch, topics, ms, ownedPartitions, clientId, instanceId, topicRegex,
                assignsItself, assignor);
    }

    /** This heartbeat with another epoch. */
    public Heartbeat withEpoch(int epoch) {
        return new Heartbeat(memberId, epoch, topics, sessionTimeoutMs, ownedPartitions, clientId, instanceId,
                topicRegex, assignsItself, assignor);
    }

    /** This heartbeat from a classic consumer whose assignors the service does not run ({@code assignsItself}). */
    public Heartbeat assigningItself() {
        return new Heartbeat(memberId, memberEpoch, topics, sessionTimeoutMs, ownedPartitions, clientId, instanceId,
                topicRegex, true, assignor);
    }

    /** This heartbeat asking the group to run {@code assignor} (a {@link GroupAssignor#wireName()}). */
    public Heartbeat withAssignor(String assignor) {
        return new Heartbeat(memberId, memberEpoch, topics, sessionTimeoutMs, ownedPartitions, clientId, instanceId,
                topicRegex, assignsItself, assignor);
    }
}
