package io.tierlog.sharegroups;

import io.tierlog.log.OffsetRange;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;

import java.util.List;

/**
 * The read path share groups deliver from: the service's tier-agnostic reads (hot and cold), or a hot-only reader.
 * Implementations are thread-safe.
 */
public interface ShareRecords {
    long logStartOffset(TopicPartition tp);

    long highWatermark(TopicPartition tp);

    /** The first offset of the partition's oldest open transaction, the high watermark when none is open. */
    long lastStableOffset(TopicPartition tp);

    /**
     * The data batches of aborted transactions among the offsets {@code [fromOffset, toOffsetExclusive)}, ascending:
     * what a read_committed reader never sees. A range may reach outside the offsets asked about.
     */
    List<OffsetRange> abortedBatches(TopicPartition tp, long fromOffset, long toOffsetExclusive);

    /** Records with offsets {@code >= offset}, in order, at most {@code maxRecords}; offsets may be missing (compaction). */
    List<LogRecord> read(TopicPartition tp, long offset, int maxRecords);
}
