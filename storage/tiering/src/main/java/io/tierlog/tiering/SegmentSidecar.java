package io.tierlog.tiering;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The index sidecar uploaded beside each cold segment, so a cold read needs one small GET to learn where in the
 * segment object to start its ranged GETs, instead of reading the segment from its beginning.
 *
 * <h2>Entries</h2>
 * Sparse, one per batch boundary at least {@code intervalBytes} after the previous entry (and always one for the
 * first batch). Entry {@code i} is {@code (baseOffset, position, maxTimestamp)}: the batch starting at byte
 * {@code position} has base offset {@code baseOffset}, and {@code maxTimestamp} is the largest timestamp of all
 * batches from entry {@code i} up to entry {@code i+1} (or the end). So to find an offset, take the last entry
 * with {@code baseOffset <= offset}; to find the first record with timestamp {@code >= T}, take the first entry
 * with {@code maxTimestamp >= T}: no batch before it can hold such a record.
 *
 * <h2>Aborted transactions (version 2)</h2>
 * The aborted transactions that overlap the segment's offsets ({@code lastOffset >= } its base offset and
 * {@code firstOffset <=} its last offset), ordered by first offset, as the partition's transaction index listed them
 * at upload: a segment is tiered only once every transaction touching it has ended ({@link Tierer}), so the list is
 * complete, and a read_committed read of the cold tier answers Kafka's {@code aborted_transactions} from it after the
 * hot index has dropped them. Version 1 sidecars (written before transactions) load with none.
 *
 * <h2>Bytes (big-endian)</h2>
 * <pre>
 * int   magic = 0x544C5358 ("TLSX")
 * short version = 2               (1: no aborted part)
 * int   count
 * count x { long baseOffset; long position; long maxTimestamp }
 * int   abortedCount              (version 2 only)
 * abortedCount x { long producerId; long firstOffset; long lastOffset }
 * int   CRC32C of all preceding bytes
 * </pre>
 * Immutable.
 */
public record SegmentSidecar(List<Entry> entries, List<AbortedTransaction> aborted) {
    static final int MAGIC = 0x544C5358;
    static final short VERSION = 2;
    static final short VERSION_WITHOUT_ABORTED = 1;
    private static final int ENTRY_BYTES = 24;
    private static final int ABORTED_BYTES = 24;
    private static final int HEADER_BYTES = 10;

    public record Entry(long baseOffset, long position, long maxTimestamp) {
    }

    public SegmentSidecar {
        entries = List.copyOf(entries);
        aborted = List.copyOf(aborted);
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("a sidecar has at least one entry");
        }
    }

    /** A sidecar of a segment no aborted transaction touches. */
    public SegmentSidecar(List<Entry> entries) {
        this(entries, List.of());
    }

    /** The aborted transactions with {@code lastOffset >= fromOffset} and {@code firstOffset < toOffsetExclusive}. */
    public List<AbortedTransaction> aborted(long fromOffset, long toOffsetExclusive) {
        List<AbortedTransaction> out = new ArrayList<>();
        for (AbortedTransaction a : aborted) {
            if (a.lastOffset() >= fromOffset && a.firstOffset() < toOffsetExclusive) {
                out.add(a);
            }
        }
        return out;
    }

    /** The last entry at or before {@code offset} (the first entry if {@code offset} precedes all). */
    public Entry floor(long offset) {
        int lo = 0;
        int hi = entries.size() - 1;
        int found = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (entries.get(mid).baseOffset() <= offset) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return entries.get(found);
    }

    /** The first entry whose span may hold a timestamp {@code >= timestamp}; null if none. */
    public Entry firstWithTimestampAtLeast(long timestamp) {
        for (Entry e : entries) {
            if (e.maxTimestamp() >= timestamp) {
                return e;
            }
        }
        return null;
    }

    /** Whether valid sidecar bytes list the segment's aborted transactions (version 2) or predate them (version 1). */
    static boolean listsAborted(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getShort(4) == VERSION;
    }

    byte[] toBytes() {
        ByteBuffer buf = ByteBuffer.allocate(HEADER_BYTES + entries.size() * ENTRY_BYTES + 4
                + aborted.size() * ABORTED_BYTES + 4);
        buf.putInt(MAGIC).putShort(VERSION).putInt(entries.size());
        for (Entry e : entries) {
            buf.putLong(e.baseOffset()).putLong(e.position()).putLong(e.maxTimestamp());
        }
        buf.putInt(aborted.size());
        for (AbortedTransaction a : aborted) {
            buf.putLong(a.producerId()).putLong(a.firstOffset()).putLong(a.lastOffset());
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        return buf.array();
    }

    /** Parses and checks a sidecar; {@link IllegalArgumentException} says why the bytes are not a valid one. */
    static SegmentSidecar fromBytes(byte[] bytes) {
        if (bytes.length < HEADER_BYTES + 4) {
            throw new IllegalArgumentException("sidecar of " + bytes.length + " bytes is too short");
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != buf.getInt(bytes.length - 4)) {
            throw new IllegalArgumentException("sidecar CRC32C mismatch");
        }
        if (buf.getInt() != MAGIC) {
            throw new IllegalArgumentException("not a sidecar");
        }
        short version = buf.getShort();
        if (version != VERSION && version != VERSION_WITHOUT_ABORTED) {
            throw new IllegalArgumentException("sidecar version " + version + " is not 1 or 2");
        }
        int count = buf.getInt();
        long entriesEnd = HEADER_BYTES + (long) count * ENTRY_BYTES;
        long abortedAt = version == VERSION ? entriesEnd + 4 : entriesEnd;
        if (count < 1 || abortedAt + 4 > bytes.length) {
            throw new IllegalArgumentException("sidecar entry count " + count + " does not match its size");
        }
        List<Entry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            entries.add(new Entry(buf.getLong(), buf.getLong(), buf.getLong()));
        }
        int abortedCount = version == VERSION ? buf.getInt() : 0;
        if (abortedCount < 0 || bytes.length != abortedAt + (long) abortedCount * ABORTED_BYTES + 4) {
            throw new IllegalArgumentException("sidecar aborted count " + abortedCount + " does not match its size");
        }
        List<AbortedTransaction> aborted = new ArrayList<>(abortedCount);
        for (int i = 0; i < abortedCount; i++) {
            aborted.add(new AbortedTransaction(buf.getLong(), buf.getLong(), buf.getLong()));
        }
        return new SegmentSidecar(entries, aborted);
    }
}
