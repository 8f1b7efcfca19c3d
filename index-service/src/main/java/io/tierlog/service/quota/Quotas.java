package io.tierlog.service.quota;

import io.tierlog.access.Principal;
import io.tierlog.access.Secrets;
import io.tierlog.service.config.TierlogConfig;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.OptionalLong;

/**
 * The service's per-principal byte-rate quotas, one bucket per caller shared by the HTTP routes and the Kafka
 * listener, so a caller's bytes count against one quota whichever protocol moves them. A caller's rate is the one an
 * administrator set for it, else the one set for every caller ({@link QuotaOverrides}, Kafka's client-quota APIs),
 * else {@code tierlog.quota.produce-bytes-per-second} / {@code tierlog.quota.fetch-bytes-per-second}, else none.
 * Per instance, as Kafka's quotas are per broker.
 */
@Singleton
public class Quotas {
    private static final String PRINCIPAL_PREFIX = "principal:";

    private final QuotaOverrides overrides;
    private final ByteRateQuota produce;
    private final ByteRateQuota fetch;

    public Quotas(TierlogConfig config, Clock clock) {
        this.overrides = new QuotaOverrides(QuotaOverrides.directoryIn(config.dataDir()), clock,
                new Secrets(new SecureRandom()));
        overrides.startRefresher(config.auth().tokenRefreshInterval());
        OptionalLong produceSetting = positive(config.quota().produceBytesPerSecond(), "produce");
        OptionalLong fetchSetting = positive(config.quota().fetchBytesPerSecond(), "fetch");
        this.produce = new ByteRateQuota(key -> rate(QuotaOverrides.Kind.PRODUCE, key, produceSetting), clock);
        this.fetch = new ByteRateQuota(key -> rate(QuotaOverrides.Kind.FETCH, key, fetchSetting), clock);
    }

    private static OptionalLong positive(OptionalLong setting, String what) {
        if (setting.isPresent() && setting.getAsLong() < 1) {
            throw new IllegalArgumentException("tierlog.quota." + what + "-bytes-per-second must be at least 1: "
                    + setting.getAsLong());
        }
        return setting;
    }

    private long rate(QuotaOverrides.Kind kind, String key, OptionalLong setting) {
        String principal = key.startsWith(PRINCIPAL_PREFIX) ? key.substring(PRINCIPAL_PREFIX.length()) : null;
        OptionalLong set = overrides.rate(kind, principal);
        return set.isPresent() ? set.getAsLong() : setting.orElse(0);
    }

    /** Produce bytes per second per caller. */
    public ByteRateQuota produce() {
        return produce;
    }

    /** Fetched bytes per second per caller. */
    public ByteRateQuota fetch() {
        return fetch;
    }

    /** The rates administrators set (Kafka's client-quota APIs). */
    public QuotaOverrides overrides() {
        return overrides;
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
        return PRINCIPAL_PREFIX + name;
    }

    @PreDestroy
    void close() {
        overrides.close();
    }
}
