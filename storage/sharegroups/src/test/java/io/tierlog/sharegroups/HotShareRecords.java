package io.tierlog.sharegroups;

import io.tierlog.log.BatchRead;
import io.tierlog.log.HotLog;
import io.tierlog.log.OffsetRange;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;

import java.nio.file.Path;
import java.util.List;

/** Share-group reads straight from the hot tier's segment files (the service adds the cold tier). */
final class HotShareRecords implements ShareRecords {
    private final Path dataDir;

    HotShareRecords(Path dataDir) {
        this.dataDir = dataDir;
    }

    @Override
    public long logStartOffset(TopicPartition tp) {
        List<Long> bases = new HotLog(dataDir).reader(tp).segmentBases();
        return bases.isEmpty() ? 0 : bases.get(0);
    }

    @Override
    public long highWatermark(TopicPartition tp) {
        return new HotLog(dataDir).reader(tp).end(null).offset();
    }

    @Override
    public long lastStableOffset(TopicPartition tp) {
        return new HotLog(dataDir).transactions(tp).lastStableOffset(highWatermark(tp));
    }

    @Override
    public List<OffsetRange> abortedBatches(TopicPartition tp, long fromOffset, long toOffsetExclusive) {
        List<AbortedTransaction> aborted = new HotLog(dataDir).transactions(tp).aborted(fromOffset, toOffsetExclusive);
        if (aborted.isEmpty()) {
            return List.of();
        }
        try (BatchRead read = new HotLog(dataDir).reader(tp).readBatches(fromOffset, null,
                (int) (toOffsetExclusive - fromOffset), Integer.MAX_VALUE)) {
            return read.abortedBatches(aborted);
        }
    }

    @Override
    public List<LogRecord> read(TopicPartition tp, long offset, int maxRecords) {
        if (offset >= highWatermark(tp)) {
            return List.of();
        }
        return new HotLog(dataDir).reader(tp).read(offset, null, maxRecords, Integer.MAX_VALUE).records();
    }
}
