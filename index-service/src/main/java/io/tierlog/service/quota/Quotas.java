package io.tierlog.service.quota;

import io.tierlog.access.Principal;
import io.tierlog.service.config.TierlogConfig;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.util.Optional;

/**
 * The service's per-principal byte-rate quotas ({@code tierlog.quota.produce-bytes-per-second},
 * {@code tierlog.quota.fetch-bytes-per-second}), one bucket per caller shared by the HTTP routes and the Kafka
 * listener, so a caller's bytes count against one quota whichever protocol moves them. Per instance, as Kafka's
 * quotas are per broker.
 */
@Singleton
public class Quotas {
    private final Optional<ByteRateQuota> produce;
    private final Optional<ByteRateQuota> fetch;

    public Quotas(TierlogConfig config, Clock clock) {
        this.produce = config.quota().produceBytesPerSecond().stream().mapToObj(r -> new ByteRateQuota(r, clock))
                .findFirst();
        this.fetch = config.quota().fetchBytesPerSecond().stream().mapToObj(r -> new ByteRateQuota(r, clock))
                .findFirst();
    }

    /** Produce bytes per second per caller; empty when unlimited. */
    public Optional<ByteRateQuota> produce() {
        return produce;
    }

    /** Fetched bytes per second per caller; empty when unlimited. */
    public Optional<ByteRateQuota> fetch() {
        return fetch;
    }

    /**
     * The quota key of a caller: the authenticated principal's name (token mode: {@code token:<id>},
     * {@code jwt:<sub>}, {@code bootstrap}), else the client's IP address; {@code none} mode's shared
     * {@code anonymous} principal counts per address too, or every client would share one quota. The two kinds of
     * key never collide (different prefixes).
     */
    public static String key(Object principal, String address) {
        String name = principal instanceof Principal p ? p.name()
                : principal instanceof java.security.Principal named ? named.getName()
                : principal == null ? null : principal.toString();
        if (name == null || principal == Principal.ANONYMOUS) {
            return "address:" + (address == null ? "unknown" : address);
        }
        return "principal:" + name;
    }
}
