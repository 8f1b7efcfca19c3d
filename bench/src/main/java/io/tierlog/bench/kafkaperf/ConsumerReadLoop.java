package io.tierlog.bench.kafkaperf;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A kafka-clients 4.4.0 consumer in this JVM reading a whole topic from offset 0, timed from its first poll to its
 * last record: ConsumerPerformance's fetch phase without a fresh client JVM, whose JIT and start otherwise take most
 * of the run's CPU on a small machine (docs/BENCHMARKS.md, "What the consume rows measure"). Partitions are assigned,
 * not joined, so no group protocol is in the time; each run is a new consumer and a new connection.
 */
final class ConsumerReadLoop {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration GIVE_UP = Duration.ofSeconds(60);

    /** One read of the topic: records, bytes (keys and values) and the time from first poll to last record. */
    record Result(long records, long bytes, long nanos) {
        double recordsPerSec() {
            return records * 1e9 / nanos;
        }

        String line() {
            return String.format("%,d records, %,d bytes in %.1f ms: %,.0f records/s", records, bytes, nanos / 1e6,
                    recordsPerSec());
        }
    }

    private ConsumerReadLoop() {
    }

    /** Reads {@code records} records of {@code topic} ({@code partitions} partitions) from {@code bootstrap}. */
    static Result run(String bootstrap, String topic, int partitions, long records) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "tierlog-bench-consumer-read");
        List<TopicPartition> all = new ArrayList<>(partitions);
        for (int i = 0; i < partitions; i++) {
            all.add(new TopicPartition(topic, i));
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(all);
            consumer.seekToBeginning(all);
            long read = 0;
            long bytes = 0;
            long start = System.nanoTime();
            long last = start;
            while (read < records) {
                if (System.nanoTime() - last > GIVE_UP.toNanos()) {
                    throw new IllegalStateException(bootstrap + ": no record for " + GIVE_UP + " after " + read
                            + " of " + records);
                }
                for (var r : consumer.poll(POLL)) {
                    read++;
                    bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                    last = System.nanoTime();
                }
            }
            return new Result(read, bytes, last - start);
        }
    }
}
