package io.tierlog.ingest;

import java.util.List;

/**
 * The answer to a produce request: one offset per record, in request order. {@code duplicate} is true when the
 * request was a producer retry and nothing was appended.
 */
public record ProduceResult(List<PartitionOffset> offsets, boolean duplicate) {
    public ProduceResult {
        offsets = List.copyOf(offsets);
    }
}
