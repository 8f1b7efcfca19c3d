package io.tierlog.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One partition's batches in a {@link Producer}: the open one being filled, the closed ones not yet numbered
 * ({@link #queued}), and the window of numbered ones sent and not yet finished ({@link #window}, sequence order, at
 * most {@code maxInFlightPerPartition}). Decides what to send next and how answers move batches, keeping Kafka's
 * idempotent producer guarantees with several requests in flight:
 * <ul>
 *   <li>A batch is numbered once, when it enters the window: epoch and base sequence follow the batch before it.
 *       The service appends a batch only when its sequence follows the last one appended, so no batch overtakes an
 *       earlier one, and a retry of any batch still in the window is answered as a duplicate: the service remembers
 *       a producer's last 5 batches per partition, and the window spans at most 5 numbered batches from its oldest
 *       unfinished one ({@link #span}). A batch acknowledged behind an unanswered one keeps its slot until that one
 *       is answered: requests travel on separate connections, and a sixth batch appended while the first's answer is
 *       still on its way would make the service forget the first, whose resend would then be appended again.</li>
 *   <li>{@code 409 out-of-order-sequence} means nothing was appended: requests travel on separate connections and a
 *       later batch can reach the service before an earlier one, or the earlier one failed. Such a batch is resent
 *       once the batch before it has answered (or been resent), so the window drains in order.</li>
 *   <li>A batch that waits for a retry stops every later batch from being sent and no new batch is numbered, so a
 *       retry never lands behind its successors.</li>
 *   <li>A batch that fails for good leaves a hole in the sequence. The window is then settled: batches whose outcome
 *       is unknown (no answer) are retried in their old numbering until answered (appended, or out of order: not
 *       appended), and then every batch left is renumbered from sequence 0 in a new epoch, in the same order.</li>
 *   <li>Until a batch of the current epoch is acknowledged (and after {@link #ESTABLISHED_FOR} without one) only one
 *       batch is in flight: the service accepts any first sequence from a producer it does not know (new, or
 *       expired), so a second batch overtaking the first would be appended ahead of it.</li>
 * </ul>
 * Not thread-safe: the producer's lock guards every method and field.
 */
final class PartitionQueue {
    /** How long after its last acknowledgement the service surely still remembers the producer (it keeps a day). */
    static final long ESTABLISHED_FOR = TimeUnit.MINUTES.toNanos(1);

    final TopicPartition tp;
    final ArrayDeque<Batch> queued = new ArrayDeque<>();
    final List<Batch> window = new ArrayList<>();
    Batch open;
    private short epoch;
    private int nextSequence;
    private boolean established;
    private long lastAckNanos;
    private boolean resetPending;
    private int inFlight;
    private int dispatches;
    /** Batches numbered so far, all epochs: {@link Batch#numberedAs} of the next one. */
    private long numbered;
    /** The size of this partition's last closed batch: where the next one's array starts. */
    int lastBatchBytes;
    int lastBatchRecords;

    PartitionQueue(TopicPartition tp) {
        this.tp = tp;
    }

    /** How many batches may be in the window now. */
    private int limit(int perPartition, long now) {
        return established && now - lastAckNanos < ESTABLISHED_FOR ? perPartition : 1;
    }

    /** Whether a new batch could enter the window now (the open batch is worth closing). */
    boolean hasRoom(int perPartition) {
        return !resetPending && span() < limit(perPartition, System.nanoTime());
    }

    /** Batches numbered from the oldest one in the window (not yet finished) on, that one included. */
    private int span() {
        return window.isEmpty() ? 0 : (int) (numbered - window.get(0).numberedAs);
    }

    /** Nothing buffered, queued or in flight. */
    boolean idle() {
        return open == null && queued.isEmpty() && window.isEmpty();
    }

    /** Requests of this partition awaiting their answer. */
    int inFlight() {
        return inFlight;
    }

    /**
     * Adds to {@code out} the batches to send now (numbered, marked in flight, in sequence order), at most
     * {@code room} (the producer's requests in flight left).
     *
     * @return nanoseconds until a waiting retry is due, or Long.MAX_VALUE
     */
    long sendable(long now, int perPartition, int room, List<Batch> out) {
        long next = Long.MAX_VALUE;
        if (room <= 0) {
            return next; // an answer frees a slot and wakes the sender
        }
        if (resetPending) {
            if (inFlight > 0) {
                return next;
            }
            for (Batch b : window) {
                if (b.outcomeUnknown) {
                    // Settle it in its old numbering first: renumbering a batch the service holds would append it twice.
                    if (now >= b.dueNanos) {
                        send(b, out);
                        return next;
                    }
                    return b.dueNanos - now;
                }
            }
            // Everything left is known not appended: the same batches, in the same order, from sequence 0.
            epoch = (short) ((epoch + 1) & 0x7fff);
            nextSequence = 0;
            established = false;
            resetPending = false;
            for (int i = window.size() - 1; i >= 0; i--) {
                Batch b = window.get(i);
                b.waiting = false;
                b.waitAfterDispatch = -1;
                queued.addFirst(b);
            }
            window.clear();
        }
        boolean waiting = false;
        Batch previous = null;
        int sent = 0;
        for (Batch b : window) {
            if (b.waiting) {
                waiting = true;
                if (sent >= room) {
                    break;
                }
                if (b.waitAfterDispatch >= 0 && previous != null && previous.dispatchNo <= b.waitAfterDispatch) {
                    break; // its predecessor has not answered (or been resent) since this batch was out of order
                }
                if (now < b.dueNanos) {
                    next = Math.min(next, b.dueNanos - now);
                    break;
                }
                send(b, out);
                sent++;
            }
            previous = b;
        }
        if (!waiting) {
            int limit = limit(perPartition, now);
            while (span() < limit && !queued.isEmpty() && sent++ < room) {
                Batch b = queued.pollFirst();
                b.numberedAs = numbered++;
                b.epoch = epoch;
                b.sequence = nextSequence;
                nextSequence = incrementSequence(nextSequence, b.recordCount);
                window.add(b);
                send(b, out);
            }
        }
        return next;
    }

    private void send(Batch b, List<Batch> out) {
        b.waiting = false;
        b.inFlight = true;
        b.attempts++;
        b.dispatchNo = ++dispatches;
        b.predecessorsOpenAtSend = window.get(0) != b;
        inFlight++;
        out.add(b);
    }

    private boolean answered(Batch b) {
        if (!b.inFlight) {
            return false;
        }
        b.inFlight = false;
        inFlight--;
        return true;
    }

    /** {@code b} was appended (or answered as a duplicate of its earlier attempt). */
    void acknowledged(Batch b, long now) {
        answered(b);
        window.remove(b);
        if (b.epoch == epoch) {
            established = true;
            lastAckNanos = now;
        }
    }

    /**
     * {@code b} was refused as out of order, so it is not in the log. Returns false when it is past its delivery
     * deadline (the caller fails it); otherwise it waits to be resent (after its predecessor, or renumbered).
     */
    boolean outOfOrder(Batch b, long now) {
        answered(b);
        b.outcomeUnknown = false; // a retry of a batch the service holds is answered as a duplicate, never so
        if (now >= b.deadlineNanos || !window.contains(b)) {
            return false;
        }
        b.waiting = true;
        b.dueNanos = now;
        b.waitAfterDispatch = -1;
        int i = window.indexOf(b);
        if (i > 0) {
            b.waitAfterDispatch = window.get(i - 1).dispatchNo;
        } else if (!b.predecessorsOpenAtSend) {
            // Nothing of ours explains the gap (an earlier batch failed, or the service forgot us): renumber.
            resetPending = true;
        }
        return true;
    }

    /** {@code b} gets another attempt, in its numbering, at {@code dueNanos}. */
    void retryLater(Batch b, long dueNanos) {
        answered(b);
        b.waiting = true;
        b.dueNanos = dueNanos;
        b.waitAfterDispatch = -1;
    }

    /** {@code b} failed for good; the batches after it are renumbered when {@code idempotent}. */
    void failed(Batch b, boolean idempotent) {
        answered(b);
        if (window.remove(b) && idempotent) {
            resetPending = true;
        }
    }

    /** Kafka's sequence arithmetic: after Integer.MAX_VALUE comes 0. */
    static int incrementSequence(int sequence, int increment) {
        if (sequence > Integer.MAX_VALUE - increment) {
            return increment - (Integer.MAX_VALUE - sequence) - 1;
        }
        return sequence + increment;
    }

    /** Records sent together in one request; fields guarded by the producer's lock except where noted. */
    static final class Batch {
        final PartitionQueue queue;
        final long createdNanos;
        final long deadlineNanos;
        /**
         * The records, written into the request body as they are sent ({@link RecordBatchBuilder}); null once the
         * batch is finished (acknowledged, failed or dropped by close).
         */
        RecordBatchBuilder builder;
        /** The records' futures in append order; null once the batch is finished. */
        List<CompletableFuture<RecordMetadata>> futures;
        /**
         * Completes (never exceptionally) after every record's future did: what {@link Producer#flush} waits for, one
         * completion per batch instead of one per record.
         */
        final CompletableFuture<Void> done = new CompletableFuture<>();
        int recordCount;
        int bytes;
        /** The finished batch, {@code encoded[0, encodedLength)}, stamped before each send by the one thread sending it. */
        byte[] encoded;
        int encodedLength;
        short epoch;
        int sequence;
        /** The count of batches this partition numbered before this one (the latest numbering). */
        long numberedAs;
        int attempts;
        boolean inFlight;
        boolean waiting;
        long dueNanos;
        int dispatchNo;
        /** When waiting after out-of-order: the dispatch of its predecessor that must be followed first (-1: none). */
        int waitAfterDispatch = -1;
        boolean predecessorsOpenAtSend;
        /** Some attempt got no answer (or a 5xx after the append may have happened): it may be in the log. */
        volatile boolean outcomeUnknown;

        /**
         * A batch written into {@code array} (sized like its partition's previous batch, or a reused one) that grows
         * up to {@code growTo} bytes (more only for a large record), expecting about {@code expectedRecords}.
         */
        Batch(PartitionQueue queue, long createdNanos, long deadlineNanos, byte[] array, int growTo,
              int expectedRecords) {
            this.queue = queue;
            this.createdNanos = createdNanos;
            this.deadlineNanos = deadlineNanos;
            this.builder = new RecordBatchBuilder(array, growTo);
            this.futures = new ArrayList<>(expectedRecords);
        }

        /** Appends the record's bytes (no copy of the record is kept) and its future. */
        void add(long timestamp, ProducerRecord r, CompletableFuture<RecordMetadata> f, int size) {
            builder.append(timestamp, r.key(), r.value(), r.headers());
            futures.add(f);
            recordCount++;
            bytes += size;
        }
    }
}
