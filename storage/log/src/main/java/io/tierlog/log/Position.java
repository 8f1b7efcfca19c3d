package io.tierlog.log;

/**
 * A place in a partition's hot segments: the batch holding {@code offset} (or the first batch after it) begins
 * at byte {@code position} of segment {@code segmentBase}. The index serves these as read hints.
 */
public record Position(long offset, long segmentBase, long position) {
}
