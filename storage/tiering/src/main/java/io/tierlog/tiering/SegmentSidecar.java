package io.tierlog.tiering;

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
 * <h2>Bytes (big-endian)</h2>
 * <pre>
 * int   magic = 0x544C5358 ("TLSX")
 * short version = 1
 * int   count
 * count x { long baseOffset; long position; long maxTimestamp }
 * int   CRC32C of all preceding bytes
 * </pre>
 * Immutable.
 */
public record SegmentSidecar(List<Entry> entries) {
    static final int MAGIC = 0x544C5358;
    static final short VERSION = 1;
    private static final int ENTRY_BYTES = 24;

    public record Entry(long baseOffset, long position, long maxTimestamp) {
    }

    public SegmentSidecar {
        entries = List.copyOf(entries);
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("a sidecar has at least one entry");
        }
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

    byte[] toBytes() {
        ByteBuffer buf = ByteBuffer.allocate(4 + 2 + 4 + entries.size() * ENTRY_BYTES + 4);
        buf.putInt(MAGIC).putShort(VERSION).putInt(entries.size());
        for (Entry e : entries) {
            buf.putLong(e.baseOffset()).putLong(e.position()).putLong(e.maxTimestamp());
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        return buf.array();
    }

    /** Parses and checks a sidecar; {@link IllegalArgumentException} says why the bytes are not a valid one. */
    static SegmentSidecar fromBytes(byte[] bytes) {
        if (bytes.length < 14) {
            throw new IllegalArgumentException("sidecar of " + bytes.length + " bytes is too short");
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != buf.getInt(bytes.length - 4)) {
            throw new IllegalArgumentException("sidecar CRC32C mismatch");
        }
        if (buf.getInt() != MAGIC || buf.getShort() != VERSION) {
            throw new IllegalArgumentException("not a version-" + VERSION + " sidecar");
        }
        int count = buf.getInt();
        if (count < 1 || bytes.length != 14 + (long) count * ENTRY_BYTES) {
            throw new IllegalArgumentException("sidecar entry count " + count + " does not match its size");
        }
        List<Entry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            entries.add(new Entry(buf.getLong(), buf.getLong(), buf.getLong()));
        }
        return new SegmentSidecar(entries);
    }
}
