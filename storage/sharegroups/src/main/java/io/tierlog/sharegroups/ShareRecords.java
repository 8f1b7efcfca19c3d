package io.tierlog.sharegroups;

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

    /** Records with offsets {@code >= offset}, in order, at most {@code maxRecords}; offsets may be missing (compaction). */
    List<LogRecord> read(TopicPartition tp, long offset, int maxRecords);
}
