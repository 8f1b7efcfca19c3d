package io.tierlog.log.producer;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;

import java.time.Duration;
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
 *
 * <h2>Expiry</h2>
 * A producer not seen for {@code expiration} is forgotten, as Kafka forgets it after {@code producer.id.expiration.ms}
 * (default one day here too): without that the table, and every checkpoint that carries it, grows with each producer
 * id a partition has ever seen (a Lambda function instance, a short-lived client). A forgotten producer's next
 * request is a first request again: a retry that arrives later than the expiration is appended once more.
 *
 * <p>"Seen" is the writer's clock when it applied the producer's batch (its own append, or one it read back from the
 * log), not the batch's timestamp: record timestamps are the client's (CreateTime), and a producer backfilling
 * week-old events would otherwise be forgotten between its own requests. Batches read back at startup without a
 * checkpoint count as seen then, which only keeps a producer longer. Expiry is therefore not derived from the log,
 * and two writers of a partition may forget a producer at slightly different times; both still honour a retry
 * within the expiration.
 */
public final class ProducerStateTable {
    /** Kafka retains the metadata of the last 5 batches per producer for the same purpose. */
    public static final int RETAINED_BATCHES = 5;
    /** Kafka's default {@code producer.id.expiration.ms}. */
    public static final Duration DEFAULT_EXPIRATION = Duration.ofDays(1);
    /** {@link Entry#lastSeenMs} of an entry from a checkpoint written before entries recorded it. */
    public static final long UNKNOWN_LAST_SEEN = -1;

    public record AppendedBatch(int sequence, long firstOffset, long lastOffset) {
    }

    /** @param lastSeenMs the writer's clock when the producer's newest batch was applied */
    public record Entry(short epoch, long lastSeenMs, List<AppendedBatch> batches) {
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
    private final long expirationMs;

    private static final class MutableEntry {
        short epoch;
        long lastSeenMs;
        final Deque<AppendedBatch> batches = new ArrayDeque<>(RETAINED_BATCHES);

        MutableEntry(short epoch, long lastSeenMs) {
            this.epoch = epoch;
            this.lastSeenMs = lastSeenMs;
        }
    }

    public ProducerStateTable() {
        this(DEFAULT_EXPIRATION);
    }

    /** @param expiration how long a producer is remembered after its last batch; positive */
    public ProducerStateTable(Duration expiration) {
        if (expiration.isNegative() || expiration.isZero()) {
            throw new IllegalArgumentException("producer id expiration must be positive: " + expiration);
        }
        this.expirationMs = expiration.toMillis();
    }

    /** The verdict on a request of {@code recordCount} records at {@code nowMs}; an expired producer is unknown. */
    public Verdict check(ProducerIdentity producer, int recordCount, long nowMs) {
        if (producer.isNone()) {
            return new Append();
        }
        MutableEntry entry = entries.get(producer.producerId());
        if (entry != null && expired(entry, nowMs)) {
            entries.remove(producer.producerId());
            entry = null;
        }
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

    /** Records an appended batch (from this writer or read back from the log), seen at {@code nowMs}. */
    public void apply(BatchInfo batch, long nowMs) {
        if (batch.producerId() < 0) {
            return;
        }
        MutableEntry entry = entries.computeIfAbsent(batch.producerId(),
                id -> new MutableEntry(batch.producerEpoch(), nowMs));
        entry.lastSeenMs = Math.max(entry.lastSeenMs, nowMs);
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

    /** Forgets the producers not seen for the expiration as of {@code nowMs}; returns how many. */
    public int expire(long nowMs) {
        int before = entries.size();
        entries.values().removeIf(e -> expired(e, nowMs));
        return before - entries.size();
    }

    private boolean expired(MutableEntry entry, long nowMs) {
        return nowMs - entry.lastSeenMs >= expirationMs;
    }

    public int size() {
        return entries.size();
    }

    public Map<Long, Entry> entries() {
        Map<Long, Entry> out = new HashMap<>();
        entries.forEach((id, e) -> out.put(id, new Entry(e.epoch, e.lastSeenMs, List.copyOf(e.batches))));
        return out;
    }

    /**
     * Replaces the table with a checkpoint's. An entry whose last sighting is {@link #UNKNOWN_LAST_SEEN} (a
     * checkpoint from before entries recorded it) counts as seen at {@code nowMs}.
     */
    public void load(Map<Long, Entry> snapshot, long nowMs) {
        entries.clear();
        snapshot.forEach((id, e) -> {
            long seen = e.lastSeenMs() == UNKNOWN_LAST_SEEN ? nowMs : e.lastSeenMs();
            MutableEntry m = new MutableEntry(e.epoch(), seen);
            m.batches.addAll(e.batches());
            entries.put(id, m);
        });
        expire(nowMs);
    }

    public void clear() {
        entries.clear();
    }
}
