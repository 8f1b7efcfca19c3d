package io.tierlog.objectstore;

/**
 * A contiguous run of bytes in an object: {@code [offset, offset + length)}.
 *
 * <p>Never empty: a zero-length read is a caller bug, and S3 cannot express it as an HTTP Range either.
 *
 * @param offset the first byte, {@code >= 0}
 * @param length how many bytes, {@code > 0}
 */
public record ByteRange(long offset, long length) {

    public ByteRange {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: " + offset);
        }
        if (length <= 0) {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        if (offset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("range overflows: offset " + offset + ", length " + length);
        }
    }

    /** The range {@code [offset, offset + length)}. */
    public static ByteRange of(long offset, long length) {
        return new ByteRange(offset, length);
    }

    /** The range {@code [start, endExclusive)}. */
    public static ByteRange between(long start, long endExclusive) {
        return new ByteRange(start, endExclusive - start);
    }

    /** The first byte after the range (exclusive end). */
    public long end() {
        return offset + length;
    }

    /** The last byte in the range (inclusive), as HTTP's {@code Range: bytes=first-last} wants it. */
    public long lastInclusive() {
        return offset + length - 1;
    }

    /** The HTTP Range header value for this range. */
    public String toHttpRange() {
        return "bytes=" + offset + "-" + lastInclusive();
    }

    @Override
    public String toString() {
        return "[" + offset + ", " + end() + ")";
    }
}
