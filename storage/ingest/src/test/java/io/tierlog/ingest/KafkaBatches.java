package io.tierlog.ingest;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * Request bodies as a Kafka producer builds them: batches from kafka-clients' own {@link MemoryRecordsBuilder}, and
 * deliberately damaged variants (a header field changed, then the CRC32C recomputed so that only the intended check
 * can fail).
 */
final class KafkaBatches {
    static final long T0 = 1_700_000_000_000L;
    static final int CAPACITY = 1 << 20;

    private KafkaBatches() {
    }

    /** A builder like a Kafka producer's: baseOffset 0, CreateTime, leader epoch 0 (a producer does not know it). */
    static MemoryRecordsBuilder builder(Compression compression, TimestampType type, long producerId, short epoch,
                                        int sequence, boolean transactional) {
        ByteBuffer buffer = ByteBuffer.allocate(CAPACITY);
        return new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, compression, type, 0L,
                type == TimestampType.LOG_APPEND_TIME ? T0 : RecordBatch.NO_TIMESTAMP, producerId, epoch, sequence,
                transactional, false, 0, CAPACITY);
    }

    static MemoryRecordsBuilder builder() {
        return builder(Compression.NONE, TimestampType.CREATE_TIME, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false);
    }

    static MemoryRecordsBuilder idempotent(long producerId, int epoch, int sequence) {
        return builder(Compression.NONE, TimestampType.CREATE_TIME, producerId, (short) epoch, sequence, false);
    }

    /** One batch of unkeyed records with the given values and timestamps T0, T0+1, ... */
    static ByteBuffer values(String... values) {
        return values(builder(), values);
    }

    static ByteBuffer values(MemoryRecordsBuilder b, String... values) {
        for (int i = 0; i < values.length; i++) {
            b.append(T0 + i, null, bytes(values[i]));
        }
        return b.build().buffer();
    }

    static ByteBuffer concat(ByteBuffer... parts) {
        int size = 0;
        for (ByteBuffer p : parts) {
            size += p.remaining();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (ByteBuffer p : parts) {
            out.put(p.duplicate());
        }
        return out.flip();
    }

    /** A copy of {@code batch} changed by {@code patch} (absolute puts), with its CRC32C recomputed. */
    static ByteBuffer patched(ByteBuffer batch, Consumer<ByteBuffer> patch) {
        ByteBuffer copy = concat(batch);
        patch.accept(copy);
        CRC32C crc = new CRC32C();
        crc.update(copy.duplicate().position(21));
        copy.putInt(17, (int) crc.getValue());
        return copy;
    }

    static Header header(String name, String value) {
        return new RecordHeader(name, value == null ? null : bytes(value));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
