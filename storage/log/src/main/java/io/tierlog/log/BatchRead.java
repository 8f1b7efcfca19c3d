package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Whole record batches read from a partition, as stored: Kafka RecordBatch v2 bytes back to back, each of which
 * passed its CRC32C check on the way out. The first batch may begin below the offset asked for (a batch is never
 * cut), so a reader skips records below it, as a Kafka consumer does. {@code nextOffset} is the offset after the
 * last batch (the requested offset when nothing was read); {@code records} counts only the records at or above the
 * requested offset.
 */
public record BatchRead(byte[] bytes, int length, long nextOffset, int records) {
    public static BatchRead empty(long offset) {
        return new BatchRead(new byte[0], 0, offset, 0);
    }

    public boolean isEmpty() {
        return length == 0;
    }

    /** The batches as a read-only buffer. */
    public ByteBuffer buffer() {
        return ByteBuffer.wrap(bytes, 0, length).asReadOnlyBuffer();
    }

    /**
     * Collects validated batches from {@code fromOffset} until {@code maxRecords} records or {@code maxBytes} bytes
     * are reached; the first batch is always taken, whatever its size, so a read makes progress. Not thread-safe.
     */
    public static final class Builder {
        private final long fromOffset;
        private final int maxRecords;
        private final int maxBytes;
        private byte[] bytes;
        private int length;
        private int records;
        private long nextOffset;

        public Builder(long fromOffset, int maxRecords, int maxBytes) {
            this.fromOffset = fromOffset;
            this.maxRecords = maxRecords;
            this.maxBytes = maxBytes;
            this.nextOffset = fromOffset;
            this.bytes = new byte[Math.min(Math.max(maxBytes, 1), 64 * 1024)];
        }

        /**
         * Offers one validated batch (its bytes from position to limit; not consumed).
         *
         * @return true while more batches are wanted
         */
        public boolean add(BatchInfo info, ByteBuffer batch) {
            if (info.lastOffset() < fromOffset) {
                return true;
            }
            int size = batch.remaining();
            if (length > 0 && (long) length + size > maxBytes) {
                return false;
            }
            if (length + size > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(length + size, Math.min(bytes.length * 2, maxBytes)));
            }
            batch.duplicate().get(bytes, length, size);
            length += size;
            records += (int) (info.lastOffset() - Math.max(info.baseOffset(), fromOffset) + 1);
            nextOffset = info.nextOffset();
            return records < maxRecords && length < maxBytes;
        }

        public boolean full() {
            return length > 0 && (records >= maxRecords || length >= maxBytes);
        }

        public BatchRead build() {
            return new BatchRead(bytes, length, nextOffset, records);
        }
    }
}
