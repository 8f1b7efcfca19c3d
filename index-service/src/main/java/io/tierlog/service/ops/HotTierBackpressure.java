package io.tierlog.service.ops;

import io.quarkus.runtime.Startup;
import io.tierlog.ingest.ProduceAdmission;
import io.tierlog.service.metrics.Meters;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Shows the hot tier's backpressure ({@link ProduceAdmission}) to operators, without ever failing readiness: while
 * produce is refused with 503 {@code hot-tier-full}, fetches, streams and tiering still work, and tiering is what
 * frees the volume, so taking the node out of the load balancer would only make things worse. The check
 * {@code tierlog-hot-tier} is UP with {@code produceAccepted}, the {@code reason} when refused, and the volume's
 * used ratio against its limit.
 *
 * <p>Metrics: {@code tierlog_produce_rejected_total{reason}} (requests refused, by reason), {@code tierlog_hot_tier_full}
 * (1 while produce is refused; the alarm's metric) and {@code tierlog_hot_volume_used_ratio}.
 */
@Readiness
@Singleton
@Startup
public class HotTierBackpressure implements HealthCheck {
    private final ProduceAdmission admission;

    public HotTierBackpressure(ProduceAdmission admission, Meters meters) {
        this.admission = admission;
        meters.hotTier(admission);
    }

    @Override
    public HealthCheckResponse call() {
        var refusal = admission.refusal();
        var builder = HealthCheckResponse.named("tierlog-hot-tier")
                .withData("produceAccepted", refusal.isEmpty())
                .withData("usedRatio", String.format(java.util.Locale.ROOT, "%.4f", admission.volume().usedRatio()))
                .withData("maxUsedRatio", String.valueOf(admission.maxUsedRatio()));
        refusal.ifPresent(r -> builder.withData("reason", r.reason().slug()).withData("detail", r.detail()));
        return builder.up().build();
    }
}
