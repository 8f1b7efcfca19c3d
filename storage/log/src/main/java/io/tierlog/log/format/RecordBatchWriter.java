package io.tierlog.log.format;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Builds one uncompressed Kafka RecordBatch v2 (CreateTime, not transactional) record by record into a growable
 * byte array, byte for byte what {@link RecordBatchCodec#encode} writes through kafka-clients' builder for the same
 * records and producer. For an edge that parses a request straight into the batch: it hands over each record's
 * key, value and pre-encoded headers as array slices, so no per-record objects are built, and the CRC32C is
 * computed by {@link #finish} outside any partition lock. The base offset and partition leader epoch are
 * placeholders (outside the CRC), stamped by the partition writer at append.
 *
 * <p>Reusable: {@link #reset} keeps the array. Not thread-safe.
 */
public final class RecordBatchWriter {
    private byte[] buf;
    private int size;
    private int count;
    private long baseTimestamp;
    private long maxTimestamp;

    public RecordBatchWriter(int initialCapacity) {
        buf = new byte[Math.max(initialCapacity, RecordBatchCodec.HEADER_SIZE + 64)];
        reset();
    }

    /** Empties the batch, keeping its array. */
    public void reset() {
        size = RecordBatchCodec.HEADER_SIZE;
        count = 0;
        baseTimestamp = -1;
        maxTimestamp = -1;
    }

    public int recordCount() {
        return count;
    }

    /** The array's size, for a pool deciding whether to keep this writer. */
    public int capacity() {
        return buf.length;
    }

    /**
     * Appends one record (attributes 0, offset delta = its index in the batch). A null key or value is a length of
     * -1 ({@code keyLength < 0}); {@code headers[headersOff, headersOff + headersLength)} holds {@code headerCount}
     * headers already in Kafka's form ({@link #putHeaderName}, {@link #putHeaderValue}).
     */
    public void append(long timestamp, byte[] key, int keyOff, int keyLength, byte[] value, int valueOff,
                       int valueLength, int headerCount, byte[] headers, int headersOff, int headersLength) {
        if (count == 0) {
            baseTimestamp = timestamp;
        }
        maxTimestamp = Math.max(maxTimestamp, timestamp);
        long timestampDelta = timestamp - baseTimestamp;
        int offsetDelta = count;
        int body = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(offsetDelta)
                + sizeOfVarint(keyLength) + Math.max(keyLength, 0)
                + sizeOfVarint(valueLength) + Math.max(valueLength, 0)
                + sizeOfVarint(headerCount) + headersLength;
        ensure(sizeOfVarint(body) + body);
        int at = putVarint(buf, size, body);
        buf[at++] = 0;   // record attributes: unused in v2
        at = putVarlong(buf, at, timestampDelta);
        at = putVarint(buf, at, offsetDelta);
        at = putVarint(buf, at, keyLength);
        if (keyLength > 0) {
            System.arraycopy(key, keyOff, buf, at, keyLength);
            at += keyLength;
        }
        at = putVarint(buf, at, valueLength);
        if (valueLength > 0) {
            System.arraycopy(value, valueOff, buf, at, valueLength);
            at += valueLength;
        }
        at = putVarint(buf, at, headerCount);
        if (headersLength > 0) {
            System.arraycopy(headers, headersOff, buf, at, headersLength);
            at += headersLength;
        }
        size = at;
        count++;
    }

    /**
     * Writes the header (base offset 0 as a placeholder, leader epoch -1, {@code producer}'s fields) and the CRC32C,
     * and returns the batch (position 0, limit its size). The buffer shares this writer's array: valid until the
     * next {@link #reset} or {@link #append}.
     */
    public ByteBuffer finish(ProducerIdentity producer) {
        if (count == 0) {
            throw new IllegalStateException("a batch holds at least one record");
        }
        ByteBuffer b = ByteBuffer.wrap(buf, 0, size);
        b.putLong(0, 0L);
        b.putInt(RecordBatchCodec.LENGTH_OFFSET, size - RecordBatchCodec.LOG_OVERHEAD);
        b.putInt(RecordBatchCodec.PARTITION_LEADER_EPOCH_OFFSET, RecordBatchCodec.NO_PARTITION_LEADER_EPOCH);
        b.put(RecordBatchCodec.MAGIC_OFFSET, RecordBatchCodec.MAGIC);
        b.putShort(RecordBatchCodec.ATTRIBUTES_OFFSET, (short) 0);
        b.putInt(RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET, count - 1);
        b.putLong(RecordBatchCodec.BASE_TIMESTAMP_OFFSET, baseTimestamp);
        b.putLong(RecordBatchCodec.MAX_TIMESTAMP_OFFSET, maxTimestamp);
        b.putLong(RecordBatchCodec.PRODUCER_ID_OFFSET, producer.producerId());
        b.putShort(RecordBatchCodec.PRODUCER_EPOCH_OFFSET, producer.epoch());
        b.putInt(RecordBatchCodec.BASE_SEQUENCE_OFFSET, producer.sequence());
        b.putInt(RecordBatchCodec.RECORD_COUNT_OFFSET, count);
        CRC32C crc = new CRC32C();
        crc.update(buf, RecordBatchCodec.CRC_START_OFFSET, size - RecordBatchCodec.CRC_START_OFFSET);
        b.putInt(RecordBatchCodec.CRC_OFFSET, (int) crc.getValue());
        return b.slice();
    }

    /** Writes a header name's length and {@code nameLength} UTF-8 bytes at {@code out[at]}; returns the end. */
    public static int putHeaderName(byte[] out, int at, byte[] name, int nameOff, int nameLength) {
        at = putVarint(out, at, nameLength);
        System.arraycopy(name, nameOff, out, at, nameLength);
        return at + nameLength;
    }

    /** Writes a header value's length (-1 for null: {@code length < 0}) and bytes; returns the end. */
    public static int putHeaderValue(byte[] out, int at, byte[] value, int valueOff, int length) {
        at = putVarint(out, at, length);
        if (length > 0) {
            System.arraycopy(value, valueOff, out, at, length);
            at += length;
        }
        return at;
    }

    /** The most bytes a varint length prefix takes (Kafka's zig-zag varint of an int). */
    public static final int MAX_VARINT_BYTES = 5;

    private void ensure(int more) {
        if (size + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
        }
    }

    /** Kafka's zig-zag varint ({@code ByteUtils.writeVarint}). */
    public static int putVarint(byte[] out, int at, int value) {
        int v = (value << 1) ^ (value >> 31);
        while ((v & 0xffffff80) != 0) {
            out[at++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    private static int putVarlong(byte[] out, int at, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & 0xffffffffffffff80L) != 0L) {
            out[at++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    private static int sizeOfVarint(int value) {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xffffff80) != 0) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    private static int sizeOfVarlong(long value) {
        long v = (value << 1) ^ (value >> 63);
        int bytes = 1;
        while ((v & 0xffffffffffffff80L) != 0L) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }
}
