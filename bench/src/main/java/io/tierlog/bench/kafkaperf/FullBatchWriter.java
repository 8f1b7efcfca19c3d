package io.tierlog.bench.kafkaperf;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.Properties;
import java.util.SplittableRandom;

/**
 * Writes a topic whose record batches are the same on every server: {@link #recordsPerBatch} records of random bytes
 * to each partition in turn, then a flush, so that each batch holds exactly the records sent to its partition between
 * two flushes (they fit in one {@code batch.size}; the linger never expires). A producer left to itself cuts batches
 * by timing (its sender drains a partition's unfilled batch whenever a request to the server has room), so the same
 * settings give smaller batches against a server that acknowledges sooner (ADR 0043). Not thread-safe; one call per
 * topic.
 */
final class FullBatchWriter {
    /** Kafka's v2 batch header. */
    static final int BATCH_HEADER = 61;
    /** A record's framing besides its value, at most: length, attributes, deltas, key and value lengths, headers. */
    static final int RECORD_OVERHEAD = 16;

    private FullBatchWriter() {
    }

    /** Records of {@code recordSize} value bytes that fit one batch of {@code batchSize} bytes, at least 1. */
    static int recordsPerBatch(int batchSize, int recordSize) {
        return Math.max(1, (batchSize - BATCH_HEADER) / (recordSize + RECORD_OVERHEAD));
    }

    /** The partition record {@code i} goes to: {@code perBatch} records per partition in turn. */
    static int partitionOf(long i, int perBatch, int partitions) {
        return (int) ((i / perBatch) % partitions);
    }

    /** Writes {@code records} values of {@code recordSize} random bytes to {@code topic}, acknowledged by all. */
    static void write(String bootstrap, String topic, int partitions, long records, int recordSize, int batchSize) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(batchSize));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "600000");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(Math.max(32L << 20, 4L * partitions * batchSize)));
        int perBatch = recordsPerBatch(batchSize, recordSize);
        SplittableRandom random = new SplittableRandom(42);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (long i = 0; i < records; i++) {
                byte[] value = new byte[recordSize];
                random.nextBytes(value);
                producer.send(new ProducerRecord<>(topic, partitionOf(i, perBatch, partitions), null, value));
                if ((i + 1) % ((long) perBatch * partitions) == 0) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }
}
