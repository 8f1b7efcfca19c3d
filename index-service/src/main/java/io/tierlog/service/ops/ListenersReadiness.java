package io.tierlog.service.ops;

import io.quarkus.runtime.Application;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready only once the application has started, that is once every listener it is configured with is bound. The
 * plain HTTP port answers this check as soon as it is bound, while the HTTPS port binds after its key store is read
 * (about half a second later on 2 vCPUs): without this check a load balancer or a test could be told "ready" and then
 * have a connection to the HTTPS port refused.
 */
@Readiness
@Singleton
public class ListenersReadiness implements HealthCheck {
    @Override
    public HealthCheckResponse call() {
        Application app = Application.currentApplication();
        return HealthCheckResponse.named("tierlog-listeners").status(app != null && app.isStarted()).build();
    }
}
