package io.tierlog.log;

/** The offsets {@code first} to {@code last} of a partition, both included. */
public record OffsetRange(long first, long last) {
    public OffsetRange {
        if (last < first) {
            throw new IllegalArgumentException("offset range ends (" + last + ") before it starts (" + first + ")");
        }
    }

    public boolean contains(long offset) {
        return first <= offset && offset <= last;
    }
}
