package io.tierlog.sharegroups;

import io.tierlog.log.TopicPartition;

import java.util.List;

/**
 * The records one lease call granted from one share-partition, durable before this exists: offsets in ascending
 * order, each with its delivery count, lease end and lease string. Kept as arrays so that a writer rendering the
 * answer (the service renders straight from stored batches) walks them beside the batches without an object per
 * record. Immutable; thread-safe.
 */
public final class LeaseGrants {
    private final String group;
    private final TopicPartition tp;
    private final long incarnation;
    private final long[] offsets;
    private final int[] deliveryCounts;
    private final long[] leaseUntilMs;
    private final byte[] leasePrefix;
    private final byte[] rangePrefix;
    private final byte[] incarnationDecimal;

    LeaseGrants(String group, TopicPartition tp, long incarnation, List<SharePartition.Granted> granted) {
        this.group = group;
        this.tp = tp;
        this.incarnation = incarnation;
        this.leasePrefix = LeaseId.prefix(group, tp.topic(), tp.partition());
        this.rangePrefix = LeaseId.rangePrefix(group, tp.topic(), tp.partition());
        this.incarnationDecimal = LeaseId.decimal(incarnation);
        int n = granted.size();
        offsets = new long[n];
        deliveryCounts = new int[n];
        leaseUntilMs = new long[n];
        for (int i = 0; i < n; i++) {
            SharePartition.Granted g = granted.get(i);
            offsets[i] = g.offset();
            deliveryCounts[i] = g.deliveryCount();
            leaseUntilMs[i] = g.leaseUntilMs();
            if (i > 0 && offsets[i] <= offsets[i - 1]) {
                throw new IllegalStateException("grants out of order: " + offsets[i - 1] + ", " + offsets[i]);
            }
        }
    }

    public TopicPartition tp() {
        return tp;
    }

    public int size() {
        return offsets.length;
    }

    public long offset(int i) {
        return offsets[i];
    }

    public int deliveryCount(int i) {
        return deliveryCounts[i];
    }

    public long leaseUntilMs(int i) {
        return leaseUntilMs[i];
    }

    public long firstOffset() {
        return offsets[0];
    }

    public long lastOffset() {
        return offsets[offsets.length - 1];
    }

    /** The opaque lease string of the {@code i}-th grant ({@link LeaseId}): URL-safe base64, no escaping needed. */
    public String lease(int i) {
        return new String(leaseAscii(i), java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** {@link #lease(int)} as its ASCII bytes, for a writer that renders bytes. */
    public byte[] leaseAscii(int i) {
        return LeaseId.encode(leasePrefix, offsets[i], incarnationDecimal, deliveryCounts[i]);
    }

    /**
     * The last grant index of the run (ADR 0042) that starts at grant {@code from}: grants in {@code include} (those
     * delivered) with consecutive offsets and one delivery count. {@code from} must be in {@code include}.
     */
    public int runEnd(int from, java.util.BitSet include) {
        int j = from;
        while (j + 1 < offsets.length && include.get(j + 1) && offsets[j + 1] == offsets[j] + 1
                && deliveryCounts[j + 1] == deliveryCounts[from]) {
            j++;
        }
        return j;
    }

    /**
     * The range lease string ({@link RangeLease}) of grants {@code from..to} (inclusive) as ASCII bytes; they must be
     * one run ({@link #runEnd}).
     */
    public byte[] rangeLeaseAscii(int from, int to) {
        return LeaseId.encodeRange(rangePrefix, offsets[from], offsets[to], incarnationDecimal, deliveryCounts[from]);
    }

    long incarnation() {
        return incarnation;
    }
}
