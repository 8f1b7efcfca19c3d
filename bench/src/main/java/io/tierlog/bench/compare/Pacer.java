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
        this.startNanos = startNanos;
        this.intervalNanos = unitsPerSecond > 0 ? 1e9 / unitsPerSecond : 0;
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
