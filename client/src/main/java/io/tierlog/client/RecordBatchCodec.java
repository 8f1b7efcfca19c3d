package io.tierlog.client;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Kafka RecordBatch v2 (the body of {@code application/vnd.tierlog.record-batches}, docs/api.md), written and read
 * with the JDK alone: big-endian header of 61 bytes, zig-zag varint records, CRC32C over everything from the
 * attributes on. Writes CreateTime batches in any {@link Compression}, with producer id, epoch and base sequence (or
 * -1s); reads them back, and reports a codec whose optional library is missing as {@link UnsupportedCodecException}.
 * Stateless and thread-safe.
 */
public final class RecordBatchCodec {
    static final int HEADER_BYTES = 61;
    private static final int CRC_START = 21;
    private static final int ATTRIBUTES_COMPRESSION_MASK = 0x07;
    private static final int ATTRIBUTE_CONTROL = 0x20;

    private RecordBatchCodec() {
    }

    /** A batch of a codec the client cannot decompress: unknown, or its optional library is not on the class path. */
    public static final class UnsupportedCodecException extends RuntimeException {
        UnsupportedCodecException(int codec, String why) {
            super("record batch compressed with codec " + codec + ", which this client cannot read: " + why);
        }
    }

    /**
     * One batch of {@code records} (timestamps must be set), base offset 0 (the service assigns offsets).
     * {@code producerId} < 0: not idempotent (epoch and sequence are then written as -1).
     */
    public static byte[] encode(List<ProducerRecord> records, Compression compression, long producerId,
                                short producerEpoch, int baseSequence) {
        byte[] batch = encode(records, compression);
        stamp(batch, producerId, producerEpoch, baseSequence);
        return batch;
    }

    /**
     * One batch of {@code records} without a producer (id, epoch and sequence -1) and with a valid CRC; the
     * producer numbers it later with {@link #stamp}, so that renumbering a batch never compresses it again.
     */
    static byte[] encode(List<ProducerRecord> records, Compression compression) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        long baseTimestamp = records.get(0).timestamp();
        long maxTimestamp = baseTimestamp;
        Output body = new Output(records.size() * 64);
        Output rec = new Output(256);
        for (int i = 0; i < records.size(); i++) {
            ProducerRecord r = records.get(i);
            maxTimestamp = Math.max(maxTimestamp, r.timestamp());
            rec.reset();
            rec.write(0); // record attributes
            rec.varlong(r.timestamp() - baseTimestamp);
            rec.varint(i);
            rec.bytes(r.key());
            rec.bytes(r.value());
            rec.varint(r.headers().size());
            for (Map.Entry<String, byte[]> h : r.headers().entrySet()) {
                rec.bytes(h.getKey().getBytes(StandardCharsets.UTF_8));
                rec.bytes(h.getValue());
            }
            body.varint(rec.size());
            body.write(rec.array(), 0, rec.size());
        }
        byte[] recordBytes;
        int recordLength;
        if (compression == Compression.NONE) {
            recordBytes = body.array();
            recordLength = body.size();
        } else {
            recordBytes = Codecs.compress(compression, body.array(), body.size());
            recordLength = recordBytes.length;
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + recordLength);
        b.putLong(0L)                                   // baseOffset
                .putInt(HEADER_BYTES - 12 + recordLength) // batchLength: after this field
                .putInt(-1)                             // partitionLeaderEpoch
                .put((byte) 2)                          // magic
                .putInt(0)                              // crc, by stamp
                .putShort((short) compression.code)     // attributes: codec, CreateTime
                .putInt(records.size() - 1)             // lastOffsetDelta
                .putLong(baseTimestamp)
                .putLong(maxTimestamp)
                .putLong(-1L)                           // producerId, epoch, baseSequence: by stamp
                .putShort((short) -1)
                .putInt(-1)
                .putInt(records.size())
                .put(recordBytes, 0, recordLength);
        byte[] out = b.array();
        stamp(out, -1, (short) -1, -1);
        return out;
    }

    /**
     * Writes the producer id, epoch and base sequence into a batch of {@link #encode(List, Compression)} and
     * recomputes its CRC. {@code producerId} < 0: not idempotent (all three -1).
     */
    static void stamp(byte[] batch, long producerId, short producerEpoch, int baseSequence) {
        boolean idempotent = producerId >= 0;
        ByteBuffer b = ByteBuffer.wrap(batch);
        b.putLong(43, idempotent ? producerId : -1L);
        b.putShort(51, idempotent ? producerEpoch : -1);
        b.putInt(53, idempotent ? baseSequence : -1);
        CRC32C crc = new CRC32C();
        crc.update(batch, CRC_START, batch.length - CRC_START);
        b.putInt(17, (int) crc.getValue());
    }

    /**
     * The records of the batches in {@code body} (back to back) with offsets {@code >= fromOffset}; control batches
     * are skipped. The CRC is checked.
     *
     * @throws UnsupportedCodecException for a snappy, lz4 or zstd batch
     * @throws IllegalArgumentException for bytes that are not whole, valid batches
     */
    public static List<ConsumerRecord> decode(String topic, int partition, byte[] body, long fromOffset) {
        List<ConsumerRecord> out = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(body);
        while (b.remaining() > 0) {
            if (b.remaining() < HEADER_BYTES) {
                throw new IllegalArgumentException("a partial record batch header at byte " + b.position());
            }
            int start = b.position();
            long baseOffset = b.getLong(start);
            int length = b.getInt(start + 8);
            int end = start + 12 + length;
            if (length < HEADER_BYTES - 12 || end > body.length) {
                throw new IllegalArgumentException("a record batch at byte " + start + " overruns the body");
            }
            if (b.get(start + 16) != 2) {
                throw new IllegalArgumentException("record batch magic " + b.get(start + 16) + ", expected 2");
            }
            CRC32C crc = new CRC32C();
            crc.update(body, start + CRC_START, end - start - CRC_START);
            if ((int) crc.getValue() != b.getInt(start + 17)) {
                throw new IllegalArgumentException("record batch at offset " + baseOffset + " fails its CRC32C check");
            }
            int attributes = b.getShort(start + 21);
            long baseTimestamp = b.getLong(start + 27);
            int count = b.getInt(start + 57);
            b.position(end);
            long lastOffset = baseOffset + b.getInt(start + 23);
            if ((attributes & ATTRIBUTE_CONTROL) != 0 || lastOffset < fromOffset) {
                continue;
            }
            int codec = attributes & ATTRIBUTES_COMPRESSION_MASK;
            byte[] records;
            int from;
            int to;
            if (codec == 0) {
                records = body;
                from = start + HEADER_BYTES;
                to = end;
            } else {
                records = Codecs.decompress(codec, body, start + HEADER_BYTES, end - start - HEADER_BYTES);
                from = 0;
                to = records.length;
            }
            Input in = new Input(records, from, to);
            for (int i = 0; i < count; i++) {
                int recordLength = in.varint();
                int recordEnd = in.pos + recordLength;
                in.pos++; // attributes
                long timestamp = baseTimestamp + in.varlong();
                long offset = baseOffset + in.varint();
                byte[] key = in.bytes();
                byte[] value = in.bytes();
                int headerCount = in.varint();
                Map<String, byte[]> headers = headerCount == 0 ? Map.of() : new LinkedHashMap<>();
                for (int h = 0; h < headerCount; h++) {
                    byte[] name = in.bytes();
                    headers.put(new String(name, StandardCharsets.UTF_8), in.bytes());
                }
                if (in.pos != recordEnd) {
                    throw new IllegalArgumentException("record at offset " + offset + " has a wrong length");
                }
                if (offset >= fromOffset) {
                    out.add(new ConsumerRecord(topic, partition, offset, timestamp, key, value, headers));
                }
            }
        }
        return out;
    }

    /** A growable byte array with Kafka's zig-zag varints. */
    private static final class Output extends ByteArrayOutputStream {
        Output(int size) {
            super(size);
        }

        byte[] array() {
            return buf;
        }

        void varint(int v) {
            int z = (v << 1) ^ (v >> 31);
            while ((z & ~0x7f) != 0) {
                write((z & 0x7f) | 0x80);
                z >>>= 7;
            }
            write(z);
        }

        void varlong(long v) {
            long z = (v << 1) ^ (v >> 63);
            while ((z & ~0x7fL) != 0) {
                write((int) ((z & 0x7f) | 0x80));
                z >>>= 7;
            }
            write((int) z);
        }

        /** Length-prefixed bytes; null as length -1. */
        void bytes(byte[] b) {
            if (b == null) {
                varint(-1);
            } else {
                varint(b.length);
                write(b, 0, b.length);
            }
        }
    }

    private static final class Input {
        final byte[] buf;
        int pos;
        final int end;

        Input(byte[] buf, int pos, int end) {
            this.buf = buf;
            this.pos = pos;
            this.end = end;
        }

        int varint() {
            long v = varlong();
            return (int) v;
        }

        long varlong() {
            long raw = 0;
            int shift = 0;
            while (true) {
                if (pos >= end) {
                    throw new IllegalArgumentException("a varint runs past the end of its batch");
                }
                byte b = buf[pos++];
                raw |= (long) (b & 0x7f) << shift;
                if ((b & 0x80) == 0) {
                    break;
                }
                shift += 7;
                if (shift > 63) {
                    throw new IllegalArgumentException("a varint longer than 10 bytes");
                }
            }
            return (raw >>> 1) ^ -(raw & 1);
        }

        byte[] bytes() {
            int n = varint();
            if (n < 0) {
                return null;
            }
            if (n > end - pos) {
                throw new IllegalArgumentException("a field of " + n + " bytes runs past the end of its batch");
            }
            byte[] out = new byte[n];
            System.arraycopy(buf, pos, out, 0, n);
            pos += n;
            return out;
        }
    }
}
