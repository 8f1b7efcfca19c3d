package io.tierlog.log.internal.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A cursor window that reads the file in chunks of up to {@code chunkSize} into one reused heap buffer, dropping
 * what lies before the position on each refill. For walks whose batches are looked at and let go (recovery, end
 * scans, record decoding, tiering checks). Not thread-safe.
 */
final class ChunkWindow implements SegmentCursor.Window {
    private final int chunkSize;
    private ByteBuffer chunk;
    private long chunkStart;

    ChunkWindow(int chunkSize) {
        this.chunkSize = chunkSize;
    }

    @Override
    public void startAt(long position) {
        // The chunk is allocated on first read: a writer's cursor at the end of the log (every append) reads nothing,
        // and zeroing a 256 KiB buffer per append cost more than appending a small batch.
        chunkStart = position;
        if (chunk != null) {
            chunk.limit(0);
        }
    }

    @Override
    public ByteBuffer view(FileChannel channel, long fileSize, long position, int n) throws IOException {
        if (chunk == null || position < chunkStart || position + n > chunkStart + chunk.limit()) {
            // A chunk of up to chunkSize, but no larger than what the file holds from here (a short tail needs no
            // 256 KiB buffer), and always large enough for the n bytes asked for (one batch may exceed chunkSize).
            long capacity = Math.max(n, Math.min(chunkSize, fileSize - position));
            if (chunk == null || chunk.capacity() < capacity) {
                chunk = ByteBuffer.allocate((int) capacity);
            }
            chunk.clear();
            chunkStart = position;
            chunk.limit((int) Math.min(chunk.capacity(), fileSize - position));
            while (chunk.hasRemaining()) {
                if (channel.read(chunk, chunkStart + chunk.position()) < 0) {
                    break;
                }
            }
            chunk.flip();
            if (chunk.limit() < n) {
                throw new IOException("file shrank while reading at " + position);
            }
        }
        int at = (int) (position - chunkStart);
        return chunk.duplicate().position(at).limit(at + n).slice();
    }
}
