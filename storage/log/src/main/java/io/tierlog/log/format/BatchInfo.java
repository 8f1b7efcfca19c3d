package io.tierlog.log.format;

/**
 * Where one record batch lies and what its header says: segment (by base offset) and byte position of the
 * batch's first byte, its total size in bytes (the 12-byte log overhead included), the offsets it covers, its
 * largest timestamp, its producer fields, and whether it belongs to a transaction ({@code transactional}) or is a
 * transaction marker ({@code control}, Kafka's control batch; always transactional too).
 */
public record BatchInfo(long segmentBase, long position, int sizeInBytes, long baseOffset, long lastOffset,
                        long maxTimestamp, long producerId, short producerEpoch, int baseSequence,
                        boolean transactional, boolean control) {
    /** A batch outside any transaction. */
    public BatchInfo(long segmentBase, long position, int sizeInBytes, long baseOffset, long lastOffset,
                     long maxTimestamp, long producerId, short producerEpoch, int baseSequence) {
        this(segmentBase, position, sizeInBytes, baseOffset, lastOffset, maxTimestamp, producerId, producerEpoch,
                baseSequence, false, false);
    }

    public long nextOffset() {
        return lastOffset + 1;
    }

    public long endPosition() {
        return position + sizeInBytes;
    }

    public int recordCount() {
        return (int) (lastOffset - baseOffset + 1);
    }
}
