package io.tierlog.log.format;

import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The record keys of one validated batch, for indexes that map a key to its latest offset. Control batches (Kafka's
 * transaction markers) hold no data records and are skipped. Stateless and thread-safe.
 */
public final class BatchKeys {
    private static final int COMPRESSION_MASK = 0x07;

    /** Receives each keyed record: its key (a view, valid during the call), offset and whether it is a tombstone. */
    @FunctionalInterface
    public interface KeyVisitor {
        void visit(ByteBuffer key, long offset, boolean tombstone);
    }

    private BatchKeys() {
    }

    /** Whether the data batch in {@code batch} (position to limit) is compressed; a control batch is not. */
    public static boolean compressed(ByteBuffer batch) {
        int attributes = batch.getShort(batch.position() + RecordBatchCodec.ATTRIBUTES_OFFSET);
        return (attributes & RecordBatchCodec.CONTROL_FLAG) == 0 && (attributes & COMPRESSION_MASK) != 0;
    }

    /** Visits the keyed records of the complete, validated batch in {@code batch} (position to limit), in order. */
    public static void forEach(ByteBuffer batch, KeyVisitor visitor) {
        ByteBuffer b = batch.slice().order(ByteOrder.BIG_ENDIAN);
        int attributes = b.getShort(RecordBatchCodec.ATTRIBUTES_OFFSET);
        if ((attributes & RecordBatchCodec.CONTROL_FLAG) != 0) {
            return;
        }
        if ((attributes & COMPRESSION_MASK) != 0) {
            forEachDecompressed(RecordBatchCodec.asBatch(batch), visitor);
            return;
        }
        // Uncompressed: the index is told every append, so read only each record's key and value length and jump to
        // its end, where kafka-clients' iterator would build a record with its value and headers (most records have
        // no key at all).
        long baseOffset = b.getLong(0);
        int count = b.getInt(RecordBatchCodec.RECORD_COUNT_OFFSET);
        ByteBuffer key = b.duplicate();
        b.position(RecordBatchCodec.HEADER_SIZE);
        for (int i = 0; i < count; i++) {
            int length = KafkaClientInternals.readVarint(b);
            int end = b.position() + length;
            b.position(b.position() + 1); // attributes
            KafkaClientInternals.readVarlong(b); // timestamp delta
            int offsetDelta = KafkaClientInternals.readVarint(b);
            int keyLength = KafkaClientInternals.readVarint(b);
            if (keyLength >= 0) {
                int keyStart = b.position();
                b.position(keyStart + keyLength);
                boolean tombstone = KafkaClientInternals.readVarint(b) < 0;
                key.limit(keyStart + keyLength).position(keyStart);
                visitor.visit(key, baseOffset + offsetDelta, tombstone);
                key.clear();
            }
            b.position(end);
        }
    }

    private static void forEachDecompressed(RecordBatch batch, KeyVisitor visitor) {
        for (Record r : batch) {
            if (r.hasKey()) {
                visitor.visit(r.key(), r.offset(), !r.hasValue());
            }
        }
    }
}
