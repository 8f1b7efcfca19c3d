package io.tierlog.log.format;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteUtils;

import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The log's one door into kafka-clients' {@code internals} packages, which change without notice between releases.
 * Why it needs one: kafka-clients' batch filter and decompressor take a {@code utils.internals.BufferSupplier} in
 * their signatures, and nothing public stands in for it; the record format's zig-zag varints are read with its
 * {@code ByteUtils} rather than a copy of them. (The record classes themselves, {@code record.internal},
 * are Kafka 4's only form of a record batch; the log's {@code format} and {@code compaction} packages use them.)
 * A kafka-clients upgrade that moves BufferSupplier breaks this file only; LayeringTest keeps it so. Stateless.
 */
public final class KafkaClientInternals {
    private KafkaClientInternals() {
    }

    /**
     * {@code in}'s batches filtered into {@code dest} by {@code filter} ({@link MemoryRecords#filterTo}, the filter
     * Kafka's cleaner uses), with no buffer pooling and no size cap.
     */
    public static MemoryRecords.FilterResult filter(MemoryRecords in, MemoryRecords.RecordFilter filter,
                                                    ByteBuffer dest) {
        return in.filterTo(filter, dest, BufferSupplier.NO_CACHING, Integer.MAX_VALUE);
    }

    /** A stream of the v2 records in {@code compressed}, inflated by the batch's codec ({@code codec} attribute bits). */
    static InputStream decompress(int codec, ByteBuffer compressed) {
        return Compression.of(CompressionType.forId(codec)).build()
                .wrapForInput(compressed, RecordBatch.MAGIC_VALUE_V2, BufferSupplier.NO_CACHING);
    }

    /** Kafka's zig-zag varint at {@code buffer}'s position, which moves past it. */
    static int readVarint(ByteBuffer buffer) {
        return ByteUtils.readVarint(buffer);
    }

    /** Kafka's zig-zag varlong at {@code buffer}'s position, which moves past it. */
    static long readVarlong(ByteBuffer buffer) {
        return ByteUtils.readVarlong(buffer);
    }
}
