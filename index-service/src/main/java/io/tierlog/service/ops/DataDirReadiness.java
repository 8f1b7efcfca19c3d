package io.tierlog.service.ops;

import io.tierlog.log.NoSpaceLeft;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.HotTier;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Ready when the hot volume accepts a write (a mount gone read-only fails it) and the index is open. A volume
 * without space stays ready: reads go on, and {@link HotTierBackpressure}'s check names the condition.
 */
@Readiness
@Singleton
public class DataDirReadiness implements HealthCheck {
    private final Path dataDir;
    private final HotTier hot;

    public DataDirReadiness(TierlogConfig config, HotTier hot) {
        this.dataDir = config.dataDir();
        this.hot = hot;
    }

    @Override
    public HealthCheckResponse call() {
        var builder = HealthCheckResponse.named("tierlog-storage").withData("dataDir", dataDir.toAbsolutePath().toString());
        boolean writable;
        boolean full = false;
        try {
            Path probe = Files.createTempFile(dataDir, ".ready", ".probe");
            Files.delete(probe);
            writable = true;
        } catch (IOException | RuntimeException e) {
            builder.withData("dataDirError", String.valueOf(e.getMessage()));
            writable = false;
            // A full volume still serves reads; produce answers 503 hot-tier-full (check tierlog-hot-tier).
            full = NoSpaceLeft.causedBy(e);
        }
        boolean indexOpen = hot.isOpen();
        return builder.withData("dataDirWritable", writable).withData("indexOpen", indexOpen)
                .status((writable || full) && indexOpen).build();
    }
}
