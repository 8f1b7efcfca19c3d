package io.tierlog.sharegroups;

import io.tierlog.sharegroups.SharePartitionState.InFlight;
import io.tierlog.sharegroups.SharePartitionState.Status;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The semantics of one share-partition over its {@link SharePartitionState}: leasing, acknowledging, lease expiry,
 * delivery limits and the start offset's advance. Pure: no I/O, time given by the caller; the caller persists the
 * state. Not thread-safe (used inside one locked read-modify-write).
 *
 * <p>{@code grace} is how much longer than its lease a record stays unleasable: an ack is refused once the acking
 * instance's clock passes the lease's end, but another instance re-leases it only {@code grace} later, so with clocks
 * at most {@code grace} apart a record is never held by two consumers at once.
 */
final class SharePartition {
    static final String REJECTED = "rejected";
    static final String MAX_DELIVERY_ATTEMPTS = "max-delivery-attempts";

    private final SharePartitionState s;

    SharePartition(SharePartitionState state) {
        this.s = state;
    }

    /** A record leased by {@link #lease}: the lease is identified by (offset, deliveryCount). */
    record Granted(long offset, int deliveryCount, long leaseUntilMs) {
    }

    /** A record that will never be delivered again without an accept: to the dead-letter topic, if one is set. */
    record Archived(long offset, String reason, int deliveryCount) {
    }

    /** The outcome of one acknowledgement: ok, and the record archived by it, if any. */
    record AckOutcome(boolean ok, Archived archived) {
        static final AckOutcome EXPIRED = new AckOutcome(false, null);
        static final AckOutcome OK = new AckOutcome(true, null);
    }

    /**
     * Applies one acknowledgement to every record of {@code [first, last]} under delivery count {@code deliveryCount}
     * (a range lease, ADR 0042), all or nothing: refused (false, nothing changed) unless each is still leased under
     * that delivery count and its lease has not run out by {@code now}. Each record then changes exactly as
     * {@link #ack} changes it; records archived by it are added to {@code archived}.
     */
    boolean ackRange(long now, long first, long last, int deliveryCount, AckType type, ShareGroupConfig config,
                     List<Archived> archived) {
        if (first > last || last - first >= s.records.size()) {
            return false; // more offsets than are in flight: some are not leased
        }
        Map<Long, InFlight> run = s.records.subMap(first, true, last, true);
        if (run.size() != last - first + 1) {
            return false;
        }
        for (InFlight r : run.values()) {
            if (r.status != Status.LEASED || r.deliveryCount != deliveryCount || now >= r.leaseUntilMs) {
                return false;
            }
        }
        for (Map.Entry<Long, InFlight> e : run.entrySet()) {
            Archived a = apply(now, e.getKey(), e.getValue(), type, config);
            if (a != null) {
                archived.add(a);
            }
        }
        advanceStart();
        return true;
    }

    SharePartitionState state() {
        return s;
    }

    /** Offsets below the log start are gone (retention): they are skipped, never delivered. */
    void skipTo(long logStartOffset) {
        if (logStartOffset > s.startOffset) {
            s.records.headMap(logStartOffset).clear();
            s.startOffset = logStartOffset;
            s.endOffset = Math.max(s.endOffset, logStartOffset);
        }
    }

    /**
     * Ends every lease that ran out {@code grace} ago: the record is available again, or archived once it was
     * delivered {@code maxDeliveryAttempts} times. Returns the records archived.
     */
    List<Archived> expire(long now, long grace, int maxDeliveryAttempts) {
        List<Archived> archived = new ArrayList<>();
        for (Map.Entry<Long, InFlight> e : s.records.entrySet()) {
            InFlight r = e.getValue();
            if (r.status == Status.LEASED && now >= r.leaseUntilMs + grace) {
                Archived a = makeAvailable(e.getKey(), r, now, maxDeliveryAttempts);
                if (a != null) {
                    archived.add(a);
                }
            }
        }
        advanceStart();
        return archived;
    }

    /**
     * Leases up to {@code max} records: available ones in the window first (lowest offset first), then new ones from
     * the end of the window up to {@code highWatermark}, never beyond {@code startOffset + maxInFlight}. Call
     * {@link #expire} first.
     */
    List<Granted> lease(long now, int max, long leaseMs, long highWatermark, int maxInFlight) {
        List<Granted> out = new ArrayList<>();
        for (Map.Entry<Long, InFlight> e : s.records.entrySet()) {
            if (out.size() >= max) {
                return out;
            }
            InFlight r = e.getValue();
            if (r.status == Status.AVAILABLE && now >= r.availableAtMs) {
                out.add(grant(e.getKey(), r, now, leaseMs));
            }
        }
        while (out.size() < max && s.endOffset < highWatermark && s.endOffset < s.startOffset + maxInFlight) {
            InFlight r = new InFlight();
            s.records.put(s.endOffset, r);
            out.add(grant(s.endOffset, r, now, leaseMs));
            s.endOffset++;
        }
        return out;
    }

    /**
     * Applies one acknowledgement of the lease (offset, deliveryCount). Refused ({@code ok = false}, nothing changed)
     * unless the record is still leased under that lease and the lease has not run out by {@code now}.
     */
    AckOutcome ack(long now, long offset, int deliveryCount, AckType type, ShareGroupConfig config) {
        InFlight r = s.records.get(offset);
        if (r == null || r.status != Status.LEASED || r.deliveryCount != deliveryCount || now >= r.leaseUntilMs) {
            return AckOutcome.EXPIRED;
        }
        Archived archived = apply(now, offset, r, type, config);
        advanceStart();
        return new AckOutcome(true, archived);
    }

    /** One leased record's change by an ack; returns it when archived. */
    private Archived apply(long now, long offset, InFlight r, AckType type, ShareGroupConfig config) {
        Archived archived = null;
        switch (type) {
            case ACCEPT -> r.status = Status.ACCEPTED;
            case RENEW -> r.leaseUntilMs = now + r.leaseMs;
            case RELEASE -> archived = makeAvailable(offset, r, now + config.redeliveryDelayMs(),
                    config.maxDeliveryAttempts());
            case REJECT -> {
                r.status = Status.ARCHIVED;
                archived = new Archived(offset, REJECTED, r.deliveryCount);
            }
        }
        s.markChanged(offset);
        return archived;
    }

    /**
     * When (epoch ms) a record not leasable at {@code now} becomes leasable with no request: the earliest end of a
     * lease plus {@code grace}, or end of a redelivery delay; {@link Long#MAX_VALUE} when none.
     */
    long nextLeasableAtMs(long now, long grace) {
        long next = Long.MAX_VALUE;
        for (InFlight r : s.records.values()) {
            if (r.status == Status.LEASED) {
                next = Math.min(next, r.leaseUntilMs + grace);
            } else if (r.status == Status.AVAILABLE && r.availableAtMs > now) {
                next = Math.min(next, r.availableAtMs);
            }
        }
        return next;
    }

    int available(long now) {
        return (int) s.records.values().stream().filter(r -> r.status == Status.AVAILABLE).count();
    }

    int leased() {
        return (int) s.records.values().stream().filter(r -> r.status == Status.LEASED).count();
    }

    /** Records at or above the start offset not yet accepted or archived. */
    long lag(long highWatermark) {
        long done = s.records.values().stream().filter(InFlight::done).count();
        return Math.max(0, Math.max(highWatermark, s.endOffset) - s.startOffset - done);
    }

    private Granted grant(long offset, InFlight r, long now, long leaseMs) {
        r.status = Status.LEASED;
        r.deliveryCount++;
        r.leaseMs = leaseMs;
        r.leaseUntilMs = now + leaseMs;
        s.markChanged(offset);
        return new Granted(offset, r.deliveryCount, r.leaseUntilMs);
    }

    private Archived makeAvailable(long offset, InFlight r, long availableAt, int maxDeliveryAttempts) {
        s.markChanged(offset);
        if (r.deliveryCount >= maxDeliveryAttempts) {
            r.status = Status.ARCHIVED;
            return new Archived(offset, MAX_DELIVERY_ATTEMPTS, r.deliveryCount);
        }
        r.status = Status.AVAILABLE;
        r.availableAtMs = availableAt;
        r.leaseUntilMs = 0;
        return null;
    }

    private void advanceStart() {
        while (!s.records.isEmpty() && s.records.firstEntry().getValue().done()) {
            s.startOffset = s.records.pollFirstEntry().getKey() + 1;
        }
        if (s.records.isEmpty()) {
            s.startOffset = s.endOffset;
        }
    }
}
