package io.tierlog.log.producer;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one partition knows about idempotent producers: per producer id, the current epoch and the last
 * {@value #RETAINED_BATCHES} batches appended (their sequence and offsets), so a retry of any of them is
 * answered with its original offsets.
 *
 * <p>The table is derived from the log: every batch carries its producer id, epoch and sequence, so applying the
 * batches of a partition in order rebuilds it exactly. Snapshots ({@link ProducerSnapshot}) only shorten that scan.
 *
 * <p>Sequence rule: the sequence counts requests per (producer id, partition). The first request of an epoch in a
 * partition may carry any sequence; each later one must carry the previous + 1. Not thread-safe; the partition's
 * writer lock guards it.
 */
public final class ProducerStateTable {
    /** Kafka retains the metadata of the last 5 batches per producer for the same purpose. */
    public static final int RETAINED_BATCHES = 5;

    public record AppendedBatch(int sequence, long firstOffset, long lastOffset) {
    }

    public record Entry(short epoch, List<AppendedBatch> batches) {
    }

    /** The verdict on a request before it is appended. */
    public sealed interface Verdict {
    }

    public record Append() implements Verdict {
    }

    public record Duplicate(AppendedBatch original) implements Verdict {
    }

    public record OutOfOrder(int expected) implements Verdict {
    }

    public record Fenced(short currentEpoch) implements Verdict {
    }

    private final Map<Long, MutableEntry> entries = new HashMap<>();

    private static final class MutableEntry {
        short epoch;
        final Deque<AppendedBatch> batches = new ArrayDeque<>(RETAINED_BATCHES);

        MutableEntry(short epoch) {
            this.epoch = epoch;
        }
    }

    public Verdict check(ProducerIdentity producer, int recordCount) {
        if (producer.isNone()) {
            return new Append();
        }
        MutableEntry entry = entries.get(producer.producerId());
        if (entry == null || producer.epoch() > entry.epoch || entry.batches.isEmpty()) {
            return new Append();
        }
        if (producer.epoch() < entry.epoch) {
            return new Fenced(entry.epoch);
        }
        AppendedBatch last = entry.batches.peekLast();
        if (producer.sequence() == last.sequence() + 1) {
            return new Append();
        }
        for (AppendedBatch b : entry.batches) {
            if (b.sequence() == producer.sequence() && b.lastOffset() - b.firstOffset() + 1 == recordCount) {
                return new Duplicate(b);
            }
        }
        return new OutOfOrder(last.sequence() + 1);
    }

    /** Records an appended batch (from this writer or read back from the log). */
    public void apply(BatchInfo batch) {
        if (batch.producerId() < 0) {
            return;
        }
        MutableEntry entry = entries.computeIfAbsent(batch.producerId(), id -> new MutableEntry(batch.producerEpoch()));
        if (batch.producerEpoch() > entry.epoch) {
            entry.epoch = batch.producerEpoch();
            entry.batches.clear();
        } else if (batch.producerEpoch() < entry.epoch) {
            return;
        }
        entry.batches.addLast(new AppendedBatch(batch.baseSequence(), batch.baseOffset(), batch.lastOffset()));
        while (entry.batches.size() > RETAINED_BATCHES) {
            entry.batches.removeFirst();
        }
    }

    public Map<Long, Entry> entries() {
        Map<Long, Entry> out = new HashMap<>();
        entries.forEach((id, e) -> out.put(id, new Entry(e.epoch, List.copyOf(e.batches))));
        return out;
    }

    public void load(Map<Long, Entry> snapshot) {
        entries.clear();
        snapshot.forEach((id, e) -> {
            MutableEntry m = new MutableEntry(e.epoch());
            m.batches.addAll(e.batches());
            entries.put(id, m);
        });
    }

    public void clear() {
        entries.clear();
    }
}
