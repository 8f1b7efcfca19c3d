package io.tierlog.log;

import io.tierlog.log.internal.io.GroupSync;

import java.nio.channels.FileChannel;

/**
 * A writer's belief about the end of its partition's log: the newest segment, open for writing, the byte position
 * and offset after its last batch, and the segment's group commit. {@link LogRecovery} verifies and advances it
 * against the disk under the partition lock; {@link PartitionWriter} appends at it. Guarded by the writer's mutex.
 */
final class WriterTail {
    final long segmentBase;
    final FileChannel channel;
    /** Group commit of this segment's appends under {@code fsync=always}. */
    final GroupSync sync;
    long position;
    long nextOffset;
    long segmentCreatedMs;

    WriterTail(long segmentBase, FileChannel channel, GroupSync sync, long position, long nextOffset,
               long segmentCreatedMs) {
        this.segmentBase = segmentBase;
        this.channel = channel;
        this.sync = sync;
        this.position = position;
        this.nextOffset = nextOffset;
        this.segmentCreatedMs = segmentCreatedMs;
    }
}
