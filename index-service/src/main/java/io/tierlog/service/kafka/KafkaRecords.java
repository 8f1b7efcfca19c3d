package io.tierlog.service.kafka;

import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;

import java.nio.ByteBuffer;

/**
 * The listener's one door into kafka-clients' {@code record.internal} package, and why it needs one: since Kafka 4
 * every record class is internal, yet the public Produce and Fetch message classes carry their record batches as
 * {@code BaseRecords}, and nothing public wraps or unwraps a buffer of batches. The rest of the listener handles
 * plain {@link ByteBuffer}s; a kafka-clients upgrade that moves these classes breaks this file only. Stateless.
 */
final class KafkaRecords {
    private KafkaRecords() {
    }

    /** The records of a partition answered with no batches. */
    static BaseRecords none() {
        return MemoryRecords.EMPTY;
    }

    /** Stored batches, back to back, as a Fetch response's records (no copy). */
    static BaseRecords of(ByteBuffer batches) {
        return MemoryRecords.readableRecords(batches);
    }

    /** A Produce request partition's batches as a buffer of their own (a view, no copy), or null if it has none. */
    static ByteBuffer batches(BaseRecords records) {
        return records instanceof MemoryRecords m && m.sizeInBytes() > 0 ? m.buffer().duplicate() : null;
    }
}
