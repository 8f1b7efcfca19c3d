package io.tierlog.tiering;

import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the records of an uncompressed, already validated RecordBatch v2 (the format of
 * {@link RecordBatchCodec}) straight from its bytes into {@link LogRecord}s. Equivalent to
 * {@link RecordBatchCodec#decode} (which goes through kafka-clients' record objects, byte buffer slices and
 * header arrays, and then copies), but cheaper: a cold replay decodes every byte it serves on the reading thread,
 * so this cost bounds its throughput. Batches this decoder does not handle (compressed ones, as a client's
 * record batches may be) go to {@link RecordBatchCodec#decode}.
 *
 * <p>Also lets a reader that stopped inside a batch resume at a record's byte position instead of parsing the
 * records before it again ({@link Progress}).
 *
 * <p>Stateless and thread-safe. The batch must have passed {@link RecordBatchCodec#validate} (its CRC covers every
 * byte read here); malformed records after a valid CRC would mean a writer bug and throw
 * {@link IllegalStateException}.
 */
final class ColdBatchDecoder {
    private static final int ATTRIBUTES_OFFSET = 21;
    private static final int BASE_TIMESTAMP_OFFSET = 27;
    private static final int MAX_TIMESTAMP_OFFSET = 35;
    private static final int RECORD_COUNT_OFFSET = 57;
    private static final int RECORDS_OFFSET = 61;
    private static final int COMPRESSION_MASK = 0x07;
    /** A transaction marker's batch (attributes bit 5). */
    private static final int CONTROL_FLAG = 0x20;
    private static final int LOG_APPEND_TIME_FLAG = 0x08;
    private static final List<Header> NO_HEADERS = List.of();

    /**
     * Where decoding of a batch stopped: the byte position (relative to the batch start) and index of the next
     * record, or {@link #START}. Only meaningful for the batch it came from.
     */
    record Progress(int position, int index) {
        static final Progress START = new Progress(RECORDS_OFFSET, 0);
    }

    private ColdBatchDecoder() {
    }

    /**
     * What one read may still take: at most {@code maxRecords} records, and records only while their
     * {@link LogRecord#sizeInBytes} total stays within {@code maxBytes}, except that the first record of a read is
     * always taken (so a record larger than the budget still makes progress). Not thread-safe.
     */
    static final class Budget {
        private final int maxRecords;
        private final int maxBytes;
        private int records;
        private int bytes;

        Budget(int maxRecords, int maxBytes) {
            this.maxRecords = maxRecords;
            this.maxBytes = maxBytes;
        }

        boolean full() {
            return records >= maxRecords || bytes >= maxBytes;
        }

        /** Whether a record of {@code size} bytes may be taken; takes it if so. */
        boolean take(int size) {
            if (records > 0 && bytes + size > maxBytes) {
                bytes = maxBytes; // a later, smaller record must not squeeze in behind a refused one
                return false;
            }
            records++;
            bytes += size;
            return true;
        }
    }

    /**
     * Appends to {@code out} the records of {@code batch} (position to limit) with offsets {@code >= fromOffset}
     * while {@code budget} allows, starting the scan at {@code from} (a {@link Progress} this batch returned, or
     * {@link Progress#START}).
     *
     * @return where the first record not taken starts, or null when the batch is exhausted
     */
    static Progress decode(ByteBuffer batch, Progress from, long fromOffset, Budget budget, List<LogRecord> out) {
        ByteBuffer b = batch.slice().order(ByteOrder.BIG_ENDIAN);
        int attributes = b.getShort(ATTRIBUTES_OFFSET);
        if ((attributes & CONTROL_FLAG) != 0) {
            return null; // a transaction marker: no data records (Kafka's consumers skip it too)
        }
        if ((attributes & COMPRESSION_MASK) != 0) {
            return decodeCompressed(batch, fromOffset, budget, out);
        }
        long baseOffset = b.getLong(0);
        long baseTimestamp = b.getLong(BASE_TIMESTAMP_OFFSET);
        long maxTimestamp = b.getLong(MAX_TIMESTAMP_OFFSET);
        boolean logAppendTime = (attributes & LOG_APPEND_TIME_FLAG) != 0;
        int count = b.getInt(RECORD_COUNT_OFFSET);
        Cursor c = Cursor.over(batch, from.position());
        for (int i = from.index(); i < count; i++) {
            if (budget.full()) {
                return new Progress(c.pos, i);
            }
            int start = c.pos;
            int length = c.varint();
            int end = c.pos + length;
            if (length < 0 || end > c.limit) {
                throw new IllegalStateException("record " + i + " of " + length + " bytes runs past the batch");
            }
            c.pos++; // record attributes: unused in v2
            long timestampDelta = c.varlong();
            long offset = baseOffset + c.varint();
            if (offset < fromOffset) {
                c.pos = end;
                continue;
            }
            byte[] key = c.bytesOrNull();
            byte[] value = c.bytesOrNull();
            int headerCount = c.varint();
            List<Header> headers = NO_HEADERS;
            if (headerCount > 0) {
                headers = new ArrayList<>(headerCount);
                for (int h = 0; h < headerCount; h++) {
                    byte[] name = c.bytesOrNull();
                    if (name == null) {
                        throw new IllegalStateException("null header name at record offset " + offset);
                    }
                    headers.add(new Header(new String(name, StandardCharsets.UTF_8), c.bytesOrNull()));
                }
            } else if (headerCount < 0) {
                throw new IllegalStateException("negative header count at record offset " + offset);
            }
            if (c.pos != end) {
                throw new IllegalStateException("record at offset " + offset + " announces " + length
                        + " bytes but holds " + (length + c.pos - end));
            }
            LogRecord r = new LogRecord(offset, logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta, key,
                    value, headers);
            if (!budget.take(r.sizeInBytes())) {
                return new Progress(start, i);
            }
            out.add(r);
        }
        return null;
    }

    private static Progress decodeCompressed(ByteBuffer batch, long fromOffset, Budget budget, List<LogRecord> out) {
        List<LogRecord> all = new ArrayList<>();
        RecordBatchCodec.decode(batch, fromOffset, Integer.MAX_VALUE, all);
        for (LogRecord r : all) {
            if (budget.full() || !budget.take(r.sizeInBytes())) {
                // A compressed batch cannot be entered in the middle; the caller resumes by offset (the filter).
                return Progress.START;
            }
            out.add(r);
        }
        return null;
    }

    /**
     * Reads Kafka's zig-zag varints and length-prefixed byte arrays from the batch's backing array (positions are
     * relative to the batch start), never past the batch's end.
     */
    private static final class Cursor {
        private final byte[] bytes;
        private final int base;
        final int limit;
        int pos;

        private Cursor(byte[] bytes, int base, int limit, int pos) {
            this.bytes = bytes;
            this.base = base;
            this.limit = limit;
            this.pos = pos;
        }

        static Cursor over(ByteBuffer batch, int pos) {
            if (batch.hasArray()) {
                return new Cursor(batch.array(), batch.arrayOffset() + batch.position(), batch.remaining(), pos);
            }
            byte[] copy = new byte[batch.remaining()];
            batch.duplicate().get(copy);
            return new Cursor(copy, 0, copy.length, pos);
        }

        private byte next() {
            if (pos >= limit) {
                throw new IllegalStateException("record runs past the batch end at " + pos);
            }
            return bytes[base + pos++];
        }

        int varint() {
            int raw = 0;
            int shift = 0;
            while (true) {
                byte b = next();
                raw |= (b & 0x7F) << shift;
                if (b >= 0) {
                    break;
                }
                shift += 7;
                if (shift > 28) {
                    throw new IllegalStateException("varint too long at " + (pos - 1));
                }
            }
            return (raw >>> 1) ^ -(raw & 1);
        }

        long varlong() {
            long raw = 0;
            int shift = 0;
            while (true) {
                byte b = next();
                raw |= (long) (b & 0x7F) << shift;
                if (b >= 0) {
                    break;
                }
                shift += 7;
                if (shift > 63) {
                    throw new IllegalStateException("varlong too long at " + (pos - 1));
                }
            }
            return (raw >>> 1) ^ -(raw & 1);
        }

        byte[] bytesOrNull() {
            int n = varint();
            if (n < 0) {
                return null;
            }
            if (n > limit - pos) {
                throw new IllegalStateException(n + " bytes announced at " + pos + " run past the batch end");
            }
            byte[] out = new byte[n];
            System.arraycopy(bytes, base + pos, out, 0, n);
            pos += n;
            return out;
        }
    }
}
