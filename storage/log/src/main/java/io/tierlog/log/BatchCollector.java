package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.internal.segment.SegmentCursor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Collects validated batches from {@code fromOffset} into one {@link ReadBuffer} until {@code maxRecords} records or
 * {@code maxBytes} bytes are reached; the first batch is always taken, whatever its size, so a read makes progress.
 * Batches wholly below {@code fromOffset} are passed over.
 *
 * <p>It collects in one of two ways:
 * <ul>
 *   <li>{@link #add} copies a batch in (the cold tier, whose batches come out of its chunk cache); a batch the
 *       caller has to assemble from pieces anyway (one spanning chunks) it assembles in {@link #room}, and
 *       {@link #add} keeps it there;</li>
 *   <li>as a segment cursor's {@link SegmentCursor.Window}, it reads the file straight into its own buffer after the
 *       batches kept so far, and {@link #add} then keeps a batch where it lies, without a copy. Bytes read ahead past
 *       the last batch kept are overwritten by the next read or never returned. The hot read path works this way:
 *       with {@link ReadMemory} a server can send, the only copies between file and socket are the kernel's.</li>
 * </ul>
 * {@link #build} hands the memory to the {@link BatchRead}; {@link #abandon} gives it back when the read fails. Not
 * thread-safe.
 *
 * <p>Public because the cold tier ({@code ColdReader}) builds its {@link BatchRead}s with it too, so both tiers answer
 * batch reads under one rule; the segment-cursor side is this module's own.
 */
public final class BatchCollector implements SegmentCursor.Window {
    /** Read-ahead per file read: enough to keep system calls few, small enough that a stopping read wastes little. */
    private static final int READ_STEP = 256 * 1024;
    /** The most a read reserves before it knows it needs more: larger reads grow as batches arrive. */
    private static final int FIRST_CAPACITY_LIMIT = 8 << 20;

    private final long fromOffset;
    private final int maxRecords;
    private final int maxBytes;
    private final ReadMemory memory;
    private ReadBuffer buffer;
    /** Bytes of the batches kept, at the start of the buffer. */
    private int kept;
    private int records;
    private long nextOffset;
    /** Whether a cursor reads through this collector (then batches arrive in place, after the kept bytes). */
    private boolean windowed;
    /** The file position of the byte after the kept ones, and how many bytes from there are buffered. */
    private long filePosition;
    private int buffered;
    /** The memory last handed out by {@link #room}, until the next {@link #add}. */
    private ByteBuffer room;

    public BatchCollector(long fromOffset, int maxRecords, int maxBytes, ReadMemory memory) {
        this.fromOffset = fromOffset;
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        this.memory = memory;
        this.nextOffset = fromOffset;
    }

    /**
     * Offers one validated batch (its bytes from position to limit; not consumed). In place when this collector
     * is the cursor's window, else copied.
     *
     * @return true while more batches are wanted
     */
    public boolean add(BatchInfo info, ByteBuffer batch) {
        if (info.lastOffset() < fromOffset) {
            return true;
        }
        int size = batch.remaining();
        if (!admits(size)) {
            return false;
        }
        if (windowed) {
            if (info.position() != filePosition || size > buffered) {
                throw new IllegalStateException("batch at " + info.position() + " did not come through this window");
            }
            filePosition += size;
            buffered -= size;
        } else if (batch != room || batch.position() != 0) {
            ensureCapacity(kept + size, Math.max(kept + size, Math.min(maxBytes, FIRST_CAPACITY_LIMIT)));
            buffer.memory().put(kept, batch, batch.position(), size);
        }
        room = null;
        kept += size;
        records += (int) (info.lastOffset() - Math.max(info.baseOffset(), fromOffset) + 1);
        nextOffset = info.nextOffset();
        return records < maxRecords && kept < maxBytes;
    }

    /**
     * Memory for one batch of {@code size} bytes, right after the batches kept: a caller assembling a batch from
     * pieces fills it, and {@link #add} then keeps it where it lies instead of copying it (the buffer, position 0 to
     * limit, must be passed as returned). Valid until the next {@link #add}, which may also pass it over (a batch
     * below {@code fromOffset}) or turn it away; then the next batch overwrites it.
     */
    public ByteBuffer room(int size) {
        if (windowed) {
            throw new IllegalStateException("a window's batches arrive in place already");
        }
        ensureCapacity(kept + size, Math.max(kept + size, Math.min(maxBytes, FIRST_CAPACITY_LIMIT)));
        room = buffer.memory().slice(kept, size);
        return room;
    }

    /** True once a read needs nothing more. */
    public boolean full() {
        return kept > 0 && (records >= maxRecords || kept >= maxBytes);
    }

    @Override
    public boolean admits(long size) {
        return kept == 0 || kept + size <= maxBytes;
    }

    @Override
    public void startAt(long position) {
        windowed = true;
        filePosition = position;
        buffered = 0;
    }

    @Override
    public ByteBuffer view(FileChannel channel, long fileSize, long position, int n) throws IOException {
        if (position < filePosition) {
            throw new IllegalStateException("window asked for position " + position + " behind " + filePosition);
        }
        discardBefore(position);
        if (buffered < n) {
            long fileLeft = fileSize - (filePosition + buffered);
            // Reserve what this read can still use: up to maxBytes of batches (or the one batch asked for, if larger),
            // no more than the file holds; a pooled buffer costs nothing for the part left unused.
            long useful = Math.max(n, Math.min((long) maxBytes - kept, buffered + fileLeft));
            ensureCapacity(kept + n, (int) Math.min(Integer.MAX_VALUE - 8L, kept + Math.min(useful,
                    Math.max(n, FIRST_CAPACITY_LIMIT))));
            int room = buffer.capacity() - kept - buffered;
            int want = (int) Math.min(room, Math.min(fileLeft, Math.max(n - buffered, READ_STEP)));
            ByteBuffer into = buffer.memory().duplicate();
            into.limit(kept + buffered + want).position(kept + buffered);
            while (into.hasRemaining()) {
                if (channel.read(into, filePosition + buffered) < 0) {
                    break;
                }
                buffered = into.position() - kept;
            }
            if (buffered < n) {
                throw new IOException("file shrank while reading at " + position);
            }
        }
        return buffer.memory().slice(kept, n);
    }

    /** Drops buffered bytes before {@code position}: batches passed over (below fromOffset). */
    private void discardBefore(long position) {
        int skip = (int) Math.min(position - filePosition, buffered);
        if (skip > 0) {
            ByteBuffer m = buffer.memory();
            m.put(kept, m, kept + skip, buffered - skip);
            buffered -= skip;
        }
        filePosition = position;
    }

    /**
     * Makes the buffer hold at least {@code needed} bytes; a new one gets {@code preferred} (at least needed). The
     * kept and buffered bytes move along when the buffer is replaced.
     */
    private void ensureCapacity(int needed, int preferred) {
        if (buffer != null && buffer.capacity() >= needed) {
            return;
        }
        // Doubling (up to maxBytes) keeps a read that arrives in many small steps from copying over and over.
        int doubled = buffer == null ? 0 : (int) Math.min(maxBytes, 2L * buffer.capacity());
        int capacity = Math.max(needed, Math.max(preferred, doubled));
        ReadBuffer larger = memory.allocate(capacity);
        if (buffer != null) {
            larger.memory().put(0, buffer.memory(), 0, kept + buffered);
            buffer.close();
        }
        buffer = larger;
    }

    /** The read so far; its memory now belongs to the returned {@link BatchRead}. */
    public BatchRead build() {
        if (kept == 0) {
            abandon();
            return BatchRead.empty(nextOffset);
        }
        BatchRead read = new BatchRead(buffer, kept, nextOffset, records);
        buffer = null;
        return read;
    }

    /** Gives the memory back: the read failed and nothing will be built. */
    public void abandon() {
        if (buffer != null) {
            buffer.close();
            buffer = null;
        }
    }
}
