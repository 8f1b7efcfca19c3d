package io.tierlog.log.internal.producer;

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
 * {@value #RETAINED_BATCHES} batches appended (their sequence range and offsets), so a retry of any of them is
 * answered with its original offsets.
 *
 * <p>The table is derived from the log: every batch carries its producer id, epoch and base sequence, so applying the
 * batches of a partition in order rebuilds it exactly. Snapshots ({@link ProducerSnapshot}) only shorten that scan.
 *
 * <h2>Sequence rule (Kafka's ProducerStateManager)</h2>
 * A sequence counts records per (producer id, partition): a batch of n records with base sequence s covers
 * sequences s .. s+n-1, and the producer's next batch on that partition must start at s+n (after
 * {@link Integer#MAX_VALUE} comes 0, as in Kafka). A batch whose (first, last) sequence equals one of the retained
 * batches' is a retry: a {@link Duplicate} with that batch's offsets. Any other sequence is {@link OutOfOrder}. An
 * older epoch is {@link Fenced}; a newer epoch must start at sequence 0. A producer the table does not know (never
 * seen, or expired) may start at any sequence, as Kafka accepts a producer whose state was removed.
 *
 * <h2>Entries of unknown numbering</h2>
 * Before 2026-12 a sequence counted requests, not records. An entry built from such state (a checkpoint without a
 * version, or batches replayed without a current checkpoint) is marked {@code legacy}: a retry of one of its
 * batches is still a {@link Duplicate} (the range s .. s+n-1 of a request with sequence s and n records is what
 * its retry brings), but any other sequence of the current epoch is accepted as a new start, as for an unknown
 * producer. The next batch appended for the producer ends that; see ADR 0002.
 *
 * <h2>Transactions (KIP-98, Kafka's ProducerAppendInfo)</h2>
 * A producer's first transactional batch on the partition opens its transaction there at that batch's base offset
 * ({@link Entry#txnFirstOffset}); a transaction marker (a control batch, base sequence -1, which takes no part in the
 * sequence bookkeeping) closes it and makes a newer epoch the producer's current one, fencing the older epoch's
 * batches. While the transaction is open, a non-transactional batch of the producer is {@link InvalidTxnState}. A
 * producer with an open transaction never expires: its first offset holds back the partition's last stable offset.
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
 *
 * <p>Not thread-safe; the partition's writer lock guards it.
 */
public final class ProducerStateTable {
    /** Kafka retains the metadata of the last 5 batches per producer for the same purpose. */
    public static final int RETAINED_BATCHES = 5;
    /** Kafka's default {@code producer.id.expiration.ms}. */
    public static final Duration DEFAULT_EXPIRATION = Duration.ofDays(1);
    /** {@link Entry#lastSeenMs} of an entry from a checkpoint written before entries recorded it. */
    public static final long UNKNOWN_LAST_SEEN = -1;

    /** A retained batch: sequences {@code firstSequence..lastSequence} (wrapping) took these offsets. */
    public record AppendedBatch(int firstSequence, int lastSequence, long firstOffset, long lastOffset) {
    }

    /** {@link Entry#txnFirstOffset} of a producer without an open transaction on the partition. */
    public static final long NO_TXN = -1;

    /**
     * @param lastSeenMs     the writer's clock when the producer's newest batch was applied
     * @param legacy         the sequences may count requests (state from before Kafka's numbering); see the class doc
     * @param txnFirstOffset where the producer's open transaction on the partition began, or {@link #NO_TXN}
     */
    public record Entry(short epoch, long lastSeenMs, boolean legacy, List<AppendedBatch> batches,
                        long txnFirstOffset) {
        /** An entry without an open transaction. */
        public Entry(short epoch, long lastSeenMs, boolean legacy, List<AppendedBatch> batches) {
            this(epoch, lastSeenMs, legacy, batches, NO_TXN);
        }
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

    /** A non-transactional batch from a producer whose transaction on the partition is open since {@code txnFirstOffset}. */
    public record InvalidTxnState(long txnFirstOffset) implements Verdict {
    }

    private final Map<Long, MutableEntry> entries = new HashMap<>();
    private final long expirationMs;
    /** While true, batches applied come from a replay of unknown numbering and mark their producers legacy. */
    private boolean replayingLegacy;

    private static final class MutableEntry {
        short epoch;
        long lastSeenMs;
        boolean legacy;
        long txnFirstOffset = NO_TXN;
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

    /** Kafka's {@code DefaultRecordBatch.incrementSequence}: sequences wrap from Integer.MAX_VALUE to 0. */
    public static int incrementSequence(int sequence, int increment) {
        if (sequence > Integer.MAX_VALUE - increment) {
            return increment - (Integer.MAX_VALUE - sequence) - 1;
        }
        return sequence + increment;
    }

    /** The verdict on a non-transactional batch; see {@link #check(ProducerIdentity, int, boolean, long)}. */
    public Verdict check(ProducerIdentity producer, int recordCount, long nowMs) {
        return check(producer, recordCount, false, nowMs);
    }

    /**
     * The verdict on a batch of {@code recordCount} records at {@code nowMs}; an expired producer is unknown. A
     * retry is a {@link Duplicate} before anything else is judged, as in Kafka.
     */
    public Verdict check(ProducerIdentity producer, int recordCount, boolean transactional, long nowMs) {
        if (producer.isNone()) {
            return new Append();
        }
        MutableEntry entry = known(producer.producerId(), nowMs);
        if (entry == null) {
            return new Append();
        }
        if (producer.epoch() < entry.epoch) {
            return new Fenced(entry.epoch);
        }
        if (producer.epoch() > entry.epoch) {
            return producer.sequence() == 0 ? new Append() : new OutOfOrder(0);
        }
        int first = producer.sequence();
        int last = incrementSequence(first, recordCount - 1);
        for (AppendedBatch b : entry.batches) {
            if (b.firstSequence() == first && b.lastSequence() == last) {
                return new Duplicate(b);
            }
        }
        if (!transactional && entry.txnFirstOffset != NO_TXN) {
            return new InvalidTxnState(entry.txnFirstOffset);
        }
        if (entry.legacy || entry.batches.isEmpty()) {
            return new Append();
        }
        int expected = incrementSequence(entry.batches.peekLast().lastSequence(), 1);
        return first == expected ? new Append() : new OutOfOrder(expected);
    }

    /**
     * The verdict on a transaction marker of {@code producerId} at {@code epoch}: {@link Fenced} if the producer's
     * current epoch is newer, else {@link Append} (also for a producer without an open transaction here, or unknown:
     * Kafka writes such a marker too, which makes a coordinator's retried marker harmless).
     */
    public Verdict checkMarker(long producerId, short epoch, long nowMs) {
        MutableEntry entry = known(producerId, nowMs);
        return entry != null && epoch < entry.epoch ? new Fenced(entry.epoch) : new Append();
    }

    /** Where {@code producerId}'s open transaction on the partition began, or {@link #NO_TXN}. */
    public long openTransaction(long producerId) {
        MutableEntry entry = entries.get(producerId);
        return entry == null ? NO_TXN : entry.txnFirstOffset;
    }

    /**
     * Whether a transactional batch of {@code producerId} at {@code epoch}, applied now, would open the producer's
     * transaction on the partition (it has none open, and the epoch is not older than its current one).
     */
    public boolean opensTransaction(long producerId, short epoch) {
        MutableEntry entry = entries.get(producerId);
        return entry == null || (epoch >= entry.epoch && entry.txnFirstOffset == NO_TXN);
    }

    /** The producer's entry, or null if it is unknown or expired as of {@code nowMs} (then it is forgotten). */
    private MutableEntry known(long producerId, long nowMs) {
        MutableEntry entry = entries.get(producerId);
        if (entry != null && expired(entry, nowMs)) {
            entries.remove(producerId);
            return null;
        }
        return entry;
    }

    /**
     * Records an appended batch (this writer's, or one read back from the log), seen at {@code nowMs}. Its producer
     * is legacy afterwards exactly when the batch comes from a replay of unknown numbering
     * ({@link #replayingLegacy}): any other batch was checked, by some writer, under Kafka's numbering.
     */
    public void apply(BatchInfo batch, long nowMs) {
        if (batch.control()) {
            applyMarker(batch, nowMs);
            return;
        }
        MutableEntry entry = applyEntry(batch, nowMs);
        if (entry != null) {
            entry.legacy = replayingLegacy;
        }
    }

    private MutableEntry applyEntry(BatchInfo batch, long nowMs) {
        if (batch.producerId() < 0) {
            return null;
        }
        MutableEntry entry = entries.computeIfAbsent(batch.producerId(),
                id -> new MutableEntry(batch.producerEpoch(), nowMs));
        entry.lastSeenMs = Math.max(entry.lastSeenMs, nowMs);
        if (batch.producerEpoch() > entry.epoch) {
            entry.epoch = batch.producerEpoch();
            entry.batches.clear();
        } else if (batch.producerEpoch() < entry.epoch) {
            return null;
        }
        if (batch.transactional() && entry.txnFirstOffset == NO_TXN) {
            entry.txnFirstOffset = batch.baseOffset();
        }
        entry.batches.addLast(new AppendedBatch(batch.baseSequence(),
                incrementSequence(batch.baseSequence(), batch.recordCount() - 1), batch.baseOffset(),
                batch.lastOffset()));
        while (entry.batches.size() > RETAINED_BATCHES) {
            entry.batches.removeFirst();
        }
        return entry;
    }

    /**
     * A marker closes the producer's transaction and moves it to the marker's epoch when that is newer (Kafka's
     * {@code maybeUpdateProducerEpoch}: the older epoch's batches are forgotten, so they are fenced). Its base sequence
     * is -1 and it adds no batch to the sequence bookkeeping. A marker of an older epoch is never written
     * ({@link #checkMarker}); one found in the log anyway changes nothing.
     */
    private void applyMarker(BatchInfo marker, long nowMs) {
        if (marker.producerId() < 0) {
            return;
        }
        MutableEntry entry = entries.computeIfAbsent(marker.producerId(),
                id -> new MutableEntry(marker.producerEpoch(), nowMs));
        if (marker.producerEpoch() < entry.epoch) {
            return;
        }
        if (marker.producerEpoch() > entry.epoch) {
            entry.epoch = marker.producerEpoch();
            entry.batches.clear();
        }
        entry.lastSeenMs = Math.max(entry.lastSeenMs, nowMs);
        entry.txnFirstOffset = NO_TXN;
    }

    /**
     * While {@code on}, every producer that a batch is {@link #apply applied} for is marked legacy: the caller is
     * replaying batches with no checkpoint of known numbering before them (they may have been written before
     * Kafka's numbering).
     */
    public void replayingLegacy(boolean on) {
        replayingLegacy = on;
    }

    /** Forgets the producers not seen for the expiration as of {@code nowMs}; returns how many. */
    public int expire(long nowMs) {
        int before = entries.size();
        entries.values().removeIf(e -> expired(e, nowMs));
        return before - entries.size();
    }

    private boolean expired(MutableEntry entry, long nowMs) {
        // An open transaction holds the last stable offset until its marker: forgetting it would release it.
        return entry.txnFirstOffset == NO_TXN && nowMs - entry.lastSeenMs >= expirationMs;
    }

    public int size() {
        return entries.size();
    }

    public Map<Long, Entry> entries() {
        Map<Long, Entry> out = new HashMap<>();
        entries.forEach((id, e) -> out.put(id, new Entry(e.epoch, e.lastSeenMs, e.legacy, List.copyOf(e.batches),
                e.txnFirstOffset)));
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
            m.legacy = e.legacy();
            m.txnFirstOffset = e.txnFirstOffset();
            m.batches.addAll(e.batches());
            entries.put(id, m);
        });
        expire(nowMs);
    }

    public void clear() {
        entries.clear();
    }
}
