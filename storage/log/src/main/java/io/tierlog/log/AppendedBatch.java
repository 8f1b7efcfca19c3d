package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.BatchKeys;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A batch a writer of this process appended, as {@link AppendJournal} keeps it for the indexer: where it lies and
 * what its header says ({@link #info}), its stored CRC32C (to recognise it in the file), and its records' keys.
 * Immutable.
 */
public final class AppendedBatch {
    private final BatchInfo info;
    private final int crc;
    /** Every key's bytes, one after the other; key {@code i} ends at {@code keyEnds[i]}. */
    private final byte[] keyBytes;
    private final int[] keyEnds;
    private final long[] keyOffsets;
    private final boolean[] tombstones;

    private AppendedBatch(BatchInfo info, int crc, byte[] keyBytes, int[] keyEnds, long[] keyOffsets,
                          boolean[] tombstones) {
        this.info = info;
        this.crc = crc;
        this.keyBytes = keyBytes;
        this.keyEnds = keyEnds;
        this.keyOffsets = keyOffsets;
        this.tombstones = tombstones;
    }

    /**
     * The keys of the uncompressed (or control) batch in {@code batch}, copied; null for a compressed batch, whose
     * keys the indexer reads from the log rather than this append decompressing it.
     */
    static AppendedBatch of(BatchInfo info, int crc, ByteBuffer batch) {
        if (BatchKeys.compressed(batch)) {
            return null;
        }
        KeyCopies copies = new KeyCopies();
        BatchKeys.forEach(batch, copies);
        return new AppendedBatch(info, crc, copies.bytes(), copies.ends(), copies.offsets(), copies.tombstones());
    }

    public BatchInfo info() {
        return info;
    }

    /** The CRC32C stored in the batch's header. */
    public int crc() {
        return crc;
    }

    /** About what this takes in memory, for the journal's bounds: the keys and a fixed cost per key and batch. */
    long footprint() {
        return 128L + keyBytes.length + 16L * keyEnds.length;
    }

    /** Visits the keyed records in order, as {@link BatchKeys#forEach} would over the batch's bytes. */
    public void forEachKey(BatchKeys.KeyVisitor visitor) {
        int start = 0;
        for (int i = 0; i < keyEnds.length; i++) {
            visitor.visit(ByteBuffer.wrap(keyBytes, start, keyEnds[i] - start).slice(), keyOffsets[i], tombstones[i]);
            start = keyEnds[i];
        }
    }

    /** Collects keys into flat arrays: one object per batch, not one per keyed record. */
    private static final class KeyCopies implements BatchKeys.KeyVisitor {
        private byte[] bytes = new byte[0];
        private int used;
        private int[] ends = new int[0];
        private long[] offsets = new long[0];
        private boolean[] tombstones = new boolean[0];
        private int count;

        @Override
        public void visit(ByteBuffer key, long offset, boolean tombstone) {
            int n = key.remaining();
            if (used + n > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(used + n, 2 * bytes.length));
            }
            key.duplicate().get(bytes, used, n);
            used += n;
            if (count == ends.length) {
                int grown = Math.max(8, 2 * count);
                ends = Arrays.copyOf(ends, grown);
                offsets = Arrays.copyOf(offsets, grown);
                tombstones = Arrays.copyOf(tombstones, grown);
            }
            ends[count] = used;
            offsets[count] = offset;
            tombstones[count] = tombstone;
            count++;
        }

        byte[] bytes() {
            return Arrays.copyOf(bytes, used);
        }

        int[] ends() {
            return Arrays.copyOf(ends, count);
        }

        long[] offsets() {
            return Arrays.copyOf(offsets, count);
        }

        boolean[] tombstones() {
            return Arrays.copyOf(tombstones, count);
        }
    }
}
