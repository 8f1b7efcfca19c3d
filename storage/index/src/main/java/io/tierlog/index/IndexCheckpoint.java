package io.tierlog.index;

import io.tierlog.log.Position;

import java.nio.ByteBuffer;

/**
 * Where indexing of one partition stopped, and the indexer state needed to continue exactly as an uninterrupted
 * run would have: bytes of batches since the last offset entry, the running maximum timestamp, and the timestamp
 * of the last time entry written. Stored under the partition's checkpoint key in the same {@code WriteBatch} as
 * the entries it covers, so entries and checkpoint are always consistent.
 *
 * <pre>
 * value (49 bytes, big-endian):
 *   0  1  version = 1
 *   1  8  end.offset        next offset to index
 *   9  8  end.segmentBase   segment holding the next batch boundary
 *  17  8  end.position      byte position of that boundary
 *  25  8  bytesSinceEntry   batch bytes indexed since the last offset entry
 *  33  8  maxTimestamp      running max of batch max timestamps (Long.MIN_VALUE: none yet)
 *  41  8  lastTimeEntry     timestamp of the last time entry (Long.MIN_VALUE: none yet)
 * </pre>
 */
record IndexCheckpoint(Position end, long bytesSinceEntry, long maxTimestamp, long lastTimeEntry) {
    private static final byte VERSION = 1;
    private static final int SIZE = 1 + 6 * Long.BYTES;

    /** The state before the first batch of segment {@code segmentBase}, with nothing indexed. */
    static IndexCheckpoint startOf(long segmentBase) {
        return new IndexCheckpoint(new Position(segmentBase, segmentBase, 0), 0, Long.MIN_VALUE, Long.MIN_VALUE);
    }

    /** This state moved to the start of a later segment (earlier ones were evicted before being indexed). */
    IndexCheckpoint restartAt(long segmentBase) {
        return new IndexCheckpoint(new Position(segmentBase, segmentBase, 0), 0, maxTimestamp, lastTimeEntry);
    }

    byte[] encode() {
        return ByteBuffer.allocate(SIZE).put(VERSION).putLong(end.offset()).putLong(end.segmentBase())
                .putLong(end.position()).putLong(bytesSinceEntry).putLong(maxTimestamp).putLong(lastTimeEntry).array();
    }

    /** Decodes a stored value; null if it is not a checkpoint this code wrote (then the partition is re-indexed). */
    static IndexCheckpoint decode(byte[] value) {
        if (value == null || value.length != SIZE || value[0] != VERSION) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(value, 1, SIZE - 1);
        Position end = new Position(b.getLong(), b.getLong(), b.getLong());
        return new IndexCheckpoint(end, b.getLong(), b.getLong(), b.getLong());
    }
}
