package io.tierlog.log.topic;

import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;

import java.util.Map;
import java.util.UUID;

/**
 * A topic as stored on the hot volume: its name, a unique id (so that a topic deleted and created again under
 * the same name is never confused with the old one by a process that cached it), its partition count and
 * config.
 */
public record TopicMetadata(String name, UUID id, int partitions, TopicConfig config, long createdAtMs) {
    public static final int MAX_PARTITIONS = 1024;

    public TopicMetadata {
        Names.requireValidTopic(name);
        if (partitions < 1 || partitions > MAX_PARTITIONS) {
            throw new TierlogException(ErrorType.BAD_REQUEST,
                    "partitions must be in 1.." + MAX_PARTITIONS + ": " + partitions, Map.of("field", "partitions"));
        }
    }

    public void requirePartition(int partition) {
        if (partition < 0 || partition >= partitions) {
            throw new TierlogException(ErrorType.UNKNOWN_PARTITION,
                    "topic '" + name + "' has partitions 0.." + (partitions - 1) + "; no partition " + partition,
                    Map.of("topic", name, "partition", partition));
        }
    }
}
