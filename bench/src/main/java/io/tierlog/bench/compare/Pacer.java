package io.tierlog.bench.compare;

import java.util.concurrent.locks.LockSupport;

/**
 * Schedules sends at a fixed rate: the n-th unit is due at {@code start + n * interval}. {@link #awaitNext()}
 * waits until the next unit is due and returns its scheduled time, so a caller that fell behind sends at once
 * and its latency, measured from the scheduled time, includes the delay. Unpaced (interval 0) it returns
 * {@link System#nanoTime()} immediately. One instance per thread; not thread-safe.
 */
public final class Pacer {
    private final long startNanos;
    private final double intervalNanos;
    private long sent;

    /** {@code unitsPerSecond <= 0}: unpaced. */
    public Pacer(long startNanos, double unitsPerSecond) {
        this(startNanos, unitsPerSecond, 0, 1);
    }

    /**
     * The pacer of worker {@code worker} of {@code workers} that share a rate: each runs at {@code unitsPerSecond}
     * but starts {@code worker / workers} of an interval later, so together they send evenly spaced instead of
     * in bursts of {@code workers} at once.
     */
    public Pacer(long startNanos, double unitsPerSecond, int worker, int workers) {
        this.intervalNanos = unitsPerSecond > 0 ? 1e9 / unitsPerSecond : 0;
        this.startNanos = startNanos + (long) (intervalNanos * worker / workers);
    }

    public long awaitNext() {
        if (intervalNanos == 0) {
            return System.nanoTime();
        }
        long due = startNanos + (long) (sent++ * intervalNanos);
        long now;
        while ((now = System.nanoTime()) < due) {
            LockSupport.parkNanos(due - now);
        }
        return due;
    }
}
