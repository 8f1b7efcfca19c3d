package io.tierlog.sharegroups;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The durable state of one share-partition (group, topic, partition), as stored in its state file (JSON, public
 * fields bound by Jackson). Every offset below {@link #startOffset} is done; {@link #records} holds the in-flight
 * window {@code [startOffset, endOffset)}, one entry per offset; offsets from {@link #endOffset} on were never
 * delivered. Mutable and not thread-safe: an instance lives inside one locked read-modify-write.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
final class SharePartitionState {
    /** Chosen when the share-partition is created; part of every lease id, so a lease outlives no delete. */
    public long incarnation;
    public long startOffset;
    public long endOffset;
    public TreeMap<Long, InFlight> records = new TreeMap<>();
    /** Archived records still to be produced to the dead-letter topic, in the order they must be produced. */
    public List<DeadLetter> deadLetters = new ArrayList<>();
    /** Next idempotent-producer sequence per dead-letter partition (Kafka's numbering: one per record). */
    public TreeMap<Integer, Integer> deadLetterSequences = new TreeMap<>();
    /**
     * Offsets whose entry in {@link #records} changed since the state was last written (not bound by Jackson: not
     * public), so a commit appends only those ({@link ShareStateLog}); may repeat an offset. Removals need no entry:
     * everything below {@link #startOffset} is gone.
     */
    long[] changed = new long[16];
    int changedCount;

    /** Notes that {@code offset}'s entry was added or changed. */
    void markChanged(long offset) {
        if (changedCount == changed.length) {
            changed = java.util.Arrays.copyOf(changed, changedCount * 2);
        }
        changed[changedCount++] = offset;
    }

    void clearChanges() {
        changedCount = 0;
    }

    enum Status { AVAILABLE, LEASED, ACCEPTED, ARCHIVED }

    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class InFlight {
        public Status status = Status.AVAILABLE;
        public int deliveryCount;
        /** While leased: the end of the lease (epoch ms); the lease length for renewals. */
        public long leaseUntilMs;
        public long leaseMs;
        /** While available: not to be leased before this (redelivery delay). */
        public long availableAtMs;

        boolean done() {
            return status == Status.ACCEPTED || status == Status.ARCHIVED;
        }
    }

    /** A record to produce to the dead-letter topic, with its partition and sequence fixed before the first try. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class DeadLetter {
        public long offset;
        public String reason;
        public int deliveryCount;
        public String topic;
        public int partition;
        public int sequence;
    }
}
