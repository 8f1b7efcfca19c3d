package io.tierlog.log.format;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Kafka's RecordBatch v2 (magic 2) byte format, through kafka-clients' own record classes.
 *
 * <pre>
 * offset  size  field
 *      0     8  baseOffset
 *      8     4  length            (bytes after this field)
 *     12     4  partitionLeaderEpoch
 *     16     1  magic = 2
 *     17     4  crc               CRC32C of bytes 21..end
 *     21     2  attributes        compression, timestamp type, transactional, control
 *     23     4  lastOffsetDelta
 *     27     8  baseTimestamp
 *     35     8  maxTimestamp
 *     43     8  producerId
 *     51     2  producerEpoch
 *     53     4  baseSequence
 *     57     4  recordCount
 *     61     …  records (varint-encoded, with headers)
 * </pre>
 * Our own batches (the JSON produce path) are written uncompressed with CreateTime timestamps; a client's record
 * batches may arrive compressed ({@link ClientBatchValidator}) and are stored so, and {@link #decode} decompresses
 * them through kafka-clients' codecs. Stateless and thread-safe.
 *
 * <p>Public on purpose, though segments are this module's business: the bytes of a batch are the same wherever they
 * lie, and other modules decode them where the hot log is not involved: the cold tier walks batches fetched from the
 * object store ({@code ColdReader}, {@code ColdBatchDecoder}), the index reads a batch's records for timestamp
 * lookups ({@code HotIndexer}), and other modules' tests build and check batches with it.
 */
public final class RecordBatchCodec {
    public static final int LOG_OVERHEAD = 12;
    public static final int HEADER_SIZE = DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
    public static final int LENGTH_OFFSET = 8;
    public static final int MAGIC_OFFSET = 16;
    public static final int CRC_OFFSET = 17;
    /** The CRC32C covers the batch from the attributes field to its end. */
    public static final int CRC_START_OFFSET = 21;
    public static final byte MAGIC = RecordBatch.MAGIC_VALUE_V2;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    public static final int ATTRIBUTES_OFFSET = 21;
    public static final int LAST_OFFSET_DELTA_OFFSET = 23;
    public static final int BASE_TIMESTAMP_OFFSET = 27;
    public static final int MAX_TIMESTAMP_OFFSET = 35;
    public static final int PRODUCER_ID_OFFSET = 43;
    public static final int PRODUCER_EPOCH_OFFSET = 51;
    public static final int BASE_SEQUENCE_OFFSET = 53;
    public static final int RECORD_COUNT_OFFSET = 57;
    /** Attribute bit of a batch that belongs to a transaction. */
    public static final int TRANSACTIONAL_FLAG = 0x10;
    /** Attribute bit of a control batch (a transaction marker; it holds no data records). */
    public static final int CONTROL_FLAG = 0x20;
    /** Leader epoch is a replication concept we do not have; Kafka writes -1 ("unknown") for it too. */
    public static final int NO_PARTITION_LEADER_EPOCH = -1;

    private RecordBatchCodec() {
    }

    /** Encodes {@code records} as one batch whose first record gets {@code baseOffset}. */
    public static ByteBuffer encode(long baseOffset, List<AppendRecord> records, ProducerIdentity producer) {
        return encode(baseOffset, records, producer, ByteBuffer.allocate(sizeBound(records)));
    }

    /**
     * A size that the encoded batch of {@code records} does not exceed: the batch header plus, per record, its
     * payload and the largest varint overheads (length, attributes, timestamp and offset deltas, key and value
     * lengths, header count, and two lengths per header). Sizing the buffer by it means no regrowth and no copy.
     */
    public static int sizeBound(List<AppendRecord> records) {
        long bound = HEADER_SIZE;
        for (AppendRecord r : records) {
            bound += r.payloadBytes() + 5 + 1 + 10 + 5 + 5 + 5 + 5 + 10L * r.headers().size();
        }
        return (int) Math.min(bound, Integer.MAX_VALUE - 8);
    }

    /**
     * Encodes into {@code buffer} from its position 0 (its content is overwritten), so a caller that appends batch
     * after batch can reuse one buffer instead of allocating (and zeroing) one per batch; if {@code buffer} is
     * smaller than {@link #sizeBound} the encoder grows into a new one. The returned buffer (position 0, limit
     * the batch size) may share {@code buffer}'s bytes: it is valid until {@code buffer} is reused.
     */
    public static ByteBuffer encode(long baseOffset, List<AppendRecord> records, ProducerIdentity producer,
                                    ByteBuffer buffer) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        buffer.clear();
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, baseOffset, RecordBatch.NO_TIMESTAMP, producer.producerId(),
                producer.epoch(), producer.sequence(), false, false, NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (AppendRecord r : records) {
            org.apache.kafka.common.header.Header[] headers = new org.apache.kafka.common.header.Header[r.headers().size()];
            for (int i = 0; i < headers.length; i++) {
                Header h = r.headers().get(i);
                headers[i] = new KafkaHeader(h.name(), h.value());
            }
            builder.append(r.timestamp(), r.key(), r.value(), headers);
        }
        return builder.build().buffer();
    }

    /**
     * The batch size announced by the header at {@code buf}'s position (log overhead included), or -1 when fewer
     * than 12 bytes are available. Does not move the buffer.
     */
    public static long announcedSize(ByteBuffer buf) {
        if (buf.remaining() < LOG_OVERHEAD) {
            return -1;
        }
        return LOG_OVERHEAD + (long) buf.getInt(buf.position() + LENGTH_OFFSET);
    }

    /**
     * Validates the complete batch in {@code batch} (position to limit): length, magic and CRC32C.
     *
     * @return null if valid, else the reason
     */
    public static String validate(ByteBuffer batch) {
        int size = batch.remaining();
        if (size < HEADER_SIZE) {
            return "batch of " + size + " bytes is shorter than the " + HEADER_SIZE + "-byte header";
        }
        byte magic = batch.get(batch.position() + MAGIC_OFFSET);
        if (magic != RecordBatch.MAGIC_VALUE_V2) {
            return "magic " + magic + " is not 2";
        }
        // DefaultRecordBatch#isValid's check, without building kafka-clients' batch view and iterator for each batch.
        long stored = Integer.toUnsignedLong(batch.getInt(batch.position() + CRC_OFFSET));
        CRC32C crc = new CRC32C();
        crc.update(batch.duplicate().position(batch.position() + CRC_START_OFFSET));
        if (crc.getValue() != stored) {
            return "CRC32C mismatch (stored " + stored + ")";
        }
        return null;
    }

    /**
     * Turns the batch at {@code batch}'s position into a LogAppendTime batch appended at {@code appendTimeMs}, in
     * place: the timestamp-type attribute and maxTimestamp change and the CRC is recomputed; the records keep their
     * bytes and read as {@code appendTimeMs} (Kafka's rule, which its broker applies the same way).
     */
    public static void stampLogAppendTime(ByteBuffer batch, long appendTimeMs) {
        MemoryRecords.readableRecords(batch.slice()).batches().iterator().next()
                .setMaxTimestamp(TimestampType.LOG_APPEND_TIME, appendTimeMs);
    }

    /** Reads the header of a complete, validated batch. */
    public static BatchInfo info(long segmentBase, long position, ByteBuffer batch) {
        ByteBuffer b = batch.duplicate().order(ByteOrder.BIG_ENDIAN);
        int p = b.position();
        long baseOffset = b.getLong(p);
        short attributes = b.getShort(p + ATTRIBUTES_OFFSET);
        return new BatchInfo(segmentBase, position, b.remaining(), baseOffset,
                baseOffset + b.getInt(p + LAST_OFFSET_DELTA_OFFSET), b.getLong(p + MAX_TIMESTAMP_OFFSET),
                b.getLong(p + PRODUCER_ID_OFFSET), b.getShort(p + PRODUCER_EPOCH_OFFSET),
                b.getInt(p + BASE_SEQUENCE_OFFSET), (attributes & TRANSACTIONAL_FLAG) != 0,
                (attributes & CONTROL_FLAG) != 0);
    }

    /** Whether the batch at {@code batch}'s position is a control batch (a transaction marker); header only. */
    public static boolean isControl(ByteBuffer batch) {
        return (batch.getShort(batch.position() + ATTRIBUTES_OFFSET) & CONTROL_FLAG) != 0;
    }

    /**
     * Decodes the records of a validated batch whose offsets are {@code >= fromOffset}, at most {@code limit}
     * of them, appending to {@code out}. Returns how many were added. A control batch (a transaction marker) holds
     * no data records: none are decoded from it, as Kafka's consumers skip it.
     */
    public static int decode(ByteBuffer batch, long fromOffset, int limit, List<LogRecord> out) {
        RecordBatch b = asBatch(batch);
        if (b.isControlBatch()) {
            return 0;
        }
        int added = 0;
        for (Record r : b) {
            if (added >= limit) {
                break;
            }
            if (r.offset() < fromOffset) {
                continue;
            }
            List<Header> headers = new ArrayList<>(r.headers().length);
            for (org.apache.kafka.common.header.Header h : r.headers()) {
                headers.add(new Header(h.key(), h.value()));
            }
            out.add(new LogRecord(r.offset(), r.timestamp(), bytes(r.key()), bytes(r.value()), headers));
            added++;
        }
        return added;
    }

    /** One complete batch as kafka-clients' view of it (no copy). */
    static RecordBatch asBatch(ByteBuffer batch) {
        return MemoryRecords.readableRecords(batch.slice()).batches().iterator().next();
    }

    private static byte[] bytes(ByteBuffer buf) {
        if (buf == null) {
            return null;
        }
        byte[] out = new byte[buf.remaining()];
        buf.duplicate().get(out);
        return out;
    }

    /** A record header in kafka-clients' public {@code Header} form (its own RecordHeader is in an internals package). */
    private record KafkaHeader(String key, byte[] value) implements org.apache.kafka.common.header.Header {
    }
}
