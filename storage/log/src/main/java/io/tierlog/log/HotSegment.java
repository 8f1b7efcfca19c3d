package io.tierlog.log;

/**
 * One hot segment of a partition as listed: its base offset (the offset of its first batch) and its size in bytes.
 * The newest segment of a partition is the active one, still growing; every older one is sealed.
 */
public record HotSegment(long baseOffset, long bytes) {
}
