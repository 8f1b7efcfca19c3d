package io.tierlog.sharegroups;

import io.tierlog.log.format.LogRecord;

/** A record handed to one consumer under {@code lease} (opaque, see {@link LeaseId}). */
public record LeasedRecord(String lease, int partition, int deliveryCount, LogRecord record) {
}
