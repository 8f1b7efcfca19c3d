package io.tierlog.service.api;

import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The records of stored Kafka RecordBatch v2 batches (as a {@link io.tierlog.log.BatchRead} holds them, each already
 * CRC-checked), one at a time, as positions in the batch bytes: nothing is copied or allocated per record. A
 * compressed batch is decompressed through kafka-clients ({@link RecordBatchCodec#decode}) and its records are
 * offered the same way; a transaction marker's (control) batch offers none. Timestamps follow Kafka's rule: with LogAppendTime every record carries the batch's
 * max timestamp. Not thread-safe; one per rendering.
 */
final class StoredRecords {
    private static final int COMPRESSION_MASK = 0x07;
    private static final int LOG_APPEND_TIME_FLAG = 0x08;

    private ByteBuffer batches;
    private int batchEnd;
    private int next;
    private int recordsLeft;
    private long baseOffset;
    private long baseTimestamp;
    private long maxTimestamp;
    private boolean logAppendTime;
    /** Records of a compressed batch, decoded; null while walking an uncompressed one. */
    private List<LogRecord> decoded;
    private int decodedIndex;

    // The current record.
    long offset;
    long timestamp;
    /** The buffer the current record's fields lie in (the batch bytes, or a decoded record's arrays). */
    ByteBuffer src;
    /** Absolute positions and lengths in {@link #src}; a length of -1 is null. */
    int keyAt;
    int keyLength;
    int valueAt;
    int valueLength;
    int headerCount;
    int[] headerNameAt = new int[4];
    int[] headerNameLength = new int[4];
    int[] headerValueAt = new int[4];
    int[] headerValueLength = new int[4];
    /** Header names and values of a decoded (compressed) record, which do not lie in one buffer. */
    private ByteBuffer[] headerSrc = new ByteBuffer[4];

    /** Starts on {@code batches} (position to limit: whole batches back to back). */
    void reset(ByteBuffer batches) {
        this.batches = batches.order(ByteOrder.BIG_ENDIAN);
        this.next = batches.position();
        this.batchEnd = next;
        this.recordsLeft = 0;
        this.decoded = null;
    }

    /** Moves to the next record; false after the last. */
    boolean next() {
        while (true) {
            if (decoded != null) {
                if (decodedIndex < decoded.size()) {
                    load(decoded.get(decodedIndex++));
                    return true;
                }
                decoded = null;
            } else if (recordsLeft > 0) {
                recordsLeft--;
                parseRecord();
                return true;
            }
            if (batchEnd >= batches.limit()) {
                return false;
            }
            startBatch(batchEnd);
        }
    }

    private void startBatch(int at) {
        ByteBuffer b = batches;
        int size = RecordBatchCodec.LOG_OVERHEAD + b.getInt(at + RecordBatchCodec.LENGTH_OFFSET);
        batchEnd = at + size;
        baseOffset = b.getLong(at);
        int attributes = b.getShort(at + RecordBatchCodec.ATTRIBUTES_OFFSET);
        baseTimestamp = b.getLong(at + RecordBatchCodec.BASE_TIMESTAMP_OFFSET);
        maxTimestamp = b.getLong(at + RecordBatchCodec.MAX_TIMESTAMP_OFFSET);
        logAppendTime = (attributes & LOG_APPEND_TIME_FLAG) != 0;
        int count = b.getInt(at + RecordBatchCodec.RECORD_COUNT_OFFSET);
        if ((attributes & RecordBatchCodec.CONTROL_FLAG) != 0) {
            // A transaction marker: its one record is the marker, not data (Kafka's consumers skip it too).
            recordsLeft = 0;
        } else if ((attributes & COMPRESSION_MASK) != 0) {
            decoded = new ArrayList<>(Math.max(0, count));
            decodedIndex = 0;
            RecordBatchCodec.decode(b.slice(at, size), Long.MIN_VALUE, Integer.MAX_VALUE, decoded);
            recordsLeft = 0;
        } else {
            next = at + RecordBatchCodec.HEADER_SIZE;
            recordsLeft = count;
        }
    }

    /** One record of Kafka's v2 format: length, attributes, timestamp and offset deltas, key, value, headers. */
    private void parseRecord() {
        src = batches;
        varint();                       // record length
        next++;                         // record attributes (unused)
        long timestampDelta = varlong();
        int offsetDelta = varint();
        offset = baseOffset + offsetDelta;
        timestamp = logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta;
        keyLength = varint();
        keyAt = next;
        next += Math.max(keyLength, 0);
        valueLength = varint();
        valueAt = next;
        next += Math.max(valueLength, 0);
        headerCount = varint();
        ensureHeaders(headerCount);
        for (int h = 0; h < headerCount; h++) {
            headerNameLength[h] = varint();
            headerNameAt[h] = next;
            next += Math.max(headerNameLength[h], 0);
            headerValueLength[h] = varint();
            headerValueAt[h] = next;
            next += Math.max(headerValueLength[h], 0);
            headerSrc[h] = batches;
        }
    }

    private void load(LogRecord r) {
        offset = r.offset();
        timestamp = r.timestamp();
        byte[] key = r.key();
        byte[] value = r.value();
        // Key and value each get a buffer of their own: a compressed batch's record is rare enough to allocate for.
        keyLength = key == null ? -1 : key.length;
        keyAt = 0;
        valueLength = value == null ? -1 : value.length;
        valueAt = 0;
        keySrc = key == null ? null : ByteBuffer.wrap(key);
        valueSrc = value == null ? null : ByteBuffer.wrap(value);
        src = null;
        headerCount = r.headers().size();
        ensureHeaders(headerCount);
        for (int h = 0; h < headerCount; h++) {
            Header header = r.headers().get(h);
            byte[] name = header.name().getBytes(StandardCharsets.UTF_8);
            byte[] v = header.value();
            byte[] both = v == null ? name : Arrays.copyOf(name, name.length + v.length);
            if (v != null) {
                System.arraycopy(v, 0, both, name.length, v.length);
            }
            headerSrc[h] = ByteBuffer.wrap(both);
            headerNameAt[h] = 0;
            headerNameLength[h] = name.length;
            headerValueAt[h] = name.length;
            headerValueLength[h] = v == null ? -1 : v.length;
        }
    }

    private ByteBuffer keySrc;
    private ByteBuffer valueSrc;

    ByteBuffer keySource() {
        return src != null ? src : keySrc;
    }

    ByteBuffer valueSource() {
        return src != null ? src : valueSrc;
    }

    ByteBuffer headerSource(int h) {
        return headerSrc[h];
    }

    private void ensureHeaders(int n) {
        if (n < 0) {
            throw new IllegalStateException("negative header count in a stored record at offset " + offset);
        }
        if (n > headerNameAt.length) {
            int size = Math.max(n, headerNameAt.length * 2);
            headerNameAt = Arrays.copyOf(headerNameAt, size);
            headerNameLength = Arrays.copyOf(headerNameLength, size);
            headerValueAt = Arrays.copyOf(headerValueAt, size);
            headerValueLength = Arrays.copyOf(headerValueLength, size);
            headerSrc = Arrays.copyOf(headerSrc, size);
        }
    }

    /** Kafka's zig-zag varint (ByteUtils.readVarint). */
    private int varint() {
        int value = 0;
        int shift = 0;
        while (true) {
            byte b = batches.get(next++);
            value |= (b & 0x7F) << shift;
            if (b >= 0) {
                break;
            }
            shift += 7;
            if (shift > 28) {
                throw new IllegalStateException("varint too long in a stored batch");
            }
        }
        return (value >>> 1) ^ -(value & 1);
    }

    /** Kafka's zig-zag varlong (ByteUtils.readVarlong). */
    private long varlong() {
        long value = 0;
        int shift = 0;
        while (true) {
            byte b = batches.get(next++);
            value |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                break;
            }
            shift += 7;
            if (shift > 63) {
                throw new IllegalStateException("varlong too long in a stored batch");
            }
        }
        return (value >>> 1) ^ -(value & 1);
    }
}
