package io.tierlog.service.read;

import io.tierlog.log.BatchRead;

/** Whole batches of one fetch, as stored, and the partition's extent when the fetch was served. */
public record BatchFetch(BatchRead batches, long highWatermark, long logStartOffset) {
    public long nextOffset() {
        return batches.nextOffset();
    }
}
