package io.tierlog.log.compaction;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the cleaner's passes for metrics: bytes read to clean and bytes removed, segments swapped, passes and
 * their total time, and the largest dirty ratio of a compacted partition seen by the last pass. Thread-safe.
 */
public final class CompactionStats {
    private final LongAdder passes = new LongAdder();
    private final LongAdder partitionsCleaned = new LongAdder();
    private final LongAdder segmentsRewritten = new LongAdder();
    private final LongAdder bytesCleaned = new LongAdder();
    private final LongAdder bytesRemoved = new LongAdder();
    private final LongAdder passNanos = new LongAdder();
    private volatile double maxDirtyRatio;

    /** Records one partition's result within a pass. */
    public void partition(CleanResult r) {
        if (r.ran()) {
            partitionsCleaned.increment();
            segmentsRewritten.add(r.segmentsRewritten());
            bytesCleaned.add(r.bytesRead());
            bytesRemoved.add(r.cleanableBytes() - r.bytesAfter());
        }
    }

    /** Records a whole pass: its duration and the largest dirty ratio it measured. */
    public void pass(long nanos, double maxDirtyRatio) {
        passes.increment();
        passNanos.add(nanos);
        this.maxDirtyRatio = maxDirtyRatio;
    }

    public long passes() {
        return passes.sum();
    }

    public long partitionsCleaned() {
        return partitionsCleaned.sum();
    }

    public long segmentsRewritten() {
        return segmentsRewritten.sum();
    }

    /** Bytes of segments read to clean them (Kafka's cleaner reports the same as its input). */
    public long bytesCleaned() {
        return bytesCleaned.sum();
    }

    public long bytesRemoved() {
        return bytesRemoved.sum();
    }

    public double passSeconds() {
        return passNanos.sum() / 1e9;
    }

    /** The largest {@code dirty / cleanable} bytes ratio of a compacted partition in the last pass. */
    public double maxDirtyRatio() {
        return maxDirtyRatio;
    }
}
