package io.tierlog.ingest;

import io.tierlog.log.FsyncPolicy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The produce path's settings, with shared/api.md's keys: {@code tierlog.data-dir}, {@code tierlog.fsync},
 * {@code tierlog.fsync-interval} and {@code tierlog.max-request-bytes} (default 8 MiB).
 */
public record IngestConfig(Path dataDir, FsyncPolicy fsync, Duration fsyncInterval, int maxRequestBytes) {
    public static final int DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;
    public static final Duration DEFAULT_FSYNC_INTERVAL = Duration.ofSeconds(1);

    public IngestConfig {
        if (maxRequestBytes < 1) {
            throw new IllegalArgumentException("tierlog.max-request-bytes must be >= 1: " + maxRequestBytes);
        }
    }

    /**
     * Reads the environment-variable form of the keys ({@code TIERLOG_DATA_DIR}, {@code TIERLOG_FSYNC},
     * {@code TIERLOG_FSYNC_INTERVAL_MS}, {@code TIERLOG_MAX_REQUEST_BYTES}), as the Lambda function gets them.
     */
    public static IngestConfig fromEnvironment(Map<String, String> env) {
        return new IngestConfig(
                Path.of(env.getOrDefault("TIERLOG_DATA_DIR", "./data/hot")),
                FsyncPolicy.parse(env.getOrDefault("TIERLOG_FSYNC", "always")),
                Duration.ofMillis(Long.parseLong(env.getOrDefault("TIERLOG_FSYNC_INTERVAL_MS",
                        String.valueOf(DEFAULT_FSYNC_INTERVAL.toMillis())))),
                Integer.parseInt(env.getOrDefault("TIERLOG_MAX_REQUEST_BYTES", String.valueOf(DEFAULT_MAX_REQUEST_BYTES))));
    }
}
