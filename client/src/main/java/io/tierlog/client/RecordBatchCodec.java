package io.tierlog.client;

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
     * One batch of {@code records} without a producer (id, epoch and sequence -1) and with a valid CRC, written by
     * {@link RecordBatchBuilder} as the producer writes its batches.
     */
    static byte[] encode(List<ProducerRecord> records, Compression compression) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        int size = HEADER_BYTES;
        for (ProducerRecord r : records) {
            size += r.sizeInBytes();
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(size);
        for (ProducerRecord r : records) {
            builder.append(r.timestamp(), r.key(), r.value(), r.headers());
        }
        RecordBatchBuilder.Finished batch = builder.finish(compression);
        byte[] out = batch.length() == batch.bytes().length ? batch.bytes()
                : java.util.Arrays.copyOf(batch.bytes(), batch.length());
        stamp(out, out.length, -1, (short) -1, -1);
        return out;
    }

    static int varintSize(int v) {
        return varlongSize(v);
    }

    static int varlongSize(long v) {
        long z = (v << 1) ^ (v >> 63);
        int n = 1;
        while ((z & ~0x7fL) != 0) {
            n++;
            z >>>= 7;
        }
        return n;
    }

    /**
     * Writes the producer id, epoch and base sequence into a batch of {@link #encode(List, Compression)} (or
     * {@link RecordBatchBuilder#finish}) and
     * recomputes its CRC. {@code producerId} < 0: not idempotent (all three -1).
     */
    static void stamp(byte[] batch, long producerId, short producerEpoch, int baseSequence) {
        stamp(batch, batch.length, producerId, producerEpoch, baseSequence);
    }

    /** As {@link #stamp(byte[], long, short, int)} for a batch in {@code batch[0, length)}. */
    static void stamp(byte[] batch, int length, long producerId, short producerEpoch, int baseSequence) {
        boolean idempotent = producerId >= 0;
        ByteBuffer b = ByteBuffer.wrap(batch);
        b.putLong(43, idempotent ? producerId : -1L);
        b.putShort(51, idempotent ? producerEpoch : -1);
        b.putInt(53, idempotent ? baseSequence : -1);
        CRC32C crc = new CRC32C();
        crc.update(batch, CRC_START, length - CRC_START);
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
        Cursor cursor = cursor(topic, partition, body, fromOffset);
        List<ConsumerRecord> out = new ArrayList<>(cursor.remaining());
        ConsumerRecord r;
        while ((r = cursor.next()) != null) {
            out.add(r);
        }
        return out;
    }

    /**
     * The records of {@link #decode}, to be made one at a time. Everything is checked here (CRCs, record framing,
     * compressed batches decompressed), so {@link Cursor#next} cannot fail; only the records' objects are made
     * later, by whoever takes them.
     *
     * @throws UnsupportedCodecException for a batch in a codec the client cannot read
     * @throws IllegalArgumentException for bytes that are not whole, valid batches
     */
    static Cursor cursor(String topic, int partition, byte[] body, long fromOffset) {
        List<Segment> segments = new ArrayList<>();
        int total = 0;
        ByteBuffer b = ByteBuffer.wrap(body);
        while (b.remaining() > 0) {
            if (b.remaining() < HEADER_BYTES) {
                throw new IllegalArgumentException("a partial record batch header at byte " + b.position());
            }
            int start = b.position();
            long baseOffset = b.getLong(start);
            int length = b.getInt(start + 8);
            int end = start + 12 + length;
            if (length < HEADER_BYTES - 12 || end > body.length || end < start) {
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
            Segment segment;
            if (codec == 0) {
                segment = new Segment(body, start + HEADER_BYTES, end, baseOffset, baseTimestamp, count);
            } else {
                byte[] records = Codecs.decompress(codec, body, start + HEADER_BYTES, end - start - HEADER_BYTES);
                segment = new Segment(records, 0, records.length, baseOffset, baseTimestamp, count);
            }
            total += segment.check(fromOffset);
            segments.add(segment);
        }
        return new Cursor(topic, partition, segments, fromOffset, total);
    }

    /** The records of one batch: {@code buf[from, to)}. */
    private record Segment(byte[] buf, int from, int to, long baseOffset, long baseTimestamp, int count) {
        /** Walks the records' framing without making objects; returns how many have offsets {@code >= fromOffset}. */
        int check(long fromOffset) {
            Input in = new Input(buf, from, to);
            int kept = 0;
            for (int i = 0; i < count; i++) {
                int recordLength = in.varint();
                int recordEnd = in.pos + recordLength;
                if (recordLength < 1 || recordEnd > to || recordEnd < in.pos) {
                    throw new IllegalArgumentException("a record of batch " + baseOffset + " runs past its end");
                }
                in.pos++; // attributes
                in.varlong(); // timestamp delta
                long offset = baseOffset + in.varint();
                kept += offset >= fromOffset ? 1 : 0;
                in.skipBytes(); // key
                in.skipBytes(); // value
                int headerCount = in.varint();
                for (int h = 0; h < headerCount; h++) {
                    in.skipBytes();
                    in.skipBytes();
                }
                if (in.pos != recordEnd) {
                    throw new IllegalArgumentException("record at offset " + offset + " has a wrong length");
                }
            }
            return kept;
        }
    }

    /**
     * Checked records, decoded one at a time by {@link #next}. Used from one thread at a time (a fetch thread makes
     * it, the polling thread reads it).
     */
    static final class Cursor implements PendingRecords {
        private final String topic;
        private final int partition;
        private final List<Segment> segments;
        private final long fromOffset;
        private int remaining;
        private int segment = -1;
        private int left;
        private Input in;

        private Cursor(String topic, int partition, List<Segment> segments, long fromOffset, int total) {
            this.topic = topic;
            this.partition = partition;
            this.segments = segments;
            this.fromOffset = fromOffset;
            this.remaining = total;
        }

        @Override
        public int remaining() {
            return remaining;
        }

        @Override
        public ConsumerRecord next() {
            while (remaining > 0) {
                while (left == 0) {
                    Segment s = segments.get(++segment);
                    in = new Input(s.buf(), s.from(), s.to());
                    left = s.count();
                }
                Segment s = segments.get(segment);
                left--;
                in.varint(); // length: checked by Segment.check
                in.pos++; // attributes
                long timestamp = s.baseTimestamp() + in.varlong();
                long offset = s.baseOffset() + in.varint();
                if (offset < fromOffset) {
                    in.skipBytes();
                    in.skipBytes();
                    int headerCount = in.varint();
                    for (int h = 0; h < headerCount; h++) {
                        in.skipBytes();
                        in.skipBytes();
                    }
                    continue;
                }
                // Key and value stay where they are in the answer (no per-record copies: ConsumerRecord says why).
                int keyLength = in.length();
                int keyOffset = in.pos;
                in.pos += Math.max(0, keyLength);
                int valueLength = in.length();
                int valueOffset = in.pos;
                in.pos += Math.max(0, valueLength);
                int headerCount = in.varint();
                Map<String, byte[]> headers = headerCount == 0 ? Map.of() : new LinkedHashMap<>();
                for (int h = 0; h < headerCount; h++) {
                    byte[] name = in.bytes();
                    headers.put(new String(name, StandardCharsets.UTF_8), in.bytes());
                }
                remaining--;
                byte[] buf = s.buf();
                return new ConsumerRecord(topic, partition, offset, timestamp, buf, keyOffset, keyLength, buf,
                        valueOffset, valueLength, headers);
            }
            return null;
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

        void skipBytes() {
            int n = varint();
            if (n > end - pos) {
                throw new IllegalArgumentException("a field of " + n + " bytes runs past the end of its batch");
            }
            pos += Math.max(0, n);
        }

        /** A length-prefixed field's length (-1: null), checked to fit; the field's bytes start at {@code pos}. */
        int length() {
            int n = varint();
            if (n > end - pos) {
                throw new IllegalArgumentException("a field of " + n + " bytes runs past the end of its batch");
            }
            return n < 0 ? -1 : n;
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
