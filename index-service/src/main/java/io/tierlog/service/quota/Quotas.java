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
 * The service's rate quotas, one bucket per caller shared by the HTTP routes and the Kafka listener, so a caller's
 * bytes (and the partitions it creates and deletes) count against one quota whichever protocol moves them. A
 * caller's rate is the one an administrator set for it, else the one set for every caller ({@link QuotaOverrides},
 * Kafka's client-quota APIs), else {@code tierlog.quota.produce-bytes-per-second} /
 * {@code tierlog.quota.fetch-bytes-per-second}, else none. On the
 * Kafka listener, where each request names its client id, a rate set for a client id (alone or with the user) takes
 * its place in Kafka's order and its own bucket ({@link QuotaOverrides#bucket}). The mutation rate has no service
 * setting (none unless set), nor has the request rate (Kafka listener only), and the connection rate is per client
 * address, on the Kafka listener only. Per instance,
 * as Kafka's quotas are per broker.
 */
@Singleton
public class Quotas {
    private static final String PRINCIPAL_PREFIX = "principal:";

    private final QuotaOverrides overrides;
    private final RateQuota produce;
    private final RateQuota fetch;
    private final RateQuota mutations;
    private final RateQuota connections;
    private final RateQuota requests;

    public Quotas(TierlogConfig config, Clock clock) {
        this.overrides = new QuotaOverrides(QuotaOverrides.directoryIn(config.dataDir()), clock,
                new Secrets(new SecureRandom()));
        overrides.startRefresher(config.auth().tokenRefreshInterval());
        OptionalLong produceSetting = positive(config.quota().produceBytesPerSecond(), "produce");
        OptionalLong fetchSetting = positive(config.quota().fetchBytesPerSecond(), "fetch");
        this.produce = new RateQuota(key -> rate(QuotaOverrides.Kind.PRODUCE, key, produceSetting), clock);
        this.fetch = new RateQuota(key -> rate(QuotaOverrides.Kind.FETCH, key, fetchSetting), clock);
        this.mutations = new RateQuota(key -> rate(QuotaOverrides.Kind.MUTATION, key, OptionalLong.empty()), clock);
        this.connections = new RateQuota(address -> overrides.connectionRate(address).orElse(0), clock);
        this.requests = new RateQuota(key -> rate(QuotaOverrides.Kind.REQUEST, key, OptionalLong.empty()), clock);
    }

    private static OptionalLong positive(OptionalLong setting, String what) {
        if (setting.isPresent() && setting.getAsLong() < 1) {
            throw new IllegalArgumentException("tierlog.quota." + what + "-bytes-per-second must be at least 1: "
                    + setting.getAsLong());
        }
        return setting;
    }

    private long rate(QuotaOverrides.Kind kind, String key, OptionalLong setting) {
        if (QuotaOverrides.namesClient(key)) {
            return overrides.clientRate(kind, key, Quotas::userOf).orElse(0);
        }
        OptionalLong set = overrides.rate(kind, userOf(key));
        return set.isPresent() ? set.getAsLong() : setting.orElse(0);
    }

    /** The principal's name in a caller key ({@link #key}), or null for a caller counted by its address. */
    private static String userOf(String callerKey) {
        return callerKey.startsWith(PRINCIPAL_PREFIX) ? callerKey.substring(PRINCIPAL_PREFIX.length()) : null;
    }

    /**
     * The bucket a Kafka request's produced bytes count in: the caller's own ({@code callerKey}, {@link #key}) unless a
     * rate set for its client id comes first in Kafka's order.
     */
    public String produceBucket(String callerKey, String clientId) {
        return overrides.bucket(QuotaOverrides.Kind.PRODUCE, callerKey, userOf(callerKey), clientId);
    }

    /** As {@link #produceBucket}, for fetched bytes. */
    public String fetchBucket(String callerKey, String clientId) {
        return overrides.bucket(QuotaOverrides.Kind.FETCH, callerKey, userOf(callerKey), clientId);
    }

    /** As {@link #produceBucket}, for partitions created and deleted. */
    public String mutationBucket(String callerKey, String clientId) {
        return overrides.bucket(QuotaOverrides.Kind.MUTATION, callerKey, userOf(callerKey), clientId);
    }

    /** As {@link #produceBucket}, for the listener's time on requests. */
    public String requestBucket(String callerKey, String clientId) {
        return overrides.bucket(QuotaOverrides.Kind.REQUEST, callerKey, userOf(callerKey), clientId);
    }

    /** Microseconds of the Kafka listener's thread time per second per caller ({@code request_percentage}). */
    public RateQuota requests() {
        return requests;
    }

    /** Produce bytes per second per caller. */
    public RateQuota produce() {
        return produce;
    }

    /** Fetched bytes per second per caller. */
    public RateQuota fetch() {
        return fetch;
    }

    /** Partitions created and deleted per second per caller ({@code controller_mutation_rate}). */
    public RateQuota mutations() {
        return mutations;
    }

    /** Kafka connections opened per second per client address ({@code connection_creation_rate}). */
    public RateQuota connections() {
        return connections;
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
