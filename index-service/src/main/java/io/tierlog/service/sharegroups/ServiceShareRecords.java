package io.tierlog.service.sharegroups;

import io.tierlog.log.OffsetRange;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.ShareRecords;

import java.util.List;

/** Share groups read through the service's tier-agnostic read path, so records in the cold tier are leased too. */
final class ServiceShareRecords implements ShareRecords {
    private static final int MAX_BYTES = 8 * 1024 * 1024;

    private final PartitionReads reads;

    ServiceShareRecords(PartitionReads reads) {
        this.reads = reads;
    }

    @Override
    public long logStartOffset(TopicPartition tp) {
        return reads.logStartOffset(tp);
    }

    @Override
    public long highWatermark(TopicPartition tp) {
        return reads.highWatermark(tp);
    }

    @Override
    public long lastStableOffset(TopicPartition tp) {
        return reads.lastStableOffset(tp);
    }

    @Override
    public List<OffsetRange> abortedBatches(TopicPartition tp, long fromOffset, long toOffsetExclusive) {
        for (int attempt = 1; ; attempt++) {
            // Offsets retention removed are found gone by the lease's reader; those above the log start are asked.
            long from = Math.max(fromOffset, reads.logStartOffset(tp));
            try {
                return from < toOffsetExclusive ? reads.abortedBatches(tp, from, toOffsetExclusive) : List.of();
            } catch (TierlogException e) {
                if (e.type() != io.tierlog.log.ErrorType.OFFSET_OUT_OF_RANGE || attempt == 3) {
                    throw e;
                }
                // Retention moved the log start during the read: ask again from the new one.
            }
        }
    }

    @Override
    public List<LogRecord> read(TopicPartition tp, long offset, int maxRecords) {
        try {
            return reads.fetch(tp, offset, maxRecords, MAX_BYTES).records();
        } catch (TierlogException e) {
            if (e.type() == io.tierlog.log.ErrorType.OFFSET_OUT_OF_RANGE) {
                return List.of(); // removed by retention meanwhile: nothing to deliver
            }
            throw e;
        }
    }
}
