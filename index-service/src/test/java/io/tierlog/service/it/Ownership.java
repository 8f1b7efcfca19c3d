package io.tierlog.service.it;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one test consumer of a group owns, by its heartbeat answers, recorded as intervals on this JVM's monotonic
 * clock in a {@link Ledger} shared by all consumers. An ownership ends when the consumer gives the partition up, or
 * when its lease (the session timeout after its last answered heartbeat was sent) ran out, if that is earlier: a
 * consumer consumes nothing past its lease. Called from the consumer's own thread only; {@link #owned()} from any.
 */
final class Ownership {
    /** One consumer's ownership of one partition, from and to (nanoTime). */
    record Interval(int consumer, int partition, long from, long to) {
    }

    /** Every consumer's intervals; the proof that no partition ever had two owners at once. */
    static final class Ledger {
        private final List<Interval> intervals = new CopyOnWriteArrayList<>();

        void assertNoPartitionHadTwoOwners() {
            for (Interval x : intervals) {
                for (Interval y : intervals) {
                    if (x.partition() == y.partition() && x.consumer() != y.consumer()) {
                        assertThat(x.to() <= y.from() || y.to() <= x.from())
                                .as("partition %d owned by consumers %d and %d at once", x.partition(), x.consumer(),
                                        y.consumer()).isTrue();
                    }
                }
            }
        }

        boolean recorded(int consumer) {
            return intervals.stream().anyMatch(i -> i.consumer() == consumer);
        }

        boolean isEmpty() {
            return intervals.isEmpty();
        }
    }

    private final int consumer;
    private final long sessionNanos;
    private final Ledger ledger;
    private final Map<Integer, Long> since = new HashMap<>();
    private volatile Set<Integer> owned = Set.of();
    private long lastAnsweredSend;

    Ownership(int consumer, long sessionMs, Ledger ledger) {
        this.consumer = consumer;
        this.sessionNanos = sessionMs * 1_000_000;
        this.ledger = ledger;
    }

    Set<Integer> owned() {
        return owned;
    }

    /** True if the consumer owns something but its last answered heartbeat was sent more than a session ago. */
    boolean leaseRanOut(long now) {
        return !owned.isEmpty() && now - lastAnsweredSend > sessionNanos;
    }

    /**
     * A heartbeat sent at {@code sent} was answered at {@code received} with {@code assigned}: what is no longer
     * assigned is given up, what is new is owned from now.
     */
    void answered(Set<Integer> assigned, long sent, long received) {
        Set<Integer> gone = new HashSet<>(owned);
        gone.removeAll(assigned);
        release(gone, received);
        Set<Integer> added = new HashSet<>(assigned);
        added.removeAll(owned);
        added.forEach(p -> since.put(p, received));
        owned = Set.copyOf(assigned);
        lastAnsweredSend = sent;
    }

    /** Gives up everything owned (left, fenced, killed or lease ran out). */
    void releaseAll(long now) {
        release(Set.copyOf(owned), now);
    }

    /** Waits until each consumer owns {@code each} partitions, checking {@code failures} (a consumer died?) meanwhile. */
    static void awaitEach(List<Ownership> ownerships, int each, int seconds, Runnable failures)
            throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (ownerships.stream().allMatch(o -> o.owned.size() == each)) {
                return;
            }
            failures.run();
            Thread.sleep(20);
        }
        throw new AssertionError("consumers did not reach " + each + " partitions each: "
                + ownerships.stream().map(Ownership::owned).toList());
    }

    private void release(Set<Integer> partitions, long now) {
        long at = lastAnsweredSend == 0 ? now : Math.min(now, lastAnsweredSend + sessionNanos);
        for (int p : partitions) {
            ledger.intervals.add(new Interval(consumer, p, since.get(p), at));
        }
        Set<Integer> left = new HashSet<>(owned);
        left.removeAll(partitions);
        owned = Set.copyOf(left);
    }
}
