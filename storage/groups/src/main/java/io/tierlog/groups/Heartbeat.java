package io.tierlog.groups;

import java.util.List;
import java.util.Set;

/**
 * One member heartbeat, protocol-neutral (api.md, "Consumer groups that share work").
 *
 * @param memberId         null to join
 * @param memberEpoch      0 to join (with a known memberId: a fenced member rejoining, its partitions released),
 *                         the member's current epoch, or -1 to leave
 * @param topics           the topics subscribed to, by name; null: unchanged since the member's last heartbeat
 *                         (Kafka's ConsumerGroupHeartbeat sends them only when they change), none for a new member
 * @param sessionTimeoutMs how long without a heartbeat before the member is removed
 * @param ownedPartitions  the partitions the member still consumes; null when the client did not say (then it is
 *                         taken to still own everything it was given)
 * @param clientId         an optional label
 */
public record Heartbeat(String memberId, int memberEpoch, Set<String> topics, long sessionTimeoutMs,
                        List<TopicPartitions> ownedPartitions, String clientId) {
    public static final int LEAVE = -1;

    public Heartbeat {
        topics = topics == null ? null : Set.copyOf(topics);
        ownedPartitions = ownedPartitions == null ? null : List.copyOf(ownedPartitions);
    }

    /** This heartbeat with another session timeout. */
    public Heartbeat withSessionTimeout(long ms) {
        return new Heartbeat(memberId, memberEpoch, topics, ms, ownedPartitions, clientId);
    }

    /** This heartbeat with another epoch. */
    public Heartbeat withEpoch(int epoch) {
        return new Heartbeat(memberId, epoch, topics, sessionTimeoutMs, ownedPartitions, clientId);
    }
}
