package io.tierlog.tiering;

/** The first record at or after a timestamp: its offset and its own timestamp. */
public record OffsetAndTimestamp(long offset, long timestamp) {
}
