package io.tierlog.bench.soak;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Per-partition count and order-free checksum of records: the producers add every record the service acknowledged
 * (at the offset it answered), the tail reader every record it read. Equal counts and sums, with the reader having
 * checked its offsets dense from 0, mean every acknowledged record was read back at its offset with its value.
 * Thread-safe.
 */
public final class Ledger {
    private final AtomicLongArray counts;
    private final AtomicLongArray sums;

    public Ledger(int partitions) {
        counts = new AtomicLongArray(partitions);
        sums = new AtomicLongArray(partitions);
    }

    public void add(int partition, long offset, String value) {
        counts.incrementAndGet(partition);
        sums.addAndGet(partition, fingerprint(offset, value));
    }

    /** One record's contribution to the checksum: its offset and its value, so a swap or a change shows. */
    static long fingerprint(long offset, String value) {
        long h = offset * 0x9E3779B97F4A7C15L;
        return h ^ (value.hashCode() * 0xC2B2AE3D27D4EB4FL);
    }

    public long count(int partition) {
        return counts.get(partition);
    }

    public long sum(int partition) {
        return sums.get(partition);
    }

    public int partitions() {
        return counts.length();
    }

    public long total() {
        long n = 0;
        for (int p = 0; p < counts.length(); p++) {
            n += counts.get(p);
        }
        return n;
    }
}
