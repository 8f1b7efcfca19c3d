package io.tierlog.groups;

import java.util.List;

/**
 * The answer to a streams member's heartbeat.
 *
 * @param membership           the member's id, epoch, interval and active tasks (by subtopology id)
 * @param standbyTasks         the standby tasks it keeps (by subtopology id)
 * @param warmupTasks          the warm-up tasks it restores, to run once caught up ({@link WarmupTasks})
 * @param acceptableRecoveryLag the group's {@code streams.acceptable.recovery.lag}
 * @param taskOffsetIntervalMs how often the member reports its tasks' offsets
 * @param topology             the group's topology (a joining member's own may be older)
 * @param statuses             what keeps the group from running normally (missing topics, a shutdown asked for)
 * @param endpointEpoch        the group's endpoint epoch now
 * @param endpoints            when the member's endpoint epoch was not current: each member with an endpoint, and
 *                             the topic partitions its active tasks read; else null
 */
public record StreamsHeartbeatAnswer(HeartbeatAnswer membership, List<TopicPartitions> standbyTasks,
                                     List<TopicPartitions> warmupTasks, long acceptableRecoveryLag,
                                     int taskOffsetIntervalMs,
                                     StreamsTopology topology, List<StreamsTopology.Status> statuses,
                                     int endpointEpoch, List<StreamsTopology.MemberEndpoint> endpoints) {
    public StreamsHeartbeatAnswer {
        standbyTasks = List.copyOf(standbyTasks);
        warmupTasks = List.copyOf(warmupTasks);
        statuses = List.copyOf(statuses);
        endpoints = endpoints == null ? null : List.copyOf(endpoints);
    }
}
