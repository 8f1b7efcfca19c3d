package io.tierlog.service.telemetry;

import io.quarkus.runtime.StartupEvent;
import io.tierlog.access.Secrets;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * Builds client metrics (KIP-714): the subscriptions on the hot volume ({@code <data>/__metadata/client-metrics},
 * re-read every {@code tierlog.auth.token-refresh-interval}, as the other administrator-set records are) and the
 * per-instance client state, whose silent clients are forgotten every {@value #EXPIRY_CHECK_SECONDS} s.
 */
@Singleton
public class ClientTelemetrySetup {
    private static final Logger LOG = Logger.getLogger(ClientTelemetrySetup.class);
    static final int EXPIRY_CHECK_SECONDS = 10;

    @Produces
    @Singleton
    ClientMetricsSubscriptions subscriptions(TierlogConfig config, Clock clock) {
        ClientMetricsSubscriptions s = new ClientMetricsSubscriptions(
                ClientMetricsSubscriptions.directoryIn(config.dataDir()), clock, new Secrets(new SecureRandom()));
        s.startRefresher(config.auth().tokenRefreshInterval());
        return s;
    }

    void close(@Disposes ClientMetricsSubscriptions subscriptions) {
        subscriptions.close();
    }

    @Produces
    @Singleton
    ClientTelemetry telemetry(ClientMetricsSubscriptions subscriptions, Meters meters, Clock clock,
                              TierlogConfig config) {
        return new ClientTelemetry(subscriptions, meters.clientTelemetry(config.kafka().telemetryMaxSeries()), clock,
                config.kafka().telemetryMaxBytes());
    }

    void start(@Observes StartupEvent event, ServiceThreads threads, ClientTelemetry telemetry) {
        threads.timers().scheduleWithFixedDelay(() -> {
            try {
                telemetry.expire();
            } catch (RuntimeException e) {
                LOG.warnf(e, "client telemetry expiry failed; the next one retries");
            }
        }, EXPIRY_CHECK_SECONDS, EXPIRY_CHECK_SECONDS, TimeUnit.SECONDS);
    }
}
