package io.tierlog.service.read;

/**
 * A fetch as a read_committed reader sees it ({@link PartitionReads#fetchCommitted}) and the partition's last stable
 * offset when it was served: the fetch ends there, and below the high watermark it is what holds the reader back.
 */
public record CommittedFetch(BatchFetch fetch, long lastStableOffset) {
    /** Whether an open transaction held the fetch back: nothing to read at the last stable offset, more above it. */
    public boolean heldBack() {
        return lastStableOffset < fetch.highWatermark();
    }
}
