package io.tierlog.service.ops;

import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/** Live while the process answers HTTP; storage trouble is a readiness matter, not a reason to restart. */
@Liveness
@Singleton
public class ProcessLiveness implements HealthCheck {
    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.up("tierlog-process");
    }
}
