package io.tierlog.log.internal.txn;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a partition's transaction index says, read incrementally: between trims the file only grows (a writer
 * truncates nothing but a torn last entry), so a state that has consumed its first {@link #consumed()} bytes reads
 * only the bytes after them. A trim ({@link TxnIndexTrim}) replaces the file by a shorter one; a reader that notices
 * (a shorter file, another inode, or another last entry where its own was: {@link #continuesIn}) reads it anew. Per producer the open transaction's first offset; the aborted transactions in the order of their
 * markers; for a writer, the newest BEGIN per producer and the newest END, which make its repairs idempotent.
 *
 * <p>Reading stops at the first entry that is incomplete or fails its CRC: a writer killed mid-write (the next
 * writer truncates it) or one writing right now. Not thread-safe.
 */
public final class TxnIndexState {
    /** An aborted transaction: {@code producerId}'s batches from {@code firstOffset} to its abort marker at {@code lastOffset}. */
    public record Aborted(long producerId, long firstOffset, long lastOffset) {
    }

    private final Map<Long, Long> open = new HashMap<>();
    private final Map<Long, Long> newestBegin = new HashMap<>();
    /** Ordered by lastOffset (markers are indexed in log order); appended to only. */
    private final List<Aborted> aborted = new ArrayList<>();
    private long newestEnd = -1;
    private long consumed;
    /** The entry that ends {@link #consumed()}, null when nothing was read. */
    private TxnIndexEntry last;

    /** Bytes of the file read so far: whole, valid entries only. */
    public long consumed() {
        return consumed;
    }

    /** Forgets everything: the file is gone or was replaced (partition deleted and re-created). */
    public void reset() {
        open.clear();
        newestBegin.clear();
        aborted.clear();
        newestEnd = -1;
        consumed = 0;
        last = null;
    }

    /**
     * Whether {@code channel} still holds the last entry read where it was read, so that reading on from
     * {@link #consumed()} is right. False after a trim rewrote the file (the entry moved or is gone), which a reader
     * cannot tell from the inode alone: a file system may give the rewritten file the inode of an older one. Entries
     * are never equal within one file (each names its own offset), so an equal entry there means the same prefix.
     */
    public boolean continuesIn(FileChannel channel) throws IOException {
        if (last == null) {
            return true;
        }
        ByteBuffer buf = ByteBuffer.allocate(TxnIndexEntry.SIZE);
        while (buf.hasRemaining()) {
            if (channel.read(buf, consumed - TxnIndexEntry.SIZE + buf.position()) < 0) {
                return false;
            }
        }
        return last.equals(TxnIndexEntry.decode(buf, 0));
    }

    /**
     * Reads the entries after {@link #consumed()} up to {@code size} bytes of {@code channel}.
     *
     * @return true if it stopped before {@code size} at an incomplete or bad entry
     */
    public boolean readFrom(FileChannel channel, long size) throws IOException {
        long whole = consumed + (size - consumed) / TxnIndexEntry.SIZE * TxnIndexEntry.SIZE;
        while (consumed < whole) {
            int chunk = (int) Math.min(whole - consumed, 64L * TxnIndexEntry.SIZE * 1024);
            ByteBuffer buf = ByteBuffer.allocate(chunk);
            while (buf.hasRemaining()) {
                if (channel.read(buf, consumed + buf.position()) < 0) {
                    return true; // shrank while reading: the caller looks again
                }
            }
            for (int at = 0; at < chunk; at += TxnIndexEntry.SIZE) {
                TxnIndexEntry entry = TxnIndexEntry.decode(buf, at);
                if (entry == null) {
                    return true;
                }
                apply(entry);
            }
        }
        return consumed < size;
    }

    /** Applies one entry that lies at {@link #consumed()} (read, or just written by this process). */
    public void apply(TxnIndexEntry entry) {
        long pid = entry.producerId();
        if (entry.isBegin()) {
            // A second BEGIN while one is open (after a BEGIN whose batch never reached the log) changes nothing:
            // the earlier first offset is the conservative one.
            open.putIfAbsent(pid, entry.offset());
            newestBegin.merge(pid, entry.offset(), Math::max);
        } else {
            Long first = open.remove(pid);
            if (first != null && entry.type() == TxnIndexEntry.Type.ABORT) {
                addAborted(new Aborted(pid, first, entry.offset()));
            }
            newestEnd = Math.max(newestEnd, entry.offset());
        }
        consumed += TxnIndexEntry.SIZE;
        last = entry;
    }

    private void addAborted(Aborted a) {
        int i = aborted.size();
        while (i > 0 && aborted.get(i - 1).lastOffset() > a.lastOffset()) {
            i--;
        }
        aborted.add(i, a);
    }

    /** Producer id to the first offset of its open transaction. */
    public Map<Long, Long> open() {
        return Collections.unmodifiableMap(open);
    }

    /** Whether the index already holds a BEGIN for {@code producerId} at {@code firstOffset} or later, or one open. */
    public boolean hasBegin(long producerId, long firstOffset) {
        return open.containsKey(producerId) || newestBegin.getOrDefault(producerId, -1L) >= firstOffset;
    }

    /** Whether the index already holds the END of the marker at {@code markerOffset} (ENDs are indexed in log order). */
    public boolean hasEnd(long markerOffset) {
        return newestEnd >= markerOffset;
    }

    /** The offset of the newest marker with an END here, -1 when there is none. */
    public long newestEnd() {
        return newestEnd;
    }

    /** The smallest first offset of an open transaction, or {@code Long.MAX_VALUE} when none is open. */
    public long firstOpenOffset() {
        long min = Long.MAX_VALUE;
        for (long first : open.values()) {
            min = Math.min(min, first);
        }
        return min;
    }

    /**
     * The aborted transactions with {@code lastOffset >= fromOffset} and {@code firstOffset < toOffsetExclusive},
     * ordered by first offset.
     */
    public List<Aborted> aborted(long fromOffset, long toOffsetExclusive) {
        int lo = 0;
        int hi = aborted.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (aborted.get(mid).lastOffset() < fromOffset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<Aborted> out = new ArrayList<>();
        for (int i = lo; i < aborted.size(); i++) {
            if (aborted.get(i).firstOffset() < toOffsetExclusive) {
                out.add(aborted.get(i));
            }
        }
        out.sort((a, b) -> Long.compare(a.firstOffset(), b.firstOffset()));
        return out;
    }
}
