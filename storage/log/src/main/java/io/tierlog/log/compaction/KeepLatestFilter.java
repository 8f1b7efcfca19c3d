package io.tierlog.log.compaction;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;


/**
 * Kafka's cleaner rule as a {@link MemoryRecords.RecordFilter}: keep a key's latest record, drop tombstones past their
 * horizon, drop the records of aborted transactions, keep transaction markers, keep every batch (empty if need be).
 * Committed transactional records are compacted as any other. Remembers the earliest horizon of the tombstones it
 * kept. Used by the hot cleaner and by {@link SegmentCompaction} (the cold tier's cleaner). Not thread-safe: one
 * filter per segment.
 */
final class KeepLatestFilter extends MemoryRecords.RecordFilter {
    private final KeyMap latest;
    private final AbortedBatches aborted;
    private final boolean absentKeyIsLatest;
    long nextHorizonMs = Long.MAX_VALUE;

    /**
     * @param latest            key &rarr; offset of its latest record ({@link KeyMap#add}: committed records only)
     * @param aborted           the batches of aborted transactions: their records go
     * @param absentKeyIsLatest true when {@code latest} covers only the dirty part of the log (Kafka's cleaner): a key
     *                          it does not hold occurs once in the already cleaned part, so that record is its latest
     */
    KeepLatestFilter(KeyMap latest, AbortedBatches aborted, boolean absentKeyIsLatest, long now,
                     long deleteRetentionMs) {
        super(now, deleteRetentionMs);
        this.latest = latest;
        this.aborted = aborted;
        this.absentKeyIsLatest = absentKeyIsLatest;
    }

    @Override
    protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
        return new BatchRetentionResult(BatchRetention.RETAIN_EMPTY, false);
    }

    @Override
    protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
        if (batch.isControlBatch()) {
            // Markers stay (ADR 0058): the log keeps every batch header anyway, so dropping the control record would
            // save a few bytes, and recovery and the aborted-transaction lists still expect it.
            return true;
        }
        if (aborted.contains(batch)) {
            return false; // never was a value: Kafka's cleaner drops it too
        }
        if (!record.hasKey()) {
            return true;
        }
        Long last = latest.latest(record.key());
        if (last == null ? !absentKeyIsLatest : last != record.offset()) {
            return false;
        }
        if (record.hasValue()) {
            return true;
        }
        // A tombstone: kept until the horizon set when a pass first kept it (filterTo sets it on such batches).
        long horizon = batch.deleteHorizonMs().orElse(currentTime + deleteRetentionMs);
        if (horizon <= currentTime) {
            return false;
        }
        nextHorizonMs = Math.min(nextHorizonMs, horizon);
        return true;
    }
}
