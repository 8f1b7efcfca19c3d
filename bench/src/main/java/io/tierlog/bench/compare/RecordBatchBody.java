package io.tierlog.bench.compare;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;

import java.nio.ByteBuffer;

/**
 * The body of a binary Tierlog produce request ({@code Content-Type: application/vnd.tierlog.record-batches}):
 * one uncompressed Kafka RecordBatch v2 built with kafka-clients' {@link MemoryRecordsBuilder}, as Kafka's
 * producer builds its batches. Records are unkeyed, without headers, valued with the payload's raw bytes (the same
 * bytes Kafka is sent and the JSON bodies carry), CreateTime {@code timestampMs} on every record; base offset 0
 * (the service stamps the real one), no producer id (-1: not idempotent), so the service appends it as sent.
 *
 * <p>Stateless and thread-safe; each call allocates its own buffer. One of bench's two doors to kafka-clients'
 * {@code record.internal} (with {@code batches.RecordBatchDecoder}): Kafka 4 has no public API that builds or reads
 * a RecordBatch v2, and the benchmark must build exactly what Kafka's producer sends.
 */
public final class RecordBatchBody {
    /** The v2 batch header (61 bytes) rounded up. */
    private static final int BATCH_OVERHEAD = 64;
    /** Per record, at most: length, attributes, timestamp delta, offset delta, key and value lengths, headers count. */
    private static final int RECORD_OVERHEAD = 24;

    private RecordBatchBody() {
    }

    /**
     * {@code count} records, the payload's values from index {@code first}. Returns a heap buffer positioned at the
     * batch's first byte, its remaining bytes exactly the batch (see {@link #bytes} for a copy).
     */
    public static ByteBuffer build(Payload payload, long first, int count, long timestampMs) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, was " + count);
        }
        ByteBuffer buffer = ByteBuffer.allocate(BATCH_OVERHEAD + count * (payload.valueBytes() + RECORD_OVERHEAD));
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.NONE, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < count; i++) {
            builder.append(timestampMs, null, payload.bytes(first + i));
        }
        // The builder's own buffer if the estimate held (it grows into a new heap buffer otherwise).
        return builder.build().buffer();
    }

    /** As {@link #build}, copied into an array of exactly the batch's bytes. */
    static byte[] bytes(Payload payload, long first, int count, long timestampMs) {
        ByteBuffer batch = build(payload, first, count, timestampMs);
        byte[] bytes = new byte[batch.remaining()];
        batch.get(bytes);
        return bytes;
    }
}
