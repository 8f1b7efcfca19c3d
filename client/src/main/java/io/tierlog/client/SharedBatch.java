package io.tierlog.client;

import java.util.List;

/**
 * What one {@link ShareConsumer#leaseBatch} call leased: the records, and the same records as runs under range leases
 * ({@link SharedRange}), for acknowledging the whole batch with one entry per run
 * ({@link ShareConsumer#acknowledgeAll}). Immutable.
 */
public record SharedBatch(List<SharedRecord> records, List<SharedRange> ranges) {
    public SharedBatch {
        records = List.copyOf(records);
        ranges = List.copyOf(ranges);
    }

    public boolean isEmpty() {
        return records.isEmpty();
    }
}
