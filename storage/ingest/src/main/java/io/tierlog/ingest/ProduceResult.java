package io.tierlog.ingest;

import java.util.List;

/**
 * The answer to a produce request: one offset per record, in request order. {@code duplicate} is true when the
 * request was a producer retry and nothing was appended. Immutable. {@link #partitionAt} and {@link #offsetAt} read
 * one record's place without building a {@link PartitionOffset}.
 */
public record ProduceResult(List<PartitionOffset> offsets, boolean duplicate) {
    public ProduceResult {
        offsets = offsets instanceof RecordOffsets ? offsets : List.copyOf(offsets);
    }

    /** The number of records produced. */
    public int recordCount() {
        return offsets.size();
    }

    /** The partition record {@code i} (request order) landed in. */
    public int partitionAt(int i) {
        return offsets instanceof RecordOffsets r ? r.partition(i) : offsets.get(i).partition();
    }

    /** The offset of record {@code i} (request order) in its partition. */
    public long offsetAt(int i) {
        return offsets instanceof RecordOffsets r ? r.offset(i) : offsets.get(i).offset();
    }
}
