package io.tierlog.ingest;

import io.tierlog.log.FsyncPolicy;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Lambda function's settings come from its environment variables, with the service's defaults. */
class IngestConfigTest {
    @Test
    void readsEveryKeyFromTheEnvironment() {
        IngestConfig config = IngestConfig.fromEnvironment(Map.of(
                "TIERLOG_DATA_DIR", "/mnt/tierlog",
                "TIERLOG_FSYNC", "interval",
                "TIERLOG_FSYNC_INTERVAL_MS", "250",
                "TIERLOG_MAX_REQUEST_BYTES", "1024",
                "TIERLOG_PRODUCER_ID_EXPIRATION_MS", "3600000"));

        assertThat(config).isEqualTo(new IngestConfig(Path.of("/mnt/tierlog"), FsyncPolicy.INTERVAL,
                Duration.ofMillis(250), 1024, Duration.ofHours(1)));
    }

    @Test
    void defaultsAreThoseOfTheService() {
        IngestConfig config = IngestConfig.fromEnvironment(Map.of());

        assertThat(config).isEqualTo(new IngestConfig(Path.of("./data/hot"), FsyncPolicy.ALWAYS,
                Duration.ofSeconds(1), 8 * 1024 * 1024, Duration.ofDays(1)));
    }

    @Test
    void aNonPositiveProducerIdExpirationIsRefused() {
        assertThatThrownBy(() -> IngestConfig.fromEnvironment(Map.of("TIERLOG_PRODUCER_ID_EXPIRATION_MS", "0")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tierlog.producer-id-expiration");
    }
}
