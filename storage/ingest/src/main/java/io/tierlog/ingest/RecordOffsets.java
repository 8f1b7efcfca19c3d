package io.tierlog.ingest;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * The offsets of a produce request's records, in request order, as two arrays rather than an object per record: a
 * 1000-record JSON produce built a thousand {@link PartitionOffset}s, a list and its copy, only to render them into
 * the answer. Immutable once built (the arrays are owned by it); {@link #get} builds an element on demand.
 */
final class RecordOffsets extends AbstractList<PartitionOffset> implements RandomAccess {
    private final int[] partitions;
    private final long[] offsets;

    /** Takes ownership of both arrays, of equal length: record {@code i} landed at {@code offsets[i]} of {@code partitions[i]}. */
    RecordOffsets(int[] partitions, long[] offsets) {
        if (partitions.length != offsets.length) {
            throw new IllegalArgumentException(partitions.length + " partitions for " + offsets.length + " offsets");
        }
        this.partitions = partitions;
        this.offsets = offsets;
    }

    int partition(int i) {
        return partitions[i];
    }

    long offset(int i) {
        return offsets[i];
    }

    @Override
    public PartitionOffset get(int i) {
        return new PartitionOffset(partitions[i], offsets[i]);
    }

    @Override
    public int size() {
        return partitions.length;
    }
}
