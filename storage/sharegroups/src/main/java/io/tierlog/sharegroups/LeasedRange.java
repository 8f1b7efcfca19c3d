package io.tierlog.sharegroups;

/**
 * A run of leased records named by one range lease ({@link RangeLease}, ADR 0042): offsets {@code firstOffset} to
 * {@code lastOffset} of {@code partition}, consecutive, granted in one lease call with one delivery count.
 */
public record LeasedRange(String lease, int partition, long firstOffset, long lastOffset, int deliveryCount) {
}
