package io.tierlog.groups;

/** Tells the coordinator how many partitions a topic has now, so new partitions are picked up. */
@FunctionalInterface
public interface PartitionCounts {
    /** The topic's partition count; 0 when it does not exist (or may not be subscribed to). */
    int partitions(String topic);
}
