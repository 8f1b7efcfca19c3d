package io.tierlog.transactions;

/** An offset a transaction commits for a group's partition when (and only if) it commits: TxnOffsetCommit's fields. */
public record PendingOffset(long offset, String metadata, int leaderEpoch) {
    public PendingOffset {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: " + offset);
        }
        metadata = metadata == null ? "" : metadata;
    }
}
