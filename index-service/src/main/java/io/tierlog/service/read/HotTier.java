package io.tierlog.service.read;

import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;

import java.util.OptionalLong;

/**
 * The hot tier as the read path sees it: one partition's visible end, records from an offset, the first offset
 * at a timestamp, and the size of its hot segments. Implementations see appends made by any process on the hot
 * volume as soon as those appends are visible in the segment files.
 *
 * <p>Implementations are thread-safe.
 */
public interface HotTier {

    /** The offset after the last visible record (the high watermark as far as the hot tier knows); 0 when empty. */
    long highWatermark(TopicPartition tp);

    /**
     * Records from {@code offset} (which must be in {@code [startOffset, highWatermark]}): at most
     * {@code maxRecords}, stopping at {@code maxBytes} but returning at least one record when one is visible.
     *
     * @throws IllegalArgumentException if {@code offset} lies below the oldest hot segment (retention moved on)
     */
    ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes);

    /** The first offset whose record timestamp is {@code >= timestamp}; empty when there is none in the hot tier. */
    OptionalLong offsetForTimestamp(TopicPartition tp, long timestamp);

    /** The oldest hot segment's base offset, bytes and segment count; zeros when the partition has no segment. */
    HotStats stats(TopicPartition tp);

    /** Forgets all derived state (cached ends, index entries) of a topic's partitions; the files are not touched. */
    void forget(String topic, int partitions);

    /**
     * Retention deleted the hot segments below {@code nextSegmentBase}: drop derived state pointing into them.
     * Called on the retention thread; must not throw. The default keeps nothing to drop.
     */
    default void segmentsEvicted(TopicPartition tp, long nextSegmentBase) {
    }

    /** True while the tier can serve reads (for readiness). */
    boolean isOpen();

    record HotStats(long startOffset, long bytes, int segments) {
    }
}
