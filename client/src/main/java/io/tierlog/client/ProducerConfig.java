package io.tierlog.client;

import java.time.Duration;

/**
 * The producer's settings; immutable, each {@code withX} returns a copy. Defaults in {@link #defaults()}; meanings
 * in docs/client.md.
 *
 * @param linger          how long a partition's open batch waits for more records before it is sent (Kafka's
 *                        {@code linger.ms}); 0: send as soon as the partition has no request in flight
 * @param batchBytes      a batch is sent once its records hold this many bytes (Kafka's {@code batch.size}); at
 *                        most the service's 8 MiB request limit
 * @param bufferBytes     records accepted by {@code send} and not yet acknowledged, at most (Kafka's
 *                        {@code buffer.memory})
 * @param whenFull        what {@code send} does when the buffer is full
 * @param maxBlock        how long a blocking {@code send} waits for buffer space or a topic's partition count
 * @param compression     codec of each batch's records
 * @param idempotent      number batches per partition so that retries never append twice (the default)
 * @param producerId      the idempotent producer id; -1 (the default): a random one per {@link Producer}, so that
 *                        one config can make many producers. Two live producers must never share an id: the
 *                        service would take one's batches for retries of the other's
 * @param deliveryTimeout how long a batch may take from its first record to its acknowledgement, retries included
 * @param requestTimeout  how long one produce request may take
 * @param backoff         the wait between retries (at least the service's {@code Retry-After})
 * @param maxInFlight     produce requests of this producer awaiting their answer, all partitions together, at most
 *                        (Kafka's {@code max.in.flight.requests.per.connection}: the service is the one broker; default
 *                        5)
 * @param maxInFlightPerPartition produce requests of one partition awaiting their answer, at most (1..5, default 1).
 *                        Above 1 a partition's batches travel on separate HTTP/1.1 connections and may reach the
 *                        service out of order; an idempotent producer then resends the refused ones (order and
 *                        exactly-once hold at any value, see {@link Producer}), which costs more than it gains when
 *                        there are other partitions to send to (docs/adr/0020-producer-in-flight-per-partition.md)
 */
public record ProducerConfig(Duration linger, int batchBytes, long bufferBytes, WhenFull whenFull, Duration maxBlock,
                             Compression compression, boolean idempotent, long producerId, Duration deliveryTimeout,
                             Duration requestTimeout, Backoff backoff, int maxInFlight,
                             int maxInFlightPerPartition) {
    /** What {@code send} does when {@code bufferBytes} are waiting: wait (up to {@code maxBlock}) or throw. */
    public enum WhenFull { BLOCK, FAIL }

    public static final int MAX_BATCH_BYTES = 8 * 1024 * 1024 - 4096;
    /** The service's memory of a producer's batches per partition (Kafka's 5). */
    public static final int MAX_IN_FLIGHT_PER_PARTITION = 5;
    /** Kafka's default {@code max.in.flight.requests.per.connection}. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 5;
    /** Requests in flight of one producer, at most: each is a connection of its own (HTTP/1.1). */
    public static final int MAX_IN_FLIGHT = 64;

    public ProducerConfig {
        if (batchBytes < 1 || batchBytes > MAX_BATCH_BYTES) {
            throw new IllegalArgumentException("batchBytes must be 1.." + MAX_BATCH_BYTES + ": " + batchBytes);
        }
        if (bufferBytes < batchBytes) {
            throw new IllegalArgumentException("bufferBytes must be at least batchBytes: " + bufferBytes);
        }
        if (maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT) {
            throw new IllegalArgumentException("maxInFlight must be 1.." + MAX_IN_FLIGHT + ": " + maxInFlight);
        }
        if (maxInFlightPerPartition < 1 || maxInFlightPerPartition > MAX_IN_FLIGHT_PER_PARTITION) {
            // The service remembers a producer's last 5 batches per partition: a retry of an older one would be
            // appended again (Kafka refuses more than 5 in flight with idempotence for the same reason).
            throw new IllegalArgumentException("maxInFlightPerPartition must be 1.." + MAX_IN_FLIGHT_PER_PARTITION
                    + ": " + maxInFlightPerPartition);
        }
        if (producerId < -1) {
            throw new IllegalArgumentException("producerId must be >= 0, or -1 for a random one: " + producerId);
        }
    }

    public static ProducerConfig defaults() {
        return new ProducerConfig(Duration.ofMillis(5), 1024 * 1024, 32L * 1024 * 1024, WhenFull.BLOCK,
                Duration.ofSeconds(60), Compression.NONE, true, -1, Duration.ofMinutes(2), Duration.ofSeconds(30),
                new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5)), DEFAULT_MAX_IN_FLIGHT, 1);
    }

    public ProducerConfig withLinger(Duration v) {
        return new ProducerConfig(v, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent, producerId,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withBatchBytes(int v) {
        return new ProducerConfig(linger, v, Math.max(v, bufferBytes), whenFull, maxBlock, compression, idempotent,
                producerId, deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withBuffer(long bytes, WhenFull policy) {
        return new ProducerConfig(linger, batchBytes, bytes, policy, maxBlock, compression, idempotent, producerId,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withMaxBlock(Duration v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, v, compression, idempotent, producerId,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withCompression(Compression v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, v, idempotent, producerId,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withIdempotence(boolean v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, v, producerId,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withProducerId(long v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent, v,
                deliveryTimeout, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withDeliveryTimeout(Duration v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent,
                producerId, v, requestTimeout, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withRequestTimeout(Duration v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent,
                producerId, deliveryTimeout, v, backoff, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withBackoff(Backoff v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent,
                producerId, deliveryTimeout, requestTimeout, v, maxInFlight,
                maxInFlightPerPartition);
    }

    public ProducerConfig withMaxInFlight(int v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent,
                producerId, deliveryTimeout, requestTimeout, backoff, v,
                maxInFlightPerPartition);
    }

    /** Requests of one partition in flight at most; {@code maxInFlight} is raised to it if lower. */
    public ProducerConfig withMaxInFlightPerPartition(int v) {
        return new ProducerConfig(linger, batchBytes, bufferBytes, whenFull, maxBlock, compression, idempotent,
                producerId, deliveryTimeout, requestTimeout, backoff, Math.max(maxInFlight, v), v);
    }
}
