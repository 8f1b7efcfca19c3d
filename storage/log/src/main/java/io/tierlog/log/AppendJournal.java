package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this process's writers appended and its indexer has not yet taken: per partition, each batch's place and
 * header facts and its keys ({@link AppendedBatch}), in append order. The indexer indexes these without reading the
 * batches back from the segment and checking their CRC again (the append validated them); what another process
 * appended, or what did not fit here, it still reads from the log. Only a process that indexes keeps one (the
 * index-service); writers opened without one record nothing.
 *
 * <p>Bounded per partition ({@link #MAX_BATCHES}, {@link #MAX_PARTITION_BYTES}) and over all partitions (the
 * process's bound, {@link #DEFAULT_MAX_HELD_BYTES}), so that an indexer that falls behind costs reads, not memory: a
 * batch that would pass a bound is not recorded and its partition is emptied, and the gap that leaves sends the
 * indexer to the log. In memory only; the index's checkpoint stays the truth of what is indexed. Thread-safe.
 */
public final class AppendJournal {
    static final int MAX_BATCHES = 4096;
    static final long MAX_PARTITION_BYTES = 16L * 1024 * 1024;
    static final long DEFAULT_MAX_HELD_BYTES = 64L * 1024 * 1024;

    private final ConcurrentMap<TopicPartition, Pending> pending = new ConcurrentHashMap<>();
    private final long maxHeldBytes;
    /** What all partitions' recorded batches take ({@link AppendedBatch#footprint}). */
    private final AtomicLong held = new AtomicLong();

    public AppendJournal() {
        this(DEFAULT_MAX_HELD_BYTES);
    }

    AppendJournal(long maxHeldBytes) {
        this.maxHeldBytes = maxHeldBytes;
    }

    /** One partition's batches not yet taken. Guarded by itself. */
    private static final class Pending {
        final ArrayDeque<AppendedBatch> batches = new ArrayDeque<>();
        long bytes;
    }

    /**
     * Records a batch just written at {@code info}'s place. Called by the partition's writer under its lock, so a
     * partition's batches arrive in the order they lie in the log.
     */
    void appended(TopicPartition tp, BatchInfo info, int crc, ByteBuffer batch) {
        AppendedBatch appended = AppendedBatch.of(info, crc, batch);
        Pending p = pending.computeIfAbsent(tp, k -> new Pending());
        synchronized (p) {
            long footprint = appended == null ? 0 : appended.footprint();
            if (appended == null || p.batches.size() >= MAX_BATCHES || p.bytes + footprint > MAX_PARTITION_BYTES
                    || held.get() + footprint > maxHeldBytes) {
                // A compressed batch, or too much untaken: the indexer meets a gap and reads from the log.
                release(p);
                return;
            }
            p.batches.add(appended);
            p.bytes += footprint;
            held.addAndGet(footprint);
        }
    }

    /** Takes the partition's recorded batches, oldest first; empty when there are none. */
    public List<AppendedBatch> take(TopicPartition tp) {
        Pending p = pending.get(tp);
        if (p == null) {
            return List.of();
        }
        synchronized (p) {
            List<AppendedBatch> out = new ArrayList<>(p.batches);
            release(p);
            return out;
        }
    }

    /** Drops what is recorded for a partition being deleted. */
    void forget(TopicPartition tp) {
        Pending p = pending.remove(tp);
        if (p != null) {
            synchronized (p) {
                release(p);
            }
        }
    }

    /** Bytes all partitions' recorded batches take now. */
    long heldBytes() {
        return held.get();
    }

    /** Empties a partition's record. Caller holds {@code p}. */
    private void release(Pending p) {
        held.addAndGet(-p.bytes);
        p.batches.clear();
        p.bytes = 0;
    }
}
