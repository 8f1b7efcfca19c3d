package io.tierlog.service.read;

import io.tierlog.log.BatchRead;
import io.tierlog.log.BatchSlice;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;

import java.util.List;

/**
 * Whole batches of one fetch, as stored, and the partition's extent when the fetch was served: either read into
 * memory ({@code batches}, CRC-checked) or, for a caller that asked for file slices and a hot read, a range of the
 * segment file ({@code slice}, not null; then {@code batches} is empty). {@code cold} says the cold tier served it
 * (its aborted transactions are in the cold segments' sidecars, see {@link PartitionReads#abortedTransactions}).
 * {@link #close} gives back whichever it holds.
 */
public record BatchFetch(BatchRead batches, BatchSlice slice, long highWatermark, long logStartOffset, boolean cold)
        implements AutoCloseable {
    public BatchFetch(BatchRead batches, BatchSlice slice, long highWatermark, long logStartOffset) {
        this(batches, slice, highWatermark, logStartOffset, false);
    }

    public BatchFetch(BatchRead batches, long highWatermark, long logStartOffset) {
        this(batches, null, highWatermark, logStartOffset);
    }

    public long nextOffset() {
        return slice != null ? slice.nextOffset() : batches.nextOffset();
    }

    /** Bytes of the whole batches. */
    public int length() {
        return slice != null ? slice.length() : batches.length();
    }

    /** Bytes an answer carries: the whole batches and, from a file range, the part of a batch after them. */
    public int sentLength() {
        return slice != null ? slice.sentLength() : batches.length();
    }

    /** Records at or above the offset asked for. */
    public int records() {
        return slice != null ? slice.records() : batches.records();
    }

    public boolean isEmpty() {
        return length() == 0;
    }

    /**
     * This fetch without its batches at or above {@code offset} (a read_committed fetch ends at the last stable
     * offset), and without the part of a batch after a file range unless that batch lies below {@code offset}: the
     * result owns what this held, so close it instead of this.
     */
    public BatchFetch truncatedBefore(long offset) {
        if (offset > nextOffset() || offset == nextOffset() && sentLength() == length()) {
            return this;
        }
        try {
            return new BatchFetch(batches.truncatedBefore(offset), slice == null ? null : slice.truncatedBefore(offset),
                    highWatermark, logStartOffset, cold);
        } catch (java.io.IOException e) {
            close();
            throw new java.io.UncheckedIOException("reading batch headers to cut a fetch at offset " + offset, e);
        }
    }

    /**
     * This fetch without the data batches of the {@code aborted} transactions ({@link BatchRead#withoutAborted}); a
     * fetch read into memory only. The result owns what this held, so close it instead of this.
     */
    public BatchFetch withoutAborted(List<AbortedTransaction> aborted, long requestedOffset) {
        if (slice != null) {
            throw new IllegalStateException("aborted batches are left out of reads into memory, not file slices");
        }
        BatchRead kept = batches.withoutAborted(aborted, requestedOffset);
        return kept == batches ? this : new BatchFetch(kept, null, highWatermark, logStartOffset, cold);
    }

    @Override
    public void close() {
        batches.close();
        if (slice != null) {
            slice.close();
        }
    }
}
