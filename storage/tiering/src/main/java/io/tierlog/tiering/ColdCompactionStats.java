package io.tierlog.tiering;

import java.util.concurrent.atomic.DoubleAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the cold cleaner ({@link ColdCompactor}) for metrics and benchmarks: partitions compacted, bytes of
 * cold segments read (the input) and written, cold segments replaced, retired objects deleted after their grace,
 * passes and their time, partitions whose compaction failed (retried next pass), the largest dirty ratio seen by
 * the last pass, and the object-store requests of the passes
 * ({@link StoreRequests}: downloads, uploads, manifest loads and commits, deletions). Thread-safe.
 */
public final class ColdCompactionStats {
    private final LongAdder passes = new LongAdder();
    private final LongAdder partitionsCompacted = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder segmentsReplaced = new LongAdder();
    private final LongAdder retiredDeleted = new LongAdder();
    private final LongAdder passNanos = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private volatile String lastFailure = "";
    private final StoreRequests requests = new StoreRequests();
    private final DoubleAccumulator passMaxDirtyRatio = new DoubleAccumulator(Math::max, 0);
    private volatile double maxDirtyRatio;

    void partition(long read, long written, int replaced) {
        partitionsCompacted.increment();
        bytesRead.add(read);
        bytesWritten.add(written);
        segmentsReplaced.add(replaced);
    }

    void retiredDeleted(int objects) {
        retiredDeleted.add(objects);
    }

    /** A partition's compaction failed, or a pass paused with the store unavailable; it is retried next pass. */
    void failed(Exception e) {
        failures.increment();
        lastFailure = e.toString();
    }

    /** One partition's dirty bytes over its cleanable bytes, measured by the running pass. */
    void dirtyRatio(double ratio) {
        passMaxDirtyRatio.accumulate(ratio);
    }

    void pass(long nanos) {
        passes.increment();
        passNanos.add(nanos);
        maxDirtyRatio = passMaxDirtyRatio.getThenReset();
    }

    /** The largest {@code dirty / cleanable} bytes ratio of a compacted partition's cold tier in the last pass. */
    public double maxDirtyRatio() {
        return maxDirtyRatio;
    }

    /** The object-store requests of the cold cleaner's passes. */
    public StoreRequests requests() {
        return requests;
    }

    public long passes() {
        return passes.sum();
    }

    public long partitionsCompacted() {
        return partitionsCompacted.sum();
    }

    /** Bytes of cold segments downloaded and filtered: the cleaner's input. */
    public long bytesRead() {
        return bytesRead.sum();
    }

    /** Bytes of compacted objects uploaded. */
    public long bytesWritten() {
        return bytesWritten.sum();
    }

    public long segmentsReplaced() {
        return segmentsReplaced.sum();
    }

    public long retiredDeleted() {
        return retiredDeleted.sum();
    }

    /** Partitions whose compaction failed, and passes the store's unavailability paused. */
    public long failures() {
        return failures.sum();
    }

    /** What the latest failure was ("" if none), for the log's readers and tests' messages. */
    public String lastFailure() {
        return lastFailure;
    }

    public double passSeconds() {
        return passNanos.sum() / 1e9;
    }
}
