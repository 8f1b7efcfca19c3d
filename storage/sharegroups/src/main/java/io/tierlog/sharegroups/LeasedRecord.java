package io.tierlog.sharegroups;

import io.tierlog.log.format.LogRecord;

/**
 * A record handed to one consumer under {@code lease} (opaque, see {@link LeaseId}) until {@code leaseUntilMs}
 * (epoch ms, by the clock of the process that granted it).
 */
public record LeasedRecord(String lease, int partition, int deliveryCount, long leaseUntilMs, LogRecord record) {
}
