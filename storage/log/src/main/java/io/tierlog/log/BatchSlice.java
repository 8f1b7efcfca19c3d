package io.tierlog.log;

import io.tierlog.log.format.RecordBatchCodec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Whole record batches of one hot segment as a range of its file, not read: {@code length} bytes from
 * {@code position} of the open {@link #channel()}, for a server that sends them with {@code sendfile} (the Kafka
 * listener). Same contract as {@link BatchRead} for offsets and counts: the first batch may begin below the offset
 * asked for, {@code nextOffset} is the offset after the last batch, {@code records} counts the records at or above
 * the offset asked for. Unlike {@link BatchRead}, the bytes were not CRC-checked on the way out: their boundaries
 * come from the batch headers (or from the indexer's {@link BatchPositions}, checked against the first and last
 * header), the range ends at or before the visible end the index checked (see {@link PartitionReader#sliceBatches}),
 * and the CRC check is the receiver's, as with Kafka's own broker. A range cut by its byte limit is sent with the
 * next batch's first bytes up to that limit ({@link #sentLength()}), as Kafka's broker sends it.
 *
 * <p>The channel was opened before the range was found and is this slice's own: the range stays readable after the
 * segment file is deleted, rolled or replaced (the open channel keeps the inode), until {@link #close}. Close it
 * once the bytes are sent or will not be; closing twice is harmless. Not thread-safe.
 */
public final class BatchSlice implements AutoCloseable {
    private final FileChannel channel;
    private final long segmentBase;
    private final long position;
    private final int length;
    private final long nextOffset;
    private final int records;
    private final int partialBatch;

    BatchSlice(FileChannel channel, long segmentBase, long position, int length, long nextOffset, int records,
               int partialBatch) {
        this.channel = channel;
        this.segmentBase = segmentBase;
        this.position = position;
        this.length = length;
        this.nextOffset = nextOffset;
        this.records = records;
        this.partialBatch = partialBatch;
    }

    /** The open segment file the batches are in; closed by {@link #close}. */
    public FileChannel channel() {
        return channel;
    }

    /** Where the first batch begins in the file. */
    public long position() {
        return position;
    }

    /** Bytes of the whole batches, from {@link #position()}. */
    public int length() {
        return length;
    }

    /**
     * Bytes to send from {@link #position()}: the whole batches and, when the range stopped at its byte limit with
     * the next batch visible but too large, that batch's first bytes up to the limit, as Kafka's broker sends a
     * fetch's limit's worth of the log (ADR 0076). A receiver drops a batch it does not hold whole, and the part is
     * always shorter than its batch, so no record of it is ever read from this range.
     */
    public int sentLength() {
        return length + partialBatch;
    }

    public long nextOffset() {
        return nextOffset;
    }

    /** Records at or above the offset asked for. */
    public int records() {
        return records;
    }

    /**
     * Where the batch after this range would begin ({@link #nextOffset()}, right after the range in the same
     * segment): a read hint for the fetch that goes on from there, which {@link PartitionReader#sliceBatches} checks
     * against the header it finds (a segment compacted since has other positions).
     */
    public Position end() {
        return new Position(nextOffset, segmentBase, position + length);
    }

    /**
     * This range without its batches at or above {@code offset} (a read_committed fetch stops at the last stable
     * offset, a batch's base offset), found from the batch headers in the file: the same open channel, now owned by
     * the result, so close that one instead of this. Records cut are counted off whole; the part of a batch after
     * the range is kept only while its batch lies wholly below {@code offset}.
     */
    public BatchSlice truncatedBefore(long offset) throws IOException {
        if (offset > nextOffset || offset == nextOffset && partialBatch == 0) {
            return this;
        }
        if (offset == nextOffset) {
            return new BatchSlice(channel, segmentBase, position, length, nextOffset, records, 0);
        }
        ByteBuffer header = ByteBuffer.allocate(RecordBatchCodec.HEADER_SIZE);
        long at = position;
        long end = position + length;
        int cutRecords = 0;
        long cut = -1;
        while (at < end) {
            header.clear();
            while (header.hasRemaining()) {
                if (channel.read(header, at + header.position()) < 0) {
                    throw new IOException("batch header at " + at + " lies beyond the end of the segment file");
                }
            }
            long base = header.getLong(0);
            long last = base + header.getInt(RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
            if (base >= offset && cut < 0) {
                cut = at;
            }
            if (cut >= 0) {
                cutRecords += (int) (last - base + 1);
            }
            at += RecordBatchCodec.LOG_OVERHEAD + header.getInt(RecordBatchCodec.LENGTH_OFFSET);
        }
        if (cut < 0) {
            return this;
        }
        return new BatchSlice(channel, segmentBase, position, (int) (cut - position), offset,
                Math.max(0, records - cutRecords), 0);
    }

    /** Closes the file; the range must not be read after. */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // a read-only channel: nothing was written that a failed close could lose
        }
    }
}
