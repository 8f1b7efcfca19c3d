package io.tierlog.log;

/**
 * The offsets one batch received: {@code baseOffset..lastOffset}, dense, in record order. {@code duplicate}
 * is true when the batch was a producer retry and nothing new was appended (the offsets are the original ones).
 * {@code logAppendTimeMs} is the time the batch was stamped with on a {@code LogAppendTime} topic, else
 * {@link #NO_TIMESTAMP} (as for a duplicate, whose original time is not kept).
 */
public record AppendResult(long baseOffset, long lastOffset, boolean duplicate, long logAppendTimeMs) {
    public static final long NO_TIMESTAMP = -1;

    public AppendResult(long baseOffset, long lastOffset, boolean duplicate) {
        this(baseOffset, lastOffset, duplicate, NO_TIMESTAMP);
    }
}
