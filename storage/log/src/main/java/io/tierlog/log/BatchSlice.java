package io.tierlog.log;

import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * Whole record batches of one hot segment as a range of its file, not read: {@code length} bytes from
 * {@code position} of the open {@link #channel()}, for a server that sends them with {@code sendfile} (the Kafka
 * listener). Same contract as {@link BatchRead} for offsets and counts: the first batch may begin below the offset
 * asked for, {@code nextOffset} is the offset after the last batch, {@code records} counts the records at or above
 * the offset asked for. Unlike {@link BatchRead}, the bytes were not CRC-checked on the way out: their boundaries
 * come from the batch headers, the range ends at or before the visible end the index checked (see
 * {@link PartitionReader#sliceBatches}), and the CRC check is the receiver's, as with Kafka's own broker.
 *
 * <p>The channel was opened before the range was found and is this slice's own: the range stays readable after the
 * segment file is deleted, rolled or replaced (the open channel keeps the inode), until {@link #close}. Close it
 * once the bytes are sent or will not be; closing twice is harmless. Not thread-safe.
 */
public final class BatchSlice implements AutoCloseable {
    private final FileChannel channel;
    private final long position;
    private final int length;
    private final long nextOffset;
    private final int records;

    BatchSlice(FileChannel channel, long position, int length, long nextOffset, int records) {
        this.channel = channel;
        this.position = position;
        this.length = length;
        this.nextOffset = nextOffset;
        this.records = records;
    }

    /** The open segment file the batches are in; closed by {@link #close}. */
    public FileChannel channel() {
        return channel;
    }

    /** Where the first batch begins in the file. */
    public long position() {
        return position;
    }

    /** Bytes of the batches, from {@link #position()}. */
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
