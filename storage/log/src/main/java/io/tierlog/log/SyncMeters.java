package io.tierlog.log;

import java.util.function.LongConsumer;

/**
 * Where a {@link PartitionWriter} reports the cost of durability, in nanoseconds: {@code forceNanos} gets the
 * duration of each fsync of a segment's data, {@code durableWaitNanos} how long each append under
 * {@code fsync=always} waited, after its write, for the fsync that covers it (the rest of a force already running,
 * whose start preceded the write, plus a force of its own or another appender's: see
 * {@link io.tierlog.log.internal.io.GroupSync}). A produce request's latency is mostly this wait when the disk is slow, and
 * an operator can only tell that from the two numbers side by side. Called on the appending threads; must be cheap
 * and thread-safe.
 */
public record SyncMeters(LongConsumer forceNanos, LongConsumer durableWaitNanos) {
    /** Reports nowhere. */
    public static final SyncMeters NONE = new SyncMeters(nanos -> { }, nanos -> { });
}
