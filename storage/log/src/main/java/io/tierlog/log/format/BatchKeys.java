package io.tierlog.log.format;

import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;

/**
 * The record keys of one validated batch, for indexes that map a key to its latest offset. Control batches (Kafka's
 * transaction markers) hold no data records and are skipped. Stateless and thread-safe.
 */
public final class BatchKeys {
    /** Receives each keyed record: its key (a view, valid during the call), offset and whether it is a tombstone. */
    @FunctionalInterface
    public interface KeyVisitor {
        void visit(ByteBuffer key, long offset, boolean tombstone);
    }

    private BatchKeys() {
    }

    /** Visits the keyed records of the complete, validated batch in {@code batch} (position to limit), in order. */
    public static void forEach(ByteBuffer batch, KeyVisitor visitor) {
        RecordBatch b = RecordBatchCodec.asBatch(batch);
        if (b.isControlBatch()) {
            return;
        }
        for (Record r : b) {
            if (r.hasKey()) {
                visitor.visit(r.key(), r.offset(), !r.hasValue());
            }
        }
    }
}
