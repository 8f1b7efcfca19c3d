package io.tierlog.log.format;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The log's one door into kafka-clients' {@code internals} packages, which change without notice between releases.
 * Why it needs one: kafka-clients' batch filter and decompressor take a {@code utils.internals.BufferSupplier} in
 * their signatures, and nothing public stands in for it. (The record classes themselves, {@code record.internal},
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
}
