package io.tierlog.bench.groups;

import java.util.HashMap;
import java.util.Map;

/**
 * Who consumed each partition last since it was assigned, and when: members report the first record they read
 * from a partition after it was given to them. The trials wait on it. Thread-safe.
 */
final class Tracker {
    /** The first record of a partition read by its new owner. */
    record Take(String member, long nanos) {
    }

    private final Map<Integer, Take> takes = new HashMap<>();

    synchronized void firstRecord(String member, int partition, long nanos) {
        takes.put(partition, new Take(member, nanos));
        notifyAll();
    }

    synchronized Take take(int partition) {
        return takes.get(partition);
    }

    /** Waits up to {@code millis} for a change; returns at once when one came. */
    synchronized void awaitChange(long millis) throws InterruptedException {
        wait(millis);
    }
}
