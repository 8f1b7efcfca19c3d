package io.tierlog.tiering;

import io.tierlog.objectstore.ObjectKey;

import java.util.Objects;

/**
 * One committed cold segment, as a manifest lists it: the offsets {@code [baseOffset, lastOffset]} it holds, its
 * size, the largest record timestamp in it (its age for retention, Kafka's rule) and the first batch's max
 * timestamp, the keys of its bytes and its sidecar, the CRC32C of the whole segment object and when it was
 * committed. Immutable.
 */
public record ColdSegment(long baseOffset, long lastOffset, long sizeBytes, long firstTimestamp, long maxTimestamp,
                          ObjectKey segmentKey, ObjectKey indexKey, int crc32c, long committedAtMs) {
    public ColdSegment {
        Objects.requireNonNull(segmentKey, "segmentKey");
        Objects.requireNonNull(indexKey, "indexKey");
        if (baseOffset < 0 || lastOffset < baseOffset) {
            throw new IllegalArgumentException("bad offsets [" + baseOffset + ", " + lastOffset + "]");
        }
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("sizeBytes must be > 0: " + sizeBytes);
        }
    }

    /** The offset after the last record. */
    public long nextOffset() {
        return lastOffset + 1;
    }

    public boolean contains(long offset) {
        return offset >= baseOffset && offset <= lastOffset;
    }
}
