package io.tierlog.ingest;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The produce path's settings, with docs/api.md's keys: {@code tierlog.data-dir}, {@code tierlog.fsync},
 * {@code tierlog.fsync-interval} and {@code tierlog.max-request-bytes} (default 8 MiB); and
 * {@code tierlog.producer-id-expiration} (default one day, Kafka's {@code producer.id.expiration.ms}): how long an
 * idempotent producer is remembered after its last request.
 */
public record IngestConfig(Path dataDir, FsyncPolicy fsync, Duration fsyncInterval, int maxRequestBytes,
                           Duration producerIdExpiration) {
    public static final int DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;
    public static final Duration DEFAULT_FSYNC_INTERVAL = Duration.ofSeconds(1);

    public IngestConfig {
        if (maxRequestBytes < 1) {
            throw new IllegalArgumentException("tierlog.max-request-bytes must be >= 1: " + maxRequestBytes);
        }
        if (producerIdExpiration.isNegative() || producerIdExpiration.isZero()) {
            throw new IllegalArgumentException("tierlog.producer-id-expiration must be positive: " + producerIdExpiration);
        }
    }

    /** With the default producer id expiration. */
    public IngestConfig(Path dataDir, FsyncPolicy fsync, Duration fsyncInterval, int maxRequestBytes) {
        this(dataDir, fsync, fsyncInterval, maxRequestBytes, PartitionWriter.DEFAULT_PRODUCER_ID_EXPIRATION);
    }

    /**
     * Reads the environment-variable form of the keys ({@code TIERLOG_DATA_DIR}, {@code TIERLOG_FSYNC},
     * {@code TIERLOG_FSYNC_INTERVAL_MS}, {@code TIERLOG_MAX_REQUEST_BYTES},
     * {@code TIERLOG_PRODUCER_ID_EXPIRATION_MS}), as the Lambda function gets them.
     */
    public static IngestConfig fromEnvironment(Map<String, String> env) {
        return new IngestConfig(
                Path.of(env.getOrDefault("TIERLOG_DATA_DIR", "./data/hot")),
                FsyncPolicy.parse(env.getOrDefault("TIERLOG_FSYNC", "always")),
                Duration.ofMillis(Long.parseLong(env.getOrDefault("TIERLOG_FSYNC_INTERVAL_MS",
                        String.valueOf(DEFAULT_FSYNC_INTERVAL.toMillis())))),
                Integer.parseInt(env.getOrDefault("TIERLOG_MAX_REQUEST_BYTES", String.valueOf(DEFAULT_MAX_REQUEST_BYTES))),
                Duration.ofMillis(Long.parseLong(env.getOrDefault("TIERLOG_PRODUCER_ID_EXPIRATION_MS",
                        String.valueOf(PartitionWriter.DEFAULT_PRODUCER_ID_EXPIRATION.toMillis())))));
    }
}
