package io.tierlog.log;

/**
 * The offsets one batch received: {@code baseOffset..lastOffset}, dense, in record order. {@code duplicate}
 * is true when the batch was a producer retry and nothing new was appended (the offsets are the original ones).
 */
public record AppendResult(long baseOffset, long lastOffset, boolean duplicate) {
}
