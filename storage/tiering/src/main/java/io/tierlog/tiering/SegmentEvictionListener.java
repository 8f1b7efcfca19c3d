package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;

/**
 * Told after retention deleted a hot segment file, so derived data pointing into it (the RocksDB index's
 * entries below {@code nextBase}) can be dropped. Called on the retention thread; must not throw.
 */
@FunctionalInterface
public interface SegmentEvictionListener {
    SegmentEvictionListener NONE = (tp, base, nextBase) -> { };

    void evicted(TopicPartition tp, long segmentBase, long nextSegmentBase);
}
