package io.tierlog.sharegroups;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * What a range lease string names (ADR 0042): a run of consecutive offsets {@code [firstOffset, lastOffset]} of one
 * share-partition, granted in one lease call with one delivery count, under the partition's incarnation. Every offset
 * of the run was granted to the same caller (a run never spans a record leased to someone else), so one string stands
 * for all of them in an ack. Encoded as URL-safe base64 of
 * {@code v2|group|topic|partition|firstOffset|lastOffset|incarnation|deliveryCount}. Internally a per-record
 * ({@code v1}, {@link LeaseId}) lease is read as the run of its one offset, with {@code ranged} false.
 */
public record RangeLease(String group, String topic, int partition, long firstOffset, long lastOffset,
                         long incarnation, int deliveryCount, boolean ranged) {
    static final String VERSION = "v2";

    /** A range lease ({@code ranged} true). */
    public RangeLease(String group, String topic, int partition, long firstOffset, long lastOffset, long incarnation,
                      int deliveryCount) {
        this(group, topic, partition, firstOffset, lastOffset, incarnation, deliveryCount, true);
    }

    public String encode() {
        return new String(LeaseId.encodeRange(LeaseId.rangePrefix(group, topic, partition), firstOffset, lastOffset,
                LeaseId.decimal(incarnation), deliveryCount), StandardCharsets.US_ASCII);
    }

    /** The range lease a string names, or empty when it is not a range ({@code v2}) lease this service handed out. */
    public static Optional<RangeLease> decode(String lease) {
        return LeaseId.parse(lease, true);
    }
}
