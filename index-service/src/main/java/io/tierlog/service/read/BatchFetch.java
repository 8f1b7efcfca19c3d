package io.tierlog.service.read;

import io.tierlog.log.BatchRead;
import io.tierlog.log.BatchSlice;

/**
 * Whole batches of one fetch, as stored, and the partition's extent when the fetch was served: either read into
 * memory ({@code batches}, CRC-checked) or, for a caller that asked for file slices and a hot read, a range of the
 * segment file ({@code slice}, not null; then {@code batches} is empty). {@link #close} gives back whichever it holds.
 */
public record BatchFetch(BatchRead batches, BatchSlice slice, long highWatermark, long logStartOffset)
        implements AutoCloseable {
    public BatchFetch(BatchRead batches, long highWatermark, long logStartOffset) {
        this(batches, null, highWatermark, logStartOffset);
    }

    public long nextOffset() {
        return slice != null ? slice.nextOffset() : batches.nextOffset();
    }

    /** Bytes of the batches. */
    public int length() {
        return slice != null ? slice.length() : batches.length();
    }

    /** Records at or above the offset asked for. */
    public int records() {
        return slice != null ? slice.records() : batches.records();
    }

    public boolean isEmpty() {
        return length() == 0;
    }

    @Override
    public void close() {
        batches.close();
        if (slice != null) {
            slice.close();
        }
    }
}
