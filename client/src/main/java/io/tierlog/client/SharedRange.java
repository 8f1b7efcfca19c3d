package io.tierlog.client;

/**
 * A run of records leased in one {@link ShareConsumer#leaseBatch} call under one range lease (docs/api.md, "Share
 * groups"): offsets {@code firstOffset} to {@code lastOffset} of {@code partition}, consecutive, one delivery count.
 * One acknowledgement of the range covers all of its records, or none of them.
 */
public record SharedRange(String lease, int partition, long firstOffset, long lastOffset, int deliveryCount) {
    /** The number of records in the run. */
    public long records() {
        return lastOffset - firstOffset + 1;
    }

    /** True if the run holds {@code record} (same partition, offset inside, same delivery). */
    public boolean holds(SharedRecord record) {
        return record.partition() == partition && record.offset() >= firstOffset && record.offset() <= lastOffset
                && record.deliveryCount() == deliveryCount;
    }
}
