package io.tierlog.log;

import io.tierlog.log.format.RecordBatchCodec;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

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

    /**
     * This read without its batches at or above {@code offset} (a read_committed fetch stops at the last stable
     * offset, which is always a batch's base offset): the same memory, now owned by the result, so close that one
     * instead of this. Records cut are counted off whole, as they lie above any offset the read was asked for.
     */
    public BatchRead truncatedBefore(long offset) {
        if (offset >= nextOffset || memory == null) {
            return this;
        }
        ByteBuffer b = memory.memory();
        int position = 0;
        int cutRecords = 0;
        int end = -1;
        while (position < length) {
            long base = b.getLong(position);
            long last = base + b.getInt(position + RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
            int size = RecordBatchCodec.LOG_OVERHEAD + b.getInt(position + RecordBatchCodec.LENGTH_OFFSET);
            if (base >= offset && end < 0) {
                end = position;
            }
            if (end >= 0) {
                cutRecords += (int) (last - base + 1);
            }
            position += size;
        }
        if (end < 0) {
            return this;
        }
        return new BatchRead(memory, end, offset, Math.max(0, records - cutRecords));
    }

    /**
     * This read as a read_committed reader sees it: without the data batches of the {@code aborted} transactions (a
     * transactional batch whose producer has an aborted transaction spanning its base offset, as Kafka's consumer
     * drops them). The kept batches move to the front of the same memory, now owned by the result, so close that one
     * instead of this. {@code nextOffset} is unchanged: the dropped batches were read past. Markers stay, as in every
     * read (a reader of batches skips control batches).
     *
     * @param requestedOffset the offset the read was asked for: records below it were never counted
     */
    public BatchRead withoutAborted(List<PartitionTransactions.AbortedTransaction> aborted, long requestedOffset) {
        if (aborted.isEmpty() || memory == null) {
            return this;
        }
        ByteBuffer b = memory.memory();
        int read = 0;
        int kept = 0;
        int droppedRecords = 0;
        while (read < length) {
            int size = RecordBatchCodec.LOG_OVERHEAD + b.getInt(read + RecordBatchCodec.LENGTH_OFFSET);
            long base = b.getLong(read);
            if (isAborted(b, read, base, aborted)) {
                long last = base + b.getInt(read + RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
                droppedRecords += (int) Math.max(0, last - Math.max(base, requestedOffset) + 1);
            } else {
                if (kept != read) {
                    b.put(kept, b, read, size);    // overlapping moves are defined for one buffer (Java 16+)
                }
                kept += size;
            }
            read += size;
        }
        return kept == length ? this : new BatchRead(memory, kept, nextOffset, Math.max(0, records - droppedRecords));
    }

    /**
     * The offsets of this read's data batches of the {@code aborted} transactions (those {@link #withoutAborted}
     * leaves out), ascending: what a read_committed reader never sees.
     */
    public List<OffsetRange> abortedBatches(List<PartitionTransactions.AbortedTransaction> aborted) {
        List<OffsetRange> out = new ArrayList<>();
        if (aborted.isEmpty() || memory == null) {
            return out;
        }
        ByteBuffer b = memory.memory();
        int at = 0;
        while (at < length) {
            long base = b.getLong(at);
            if (isAborted(b, at, base, aborted)) {
                out.add(new OffsetRange(base, base + b.getInt(at + RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET)));
            }
            at += RecordBatchCodec.LOG_OVERHEAD + b.getInt(at + RecordBatchCodec.LENGTH_OFFSET);
        }
        return out;
    }

    private static boolean isAborted(ByteBuffer b, int at, long base,
                                     List<PartitionTransactions.AbortedTransaction> aborted) {
        short attributes = b.getShort(at + RecordBatchCodec.ATTRIBUTES_OFFSET);
        if ((attributes & RecordBatchCodec.TRANSACTIONAL_FLAG) == 0 || (attributes & RecordBatchCodec.CONTROL_FLAG) != 0) {
            return false;
        }
        long producerId = b.getLong(at + RecordBatchCodec.PRODUCER_ID_OFFSET);
        for (PartitionTransactions.AbortedTransaction t : aborted) {
            if (t.producerId() == producerId && t.firstOffset() <= base && base <= t.lastOffset()) {
                return true;
            }
        }
        return false;
    }

    /** Gives the memory back; the buffers handed out before must not be used after. */
    @Override
    public void close() {
        if (memory != null) {
            memory.close();
        }
    }
}
