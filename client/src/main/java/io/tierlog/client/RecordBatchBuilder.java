package io.tierlog.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * One Kafka RecordBatch v2 written record by record, as kafka-clients' {@code MemoryRecordsBuilder} does: each record
 * goes straight into the array that becomes the request body when it is appended (the producer appends at
 * {@code send}, so it keeps no copy of the record and the application may reuse its arrays once {@code send}
 * returned), and {@link #finish} writes the header once the batch is closed. The array is given (the
 * producer reuses the arrays of finished batches) or starts at {@code initialCapacity}, and doubles when a record does
 * not fit.
 *
 * <p>Not thread-safe: appends happen under the producer's lock; {@link #finish} runs once, after the last append,
 * on the thread that sends the batch (a hand-off through an executor, so it sees every append).
 */
final class RecordBatchBuilder {
    private byte[] buf;
    private int pos = RecordBatchCodec.HEADER_BYTES;
    private int count;
    private long baseTimestamp;
    private long maxTimestamp;
    private final int growTo;

    RecordBatchBuilder(int initialCapacity) {
        this(new byte[Math.max(initialCapacity, RecordBatchCodec.HEADER_BYTES + 64)], Integer.MAX_VALUE);
    }

    /**
     * Writes into {@code array} (its old bytes are overwritten; only what is written is sent), growing past it if
     * need be: doubling, then straight to {@code growTo} bytes once doubling would reach half of it, and beyond only
     * as a record needs (so that a producer's grown batch ends at its full batch size, whose arrays it reuses).
     */
    RecordBatchBuilder(byte[] array, int growTo) {
        if (array.length < RecordBatchCodec.HEADER_BYTES) {
            throw new IllegalArgumentException("an array of " + array.length + " bytes cannot hold a batch header");
        }
        buf = array;
        this.growTo = growTo;
    }

    /** Records appended so far. */
    int count() {
        return count;
    }

    /** Bytes written so far, the batch header included. */
    int sizeInBytes() {
        return pos;
    }

    /**
     * Appends one record; its offset delta is its index, its timestamp delta is taken from the first record's.
     * {@code key} and {@code value} null: null fields; {@code headers} never null.
     */
    void append(long timestamp, byte[] key, byte[] value, Map<String, byte[]> headers) {
        if (count == 0) {
            baseTimestamp = timestamp;
            maxTimestamp = timestamp;
        } else if (timestamp > maxTimestamp) {
            maxTimestamp = timestamp;
        }
        long timestampDelta = timestamp - baseTimestamp;
        byte[][] names = null;
        int length = 1 + RecordBatchCodec.varlongSize(timestampDelta) + RecordBatchCodec.varintSize(count)
                + bytesSize(key) + bytesSize(value) + RecordBatchCodec.varintSize(headers.size());
        if (!headers.isEmpty()) {
            names = new byte[headers.size()][];
            int i = 0;
            for (Map.Entry<String, byte[]> h : headers.entrySet()) {
                names[i] = h.getKey().getBytes(StandardCharsets.UTF_8);
                length += bytesSize(names[i++]) + bytesSize(h.getValue());
            }
        }
        ensure(RecordBatchCodec.varintSize(length) + length);
        byte[] out = buf;
        int p = putVarlong(out, pos, length);
        out[p++] = 0; // record attributes
        p = putVarlong(out, p, timestampDelta);
        p = putVarlong(out, p, count);
        p = putBytes(out, p, key);
        p = putBytes(out, p, value);
        p = putVarlong(out, p, headers.size());
        if (names != null) {
            int i = 0;
            for (Map.Entry<String, byte[]> h : headers.entrySet()) {
                p = putBytes(out, p, names[i++]);
                p = putBytes(out, p, h.getValue());
            }
        }
        pos = p;
        count++;
    }

    /**
     * The whole batch, compressed as asked, base offset 0 and no producer (id, epoch and sequence -1), CRC not yet
     * written: {@link RecordBatchCodec#stamp} numbers it and writes the CRC. The batch is {@code [0, length)} of
     * the returned array's {@link Finished}. Call once, after the last append.
     */
    Finished finish(Compression compression) {
        if (count == 0) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        byte[] out = buf;
        int length = pos;
        if (compression != Compression.NONE) {
            int recordBytes = pos - RecordBatchCodec.HEADER_BYTES;
            byte[] records = Arrays.copyOfRange(buf, RecordBatchCodec.HEADER_BYTES, pos);
            byte[] compressed = Codecs.compress(compression, records, recordBytes);
            out = new byte[RecordBatchCodec.HEADER_BYTES + compressed.length];
            System.arraycopy(compressed, 0, out, RecordBatchCodec.HEADER_BYTES, compressed.length);
            length = out.length;
        }
        buf = null; // appending after finish is a bug: fail fast
        ByteBuffer b = ByteBuffer.wrap(out);
        b.putLong(0, 0L)                                  // baseOffset
                .putInt(8, length - 12)                   // batchLength: after this field
                .putInt(12, -1)                           // partitionLeaderEpoch
                .put(16, (byte) 2)                        // magic; crc at 17 by stamp
                .putShort(21, (short) compression.code)   // attributes: codec, CreateTime
                .putInt(23, count - 1)                    // lastOffsetDelta
                .putLong(27, baseTimestamp)
                .putLong(35, maxTimestamp)                // producerId, epoch, baseSequence at 43: by stamp
                .putInt(57, count);
        return new Finished(out, length);
    }

    /** A finished batch: {@code bytes[0, length)}. */
    record Finished(byte[] bytes, int length) {
    }

    /** Whether {@code more} bytes fit in the current array. */
    boolean fits(int more) {
        return pos + more <= buf.length;
    }

    /** Continues in {@code array} (what was written is copied over) if it is larger than the current one. */
    boolean moveTo(byte[] array) {
        if (array.length <= buf.length) {
            return false;
        }
        System.arraycopy(buf, 0, array, 0, pos);
        buf = array;
        return true;
    }

    private void ensure(int more) {
        if (pos + more > buf.length) {
            // Doubling, but straight to growTo once doubling reaches half of it: a grown batch ends at exactly the
            // size whose arrays the producer reuses. Past growTo (a record larger than usual), by half.
            int next = buf.length >= growTo ? buf.length + (buf.length >> 1)
                    : 2L * buf.length >= growTo / 2 ? growTo : 2 * buf.length;
            buf = Arrays.copyOf(buf, Math.max(pos + more, next));
        }
    }

    private static int bytesSize(byte[] b) {
        return b == null ? 1 : RecordBatchCodec.varintSize(b.length) + b.length;
    }

    /** Kafka's zig-zag varint at {@code pos}; returns the position after it. */
    private static int putVarlong(byte[] out, int pos, long v) {
        long z = (v << 1) ^ (v >> 63);
        while ((z & ~0x7fL) != 0) {
            out[pos++] = (byte) ((z & 0x7f) | 0x80);
            z >>>= 7;
        }
        out[pos++] = (byte) z;
        return pos;
    }

    /** Length-prefixed bytes; null as length -1. */
    private static int putBytes(byte[] out, int pos, byte[] b) {
        if (b == null) {
            return putVarlong(out, pos, -1);
        }
        pos = putVarlong(out, pos, b.length);
        System.arraycopy(b, 0, out, pos, b.length);
        return pos + b.length;
    }
}
