package io.tierlog.service.cold;

import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringStats;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports the cold tier in {@code /q/health/ready} without ever failing readiness: with S3 down the service still
 * serves the hot tier and accepts produce, so taking it out of the load balancer would only make things worse.
 * The details (store reachable, backlog and whether it exceeds {@code tierlog.tiering.max-pending-bytes}) are for
 * operators and alarms.
 */
@Readiness
@Singleton
public class ColdTierReadiness implements HealthCheck {
    private final TieredStorage storage;

    public ColdTierReadiness(TieredStorage storage) {
        this.storage = storage;
    }

    @Override
    public HealthCheckResponse call() {
        TieringStats s = storage.stats();
        return HealthCheckResponse.named("tierlog-cold-tier")
                .withData("storeAvailable", s.storeAvailable())
                .withData("pendingSegments", s.pendingSegments())
                .withData("pendingBytes", s.pendingBytes())
                .withData("backlogExceeded", s.backlogExceeded())
                .up()
                .build();
    }
}
