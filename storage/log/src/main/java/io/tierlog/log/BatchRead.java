package io.tierlog.log;

import java.nio.ByteBuffer;

/**
 * Whole record batches read from a partition, as stored: Kafka RecordBatch v2 bytes back to back, each of which
 * passed its CRC32C check on the way out. The first batch may begin below the offset asked for (a batch is never
 * cut), so a reader skips records below it, as a Kafka consumer does. {@code nextOffset} is the offset after the
 * last batch (the requested offset when nothing was read); {@code records} counts only the records at or above the
 * requested offset.
 *
 * <p>The bytes live in {@link ReadMemory} that the reader chose; {@link #close} gives it back, so the holder closes
 * a read once its bytes are sent or copied. Built by {@link BatchCollector}.
 */
public final class BatchRead implements AutoCloseable {
    private final ReadBuffer memory;
    private final int length;
    private final long nextOffset;
    private final int records;

    BatchRead(ReadBuffer memory, int length, long nextOffset, int records) {
        this.memory = memory;
        this.length = length;
        this.nextOffset = nextOffset;
        this.records = records;
    }

    /** Nothing read: no memory held. */
    public static BatchRead empty(long offset) {
        return new BatchRead(null, 0, offset, 0);
    }

    public boolean isEmpty() {
        return length == 0;
    }

    /** Bytes of the batches. */
    public int length() {
        return length;
    }

    public long nextOffset() {
        return nextOffset;
    }

    /** Records at or above the offset asked for. */
    public int records() {
        return records;
    }

    /** The batches as a read-only buffer over the read's memory; valid until {@link #close}. */
    public ByteBuffer buffer() {
        return memory == null ? ByteBuffer.allocate(0) : memory.memory().slice(0, length).asReadOnlyBuffer();
    }

    /** Gives the memory back; the buffers handed out before must not be used after. */
    @Override
    public void close() {
        if (memory != null) {
            memory.close();
        }
    }
}
