package io.tierlog.groups;

import java.util.List;

/** The answer to a heartbeat: the member's id, epoch and full current assignment; epoch -1 after a leave. */
public record HeartbeatAnswer(String memberId, int memberEpoch, long heartbeatIntervalMs,
                              List<TopicPartitions> assignment) {
}
