package io.tierlog.ingest.function.harness;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Binary produce bodies ({@code application/vnd.tierlog.record-batches}) as a Kafka producer builds them: one
 * RecordBatch v2 (uncompressed unless asked) from kafka-clients' own {@link MemoryRecordsBuilder}, base offset 0, CreateTime,
 * partition leader epoch 0 (a producer does not know it).
 */
public final class RecordBatchBodies {
    /** The batch header's producer fields; {@link #NONE} for a non-idempotent producer. */
    public record Producer(long id, short epoch, int sequence) {
        public static final Producer NONE = new Producer(RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE);
    }

    private RecordBatchBodies() {
    }

    /** One batch of records keyed {@code key} (null for none) with {@code values}, timestamped t0, t0+1, ... */
    public static byte[] batch(Producer producer, long t0, String key, String... values) {
        return batch(Compression.NONE, producer, t0, key, values);
    }

    /** {@link #batch(Producer, long, String, String...)} compressed with {@code compression}. */
    public static byte[] batch(Compression compression, Producer producer, long t0, String key, String... values) {
        int capacity = 1024;
        for (String v : values) {
            capacity += 64 + (v == null ? 0 : v.length() * 3) + (key == null ? 0 : key.length() * 3);
        }
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(ByteBuffer.allocate(capacity), RecordBatch.MAGIC_VALUE_V2,
                compression, TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producer.id(),
                producer.epoch(), producer.sequence(), false, false, 0, capacity);
        for (int i = 0; i < values.length; i++) {
            b.append(t0 + i, bytes(key), bytes(values[i]));
        }
        ByteBuffer built = b.build().buffer();
        byte[] out = new byte[built.remaining()];
        built.get(out);
        return out;
    }

    /**
     * A copy of {@code batch} with one bit of its last record's value flipped (the byte before the record's
     * header count, for a batch built here whose last value is non-empty) and the CRC left as it was: damage in
     * transit that only the CRC32C can reveal.
     */
    public static byte[] withStaleCrc(byte[] batch) {
        byte[] copy = batch.clone();
        copy[copy.length - 2] ^= 0x01;
        return copy;
    }

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
