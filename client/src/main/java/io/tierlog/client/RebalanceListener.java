package io.tierlog.client;

import java.util.Collection;

/**
 * Told of a group member's assignment changes, on the thread that calls {@link Consumer#poll} (so a callback may
 * use the consumer, e.g. commit). A revoked partition is still owned while {@link #onPartitionsRevoked} runs (a
 * commit for it succeeds); it goes to another member only after the callback returned and the next heartbeat told
 * the service. Lost partitions (the member was expired or fenced) may already be another member's: commits for
 * them fail.
 */
public interface RebalanceListener {
    default void onPartitionsAssigned(Collection<TopicPartition> partitions) {
    }

    default void onPartitionsRevoked(Collection<TopicPartition> partitions) {
    }

    /** By default the same as a revocation (Kafka's rule). */
    default void onPartitionsLost(Collection<TopicPartition> partitions) {
        onPartitionsRevoked(partitions);
    }
}
