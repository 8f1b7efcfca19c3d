package io.tierlog.log.format;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Validates a produce body of Kafka RecordBatch v2 bytes, as a Kafka producer builds them (kafka-clients'
 * {@code MemoryRecordsBuilder}), and turns it into one {@link ClientBatch} for one partition. Everything is checked
 * before anything is appended; any failure is a {@link TierlogException} that names the field, and changes nothing.
 *
 * <h2>What is accepted</h2>
 * The body is one or more whole batches back to back, with no trailing bytes. Each batch (layout in
 * {@link RecordBatchCodec}) must have:
 * <ul>
 *   <li>a length field that fits the body, magic 2 and a matching CRC32C;</li>
 *   <li>attributes: uncompressed or compressed with gzip, snappy, lz4 or zstd (Kafka's codecs), CreateTime, not a
 *       control batch, no delete horizon, no unknown bits; transactional only with a producer id (KIP-98: the
 *       writer opens the producer's transaction on the partition with it);</li>
 *   <li>{@code recordCount > 0} and {@code lastOffsetDelta == recordCount - 1}; records that parse exactly to the
 *       batch's end, each with offset delta equal to its index (dense), record attributes 0, a key and value of
 *       length {@code >= -1}, headers with non-null UTF-8 names and values of length {@code >= -1};</li>
 *   <li>record timestamps {@code >= 0}, or {@code -1} ("none": the append time is used, as the JSON path does for
 *       a record without a timestamp), and {@code maxTimestamp} equal to the largest record timestamp (the time
 *       index trusts it);</li>
 *   <li>producer fields {@code -1/-1/-1} (no idempotence) or id, epoch and sequence all {@code >= 0}. An idempotent
 *       body must be exactly one batch: its {@code baseSequence} is the sequence of its first record in Kafka's
 *       numbering (a sequence counts records per producer and partition), as a Kafka producer sets it.</li>
 * </ul>
 * Every record's payload (key, value, header names and values; the JSON path's measure) must be at most
 * {@code max.message.bytes}, else {@code record-too-large} naming {@code records[i]}, the record's index in the
 * body (which is also its offset minus the base offset). The baseOffset and partitionLeaderEpoch fields are not
 * checked: they lie outside the CRC and the writer overwrites them.
 *
 * <h2>Compressed batches</h2>
 * A compressed batch's records are decompressed (kafka-clients' codecs) and walked like an uncompressed batch's,
 * so every rule above holds inside it too; a payload that does not decompress is a {@code bad-request}. What one
 * body decompresses to is bounded by {@link #MAX_DECOMPRESSED_BYTES} ({@code request-too-large} beyond it), so a
 * small body cannot make the service hold an unbounded amount of memory. The batch is stored compressed, as sent;
 * readers decompress it (the JSON answers) or pass it on as is (the record-batch media type).
 *
 * <h2>Zero copy, or one rebuild</h2>
 * A body of one batch whose timestamps are all set is appended as the client's bytes (only the header fields
 * outside the CRC are stamped). A body of several batches is merged into one batch, and a batch with a -1 timestamp
 * is re-encoded with the append time: the request then still lands as one batch, which is what makes it atomic for
 * readers (a reader shows a batch only when it is complete) and for a writer killed mid-write (a torn batch is
 * truncated whole; a request written as several batches could leave its first batches behind). A rebuilt batch is
 * compressed with the body's codec when all its batches share one, else stored uncompressed.
 *
 * <p>Stateless and thread-safe.
 */
public final class ClientBatchValidator {
    public static final String BODY = "body";

    private static final int COMPRESSION_MASK = 0x07;
    private static final int LOG_APPEND_TIME_FLAG = 0x08;
    private static final int TRANSACTIONAL_FLAG = RecordBatchCodec.TRANSACTIONAL_FLAG;
    private static final int CONTROL_FLAG = RecordBatchCodec.CONTROL_FLAG;
    private static final int DELETE_HORIZON_FLAG = 0x40;
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    /**
     * The most the records of one body may decompress to. Kafka's producer sends at most 1 MiB per request
     * ({@code max.request.size}) and codecs gain a few times on typical data; 64 MiB leaves room for highly
     * compressible batches while bounding what a request can make the service hold.
     */
    public static final int MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;
    /**
     * The most a record's encoding can grow when re-encoded into a merged batch: its timestamp delta (at least 1
     * byte) becomes at most a 10-byte varlong, its offset delta at most a 5-byte varint, and its length varint grows
     * by at most 4 bytes.
     */
    private static final int MAX_REENCODE_GROWTH_PER_RECORD = 9 + 4 + 4;

    private ClientBatchValidator() {
    }

    /**
     * Validates {@code body} (position to limit; the buffer's position is not moved) for a topic whose
     * {@code max.message.bytes} is {@code maxMessageBytes}; {@code nowMs} replaces record timestamps of -1.
     *
     * @return the batch to append: a view of {@code body} when it is one batch with all timestamps set (a copy if
     *         {@code body} is read-only, since the writer stamps its header), else a re-encoded batch
     * @throws TierlogException {@code bad-request} with {@code field = "body"}, or {@code record-too-large} with
     *         {@code field = "records[i]"}
     */
    public static ClientBatch validate(ByteBuffer body, int maxMessageBytes, long nowMs) {
        ByteBuffer buf = body.slice().order(ByteOrder.BIG_ENDIAN);
        int size = buf.limit();
        if (size == 0) {
            throw bad("empty; expected one or more Kafka RecordBatch v2 batches");
        }
        List<ByteBuffer> batches = new ArrayList<>(1);
        CRC32C crc = new CRC32C();
        Walk walk = new Walk(maxMessageBytes);
        long idempotentProducer = -1;
        ProducerIdentity producer = ProducerIdentity.NONE;
        boolean transactional = false;
        int decompressed = 0;
        int commonCodec = -1; // the codec all batches so far share; 0 (none) once two differ
        int pos = 0;
        while (pos < size) {
            String where = "batch " + batches.size() + " at byte " + pos;
            if (size - pos < RecordBatchCodec.LOG_OVERHEAD) {
                throw bad(where + ": " + (size - pos) + " trailing bytes are not a whole batch");
            }
            // Magic first: an older format (v0/v1, whose magic byte sits at the same place) has other sizes.
            if (size - pos > RecordBatchCodec.MAGIC_OFFSET) {
                requireMagic(buf.get(pos + RecordBatchCodec.MAGIC_OFFSET), where);
            }
            long announced = RecordBatchCodec.LOG_OVERHEAD + (long) buf.getInt(pos + RecordBatchCodec.LENGTH_OFFSET);
            if (announced < RecordBatchCodec.HEADER_SIZE) {
                throw bad(where + ": length field announces a batch of " + announced + " bytes, shorter than the "
                        + RecordBatchCodec.HEADER_SIZE + "-byte header");
            }
            if (announced > size - pos) {
                throw bad(where + ": length field announces a batch of " + announced + " bytes, but only "
                        + (size - pos) + " bytes remain in the body");
            }
            ByteBuffer batch = buf.slice(pos, (int) announced).order(ByteOrder.BIG_ENDIAN);
            ProducerIdentity batchProducer = checkHeader(batch, where, crc);
            if (!batchProducer.isNone()) {
                idempotentProducer = batches.size();
                producer = batchProducer;
                transactional = (batch.getShort(RecordBatchCodec.ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG) != 0;
            }
            int codec = batch.getShort(RecordBatchCodec.ATTRIBUTES_OFFSET) & COMPRESSION_MASK;
            if (codec == 0) {
                walk.records(batch, batch, RecordBatchCodec.HEADER_SIZE, where);
            } else {
                decompressed += walk.records(batch, decompress(batch, codec, MAX_DECOMPRESSED_BYTES - decompressed,
                        where), 0, where);
            }
            commonCodec = commonCodec < 0 || commonCodec == codec ? codec : 0;
            batches.add(batch);
            pos += (int) announced;
        }
        if (idempotentProducer >= 0 && batches.size() > 1) {
            throw bad("it holds " + batches.size() + " batches and batch " + idempotentProducer + " carries producerId "
                    + producer.producerId() + ": an idempotent request must be exactly one batch, whose baseSequence "
                    + "is the sequence of its first record");
        }
        if (batches.size() == 1 && !walk.missingTimestamp) {
            ByteBuffer only = batches.get(0);
            if (body.isReadOnly()) {
                only = ByteBuffer.allocate(only.remaining()).put(only.duplicate()).flip();
            }
            return new ClientBatch(only, walk.records, producer, transactional, 1, false);
        }
        // Merged batches keep the codec they all share; mixed ones (or uncompressed ones) are stored uncompressed.
        ByteBuffer rebuilt = rebuild(batches, walk.records, decompressed, CompressionType.forId(commonCodec), producer,
                transactional, nowMs);
        return new ClientBatch(rebuilt, walk.records, producer, transactional, batches.size(), true);
    }

    private static void requireMagic(byte magic, String where) {
        if (magic != RecordBatchCodec.MAGIC) {
            throw bad(where + ": magic " + magic + "; only RecordBatch v2 (magic 2) is accepted");
        }
    }

    /** Checks CRC32C, attributes, counts and producer fields of one complete batch whose magic is 2. */
    private static ProducerIdentity checkHeader(ByteBuffer batch, String where, CRC32C crc) {
        crc.reset();
        crc.update(batch.duplicate().position(RecordBatchCodec.CRC_START_OFFSET));
        long stored = Integer.toUnsignedLong(batch.getInt(RecordBatchCodec.CRC_OFFSET));
        if (crc.getValue() != stored) {
            throw bad(where + ": CRC32C mismatch (header says " + stored + ", the bytes give " + crc.getValue() + ")");
        }
        int attributes = batch.getShort(RecordBatchCodec.ATTRIBUTES_OFFSET);
        int codec = attributes & COMPRESSION_MASK;
        if (codec >= CODECS.length) {
            throw bad(where + ": compression codec id " + codec + "; expected 0 (none), 1 (gzip), 2 (snappy), 3 (lz4) "
                    + "or 4 (zstd)");
        }
        if ((attributes & LOG_APPEND_TIME_FLAG) != 0) {
            throw bad(where + ": timestamp type LogAppendTime; only CreateTime batches are accepted");
        }
        if ((attributes & CONTROL_FLAG) != 0) {
            // Transaction markers are the coordinator's to write (PartitionWriter#appendMarker), never a producer's.
            throw bad(where + ": control batch; only data batches are accepted");
        }
        if ((attributes & ~(COMPRESSION_MASK | LOG_APPEND_TIME_FLAG | TRANSACTIONAL_FLAG | CONTROL_FLAG)) != 0) {
            throw bad(where + ": attributes 0x" + Integer.toHexString(attributes & 0xffff) + " set "
                    + ((attributes & DELETE_HORIZON_FLAG) != 0 ? "the delete-horizon flag (a compaction artefact)"
                    : "unknown bits") + "; a producer's batch has none");
        }
        int count = batch.getInt(RecordBatchCodec.RECORD_COUNT_OFFSET);
        if (count <= 0) {
            throw bad(where + ": recordCount " + count + "; a batch holds at least one record");
        }
        int lastOffsetDelta = batch.getInt(RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
        if (lastOffsetDelta != count - 1) {
            throw bad(where + ": lastOffsetDelta " + lastOffsetDelta + " with recordCount " + count
                    + "; offsets must be dense (lastOffsetDelta = recordCount - 1)");
        }
        long producerId = batch.getLong(RecordBatchCodec.PRODUCER_ID_OFFSET);
        short epoch = batch.getShort(RecordBatchCodec.PRODUCER_EPOCH_OFFSET);
        int sequence = batch.getInt(RecordBatchCodec.BASE_SEQUENCE_OFFSET);
        if (producerId == RecordBatch.NO_PRODUCER_ID) {
            if ((attributes & TRANSACTIONAL_FLAG) != 0) {
                throw bad(where + ": transactional batch without a producerId; a transaction needs one >= 0");
            }
            if (epoch != RecordBatch.NO_PRODUCER_EPOCH || sequence != RecordBatch.NO_SEQUENCE) {
                throw bad(where + ": producerEpoch " + epoch + " and baseSequence " + sequence
                        + " must both be -1 when producerId is -1 (no idempotence)");
            }
            return ProducerIdentity.NONE;
        }
        if (producerId < 0) {
            throw bad(where + ": producerId " + producerId + "; expected -1 (no idempotence) or >= 0");
        }
        if (epoch < 0) {
            throw bad(where + ": producerEpoch " + epoch + " of producerId " + producerId + "; expected 0..32767");
        }
        if (sequence < 0) {
            throw bad(where + ": baseSequence " + sequence + " of producerId " + producerId + "; expected >= 0");
        }
        return new ProducerIdentity(producerId, epoch, sequence);
    }

    /**
     * The records of a compressed batch, decompressed: at most {@code limit} bytes, else {@code request-too-large}
     * (read in steps, so a bomb is stopped at the limit, not after it has been inflated).
     */
    private static ByteBuffer decompress(ByteBuffer batch, int codec, int limit, String where) {
        ByteBuffer compressed = batch.duplicate().position(RecordBatchCodec.HEADER_SIZE).slice();
        byte[] out = new byte[Math.min(limit, Math.max(1024, compressed.remaining() * 4))];
        int n = 0;
        try (InputStream in = KafkaClientInternals.decompress(codec, compressed)) {
            while (true) {
                if (n == out.length) {
                    if (n >= limit) {
                        if (in.read() < 0) {
                            break;
                        }
                        throw new TierlogException(ErrorType.REQUEST_TOO_LARGE, BODY + ": " + where + ": its "
                                + CODECS[codec] + "-compressed records decompress to more than the "
                                + MAX_DECOMPRESSED_BYTES + " bytes one request may hold",
                                Map.of("field", BODY, "maxDecompressedBytes", MAX_DECOMPRESSED_BYTES));
                    }
                    out = Arrays.copyOf(out, (int) Math.min(limit, 2L * out.length));
                }
                int r = in.read(out, n, out.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (TierlogException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            // Codecs report a corrupt stream in their own ways (IOException, KafkaException, the natives' exceptions).
            throw bad(where + ": its " + CODECS[codec] + "-compressed records do not decompress (" + e + ")");
        }
        return ByteBuffer.wrap(out, 0, n).slice();
    }

    /**
     * The record walk: parses every record of a batch without allocating (varints read in place), checking the
     * structure, dense offsets, timestamps and payload sizes. Counts records across the batches of one body.
     */
    private static final class Walk {
        private static final int KEY = 0;
        private static final int VALUE = 1;
        private static final int HEADER_NAME = 2;
        private static final int HEADER_VALUE = 3;
        private final int maxMessageBytes;
        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        int records;
        boolean missingTimestamp;
        private ByteBuffer b;
        private int p;
        private int end;
        /** The batch being walked, for error details; the record's part is built only when an error is raised. */
        private String batchWhere;
        private int index;

        Walk(int maxMessageBytes) {
            this.maxMessageBytes = maxMessageBytes;
        }

        /**
         * Walks the records of {@code batch} (whose header holds their count and timestamps), which lie in
         * {@code recordBytes} from {@code start} to its limit: the batch itself past its header, or its decompressed
         * records. Returns the bytes walked.
         */
        int records(ByteBuffer batch, ByteBuffer recordBytes, int start, String batchWhere) {
            b = recordBytes;
            this.batchWhere = batchWhere;
            end = recordBytes.limit();
            p = start;
            int count = batch.getInt(RecordBatchCodec.RECORD_COUNT_OFFSET);
            long baseTimestamp = batch.getLong(RecordBatchCodec.BASE_TIMESTAMP_OFFSET);
            long maxTimestamp = RecordBatch.NO_TIMESTAMP;
            for (int i = 0; i < count; i++) {
                index = i;
                if (p >= end) {
                    throw bad(where() + ": the batch ends after " + i + " of its " + count + " records");
                }
                int length = varint();
                if (length <= 0 || length > end - p) {
                    throw bad(where() + ": length " + length + " runs past the batch (" + (end - p) + " bytes left)");
                }
                int recordEnd = p + length;
                byte attributes = b.get(p++);
                if (attributes != 0) {
                    throw bad(where() + ": record attributes " + attributes + "; they are unused in v2 and must be 0");
                }
                long timestamp = timestamp(baseTimestamp, varlong());
                maxTimestamp = Math.max(maxTimestamp, timestamp);
                int offsetDelta = varint();
                if (offsetDelta != i) {
                    throw bad(where() + ": offsetDelta " + offsetDelta + " where " + i
                            + " was expected; offsets must be dense");
                }
                long payload = bytes(KEY, -1, recordEnd) + bytes(VALUE, -1, recordEnd);
                int headers = varint();
                if (headers < 0) {
                    throw bad(where() + ": header count " + headers);
                }
                for (int h = 0; h < headers; h++) {
                    int name = bytes(HEADER_NAME, h, recordEnd);
                    requireUtf8(p - name, name, h);
                    payload += name + bytes(HEADER_VALUE, h, recordEnd);
                }
                if (p != recordEnd) {
                    throw bad(where() + ": length " + length + " but its fields take " + (p - (recordEnd - length))
                            + " bytes");
                }
                if (payload > maxMessageBytes) {
                    String field = "records[" + records + "]";
                    throw new TierlogException(ErrorType.RECORD_TOO_LARGE, field + " (" + where() + ") is "
                            + payload + " bytes; the topic's max.message.bytes is " + maxMessageBytes,
                            Map.of("field", field, "maxMessageBytes", maxMessageBytes));
                }
                records++;
            }
            if (p != end) {
                throw bad(batchWhere + ": " + (end - p) + " bytes after its " + count + " records");
            }
            long headerMax = batch.getLong(RecordBatchCodec.MAX_TIMESTAMP_OFFSET);
            if (headerMax != maxTimestamp) {
                throw bad(batchWhere + ": maxTimestamp " + headerMax + " but the largest record timestamp is "
                        + maxTimestamp);
            }
            return end - start;
        }

        private long timestamp(long baseTimestamp, long delta) {
            long timestamp;
            try {
                timestamp = Math.addExact(baseTimestamp, delta);
            } catch (ArithmeticException e) {
                throw bad(where() + ": baseTimestamp " + baseTimestamp + " + timestampDelta " + delta + " overflows");
            }
            if (timestamp == RecordBatch.NO_TIMESTAMP) {
                missingTimestamp = true;
            } else if (timestamp < 0) {
                throw bad(where() + ": timestamp " + timestamp + "; expected >= 0, or -1 for the append time");
            }
            return timestamp;
        }

        private String where() {
            return batchWhere + ", record " + index;
        }

        /**
         * Skips a length-prefixed byte field ({@code header} is the header index for header fields, else unused);
         * returns its length (0 for null). Only a header name may not be null.
         */
        private int bytes(int field, int header, int recordEnd) {
            int length = varint();
            if (length < (field == HEADER_NAME ? 0 : -1)) {
                throw bad(where() + ": " + fieldName(field, header) + " length " + length
                        + (field == HEADER_NAME ? "; it must not be null" : ""));
            }
            if (length > recordEnd - p) {
                throw bad(where() + ": " + fieldName(field, header) + " of " + length + " bytes runs past the record");
            }
            if (length < 0) {
                return 0;
            }
            p += length;
            return length;
        }

        private static String fieldName(int field, int header) {
            return switch (field) {
                case KEY -> "key";
                case VALUE -> "value";
                case HEADER_NAME -> "header " + header + " name";
                default -> "header " + header + " value";
            };
        }

        /** Header names are Strings to every reader; bytes that are not UTF-8 would not read back as sent. */
        private void requireUtf8(int start, int length, int header) {
            int i = start;
            while (i < start + length && b.get(i) >= 0) {
                i++;
            }
            if (i == start + length) {
                return; // ASCII, the usual case: no decoder, no allocation
            }
            try {
                utf8.reset().decode(b.slice(start, length));
            } catch (CharacterCodingException e) {
                throw bad(where() + ": header " + header + " name is not valid UTF-8");
            }
        }

        /** Kafka's zig-zag varint, at most 5 bytes. */
        private int varint() {
            int raw = 0;
            for (int shift = 0; shift < 35; shift += 7) {
                if (p >= end) {
                    throw bad(where() + ": varint runs past the batch");
                }
                byte x = b.get(p++);
                raw |= (x & 0x7f) << shift;
                if (x >= 0) {
                    return (raw >>> 1) ^ -(raw & 1);
                }
            }
            throw bad(where() + ": varint longer than 5 bytes");
        }

        /** Kafka's zig-zag varlong, at most 10 bytes. */
        private long varlong() {
            long raw = 0;
            for (int shift = 0; shift < 70; shift += 7) {
                if (p >= end) {
                    throw bad(where() + ": varlong runs past the batch");
                }
                byte x = b.get(p++);
                raw |= (long) (x & 0x7f) << shift;
                if (x >= 0) {
                    return (raw >>> 1) ^ -(raw & 1);
                }
            }
            throw bad(where() + ": varlong longer than 10 bytes");
        }
    }

    /**
     * Re-encodes validated batches as one batch with the given producer fields, transactional bit and codec, replacing -1 timestamps
     * with {@code nowMs}. Keys, values and headers are passed to kafka-clients' builder as views, not copies.
     * {@code decompressed} is what the compressed batches among them decompressed to: the uncompressed size the
     * buffer is sized for (the builder grows it, should a codec's output ever be larger).
     */
    private static ByteBuffer rebuild(List<ByteBuffer> batches, int records, int decompressed, CompressionType codec,
                                      ProducerIdentity producer, boolean transactional, long nowMs) {
        long bound = RecordBatchCodec.HEADER_SIZE + (long) MAX_REENCODE_GROWTH_PER_RECORD * records + decompressed;
        for (ByteBuffer b : batches) {
            bound += b.remaining();
        }
        if (bound > Integer.MAX_VALUE - 8) {
            throw bad(records + " records are too large to merge into one batch");
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) bound);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2,
                Compression.of(codec).build(), TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP,
                producer.producerId(), producer.epoch(), producer.sequence(), transactional, false,
                RecordBatchCodec.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (ByteBuffer batch : batches) {
            for (org.apache.kafka.common.record.internal.Record r : RecordBatchCodec.asBatch(batch)) {
                long timestamp = r.timestamp() == RecordBatch.NO_TIMESTAMP ? nowMs : r.timestamp();
                builder.append(timestamp, r.key(), r.value(), r.headers());
            }
        }
        return builder.build().buffer();
    }

    /** A {@code bad-request} naming the body; {@code detail} says where in it and what is wrong. */
    private static TierlogException bad(String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, BODY + ": " + detail, Map.of("field", BODY));
    }
}
