package io.tierlog.service.quota;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * A rate quota per principal, as Kafka's {@code producer_byte_rate} / {@code consumer_byte_rate} (bytes) and
 * {@code controller_mutation_rate} (partitions created or deleted) mean it: a request is not cut short or dropped for
 * its size; what it moved is counted after it, and a principal that has gone over its rate is made to wait until its
 * average is back within it. Over HTTP the wait is the client's:
 * the next request of a principal in debt is refused (429 {@code quota-exceeded}) with the time after which it is
 * admitted.
 *
 * <p>The algorithm is a token bucket that may go into debt: each principal's bucket fills at its rate
 * up to one second's worth (the burst), a request is admitted while the bucket is not negative, and what it moved is
 * taken from the bucket when it ends ({@link #record}), which may push it below zero. The refusal's wait is the time
 * the bucket needs to climb back to zero, rounded up to whole seconds, so a client that waits that long before its
 * retry (and sends nothing meanwhile) is admitted. A principal who stays within the rate is never refused.
 *
 * <p>Each principal's rate is looked up at each call ({@code rateOf}: the service's setting, or an administrator's
 * override for that principal, {@link QuotaOverrides}), so a changed rate holds from the next request; 0 is no quota.
 * Buckets of idle principals are dropped once more than {@value #MAX_IDLE_BUCKETS} exist (a full bucket carries no
 * state). Time comes from the injected clock. Thread-safe.
 */
public final class RateQuota {
    static final int MAX_IDLE_BUCKETS = 10_000;

    private final ToLongFunction<String> rateOf;
    private final Clock clock;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    /** One principal's bucket; guarded by its own monitor. */
    private static final class Bucket {
        double tokens;
        long atMillis;

        Bucket(double tokens, long atMillis) {
            this.tokens = tokens;
            this.atMillis = atMillis;
        }
    }

    /** The same rate for every principal. */
    public RateQuota(long perSecond, Clock clock) {
        this(requirePositive(perSecond), clock);
    }

    /** @param rateOf each principal's rate per second, 0 for none */
    public RateQuota(ToLongFunction<String> rateOf, Clock clock) {
        this.rateOf = rateOf;
        this.clock = clock;
    }

    private static ToLongFunction<String> requirePositive(long perSecond) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("a rate quota must be at least 1 per second: " + perSecond);
        }
        return principal -> perSecond;
    }

    /** {@code principal}'s rate per second now, 0 when it has no quota. */
    public long perSecond(String principal) {
        return rateOf.applyAsLong(principal);
    }

    /** Empty if {@code principal} may send a request now; else how long it must wait (whole seconds, at least 1). */
    public Optional<Duration> check(String principal) {
        long debt = debtMillis(principal);
        return debt == 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(Math.max(1, (debt + 999) / 1000)));
    }

    /**
     * How long until {@code principal}'s bucket is back to zero, in milliseconds (rounded up), 0 if it may send now:
     * Kafka's throttle time, which its clients wait out before their next request.
     */
    public long debtMillis(String principal) {
        Bucket b = buckets.get(principal);
        if (b == null) {
            return 0;
        }
        long rate = rateOf.applyAsLong(principal);
        if (rate <= 0) {
            return 0;
        }
        synchronized (b) {
            refill(b, rate);
            return b.tokens >= 0 ? 0 : (long) Math.ceil(-b.tokens * 1000 / rate);
        }
    }

    /** Counts {@code amount} (bytes, partitions) moved by a request of {@code principal} that was admitted. */
    public void record(String principal, long amount) {
        long rate = rateOf.applyAsLong(principal);
        if (amount <= 0 || rate <= 0) {
            return;
        }
        if (buckets.size() > MAX_IDLE_BUCKETS) {
            dropFullBuckets();
        }
        Bucket b = buckets.computeIfAbsent(principal, k -> new Bucket(rate, clock.millis()));
        synchronized (b) {
            refill(b, rate);
            b.tokens -= amount;
        }
    }

    private void refill(Bucket b, long rate) {
        long now = clock.millis();
        if (now > b.atMillis) {
            b.tokens = Math.min(rate, b.tokens + (now - b.atMillis) * (double) rate / 1000);
            b.atMillis = now;
        }
    }

    /** Drops the buckets that are full (or whose principal has no quota any more): they carry no state. */
    private void dropFullBuckets() {
        buckets.entrySet().removeIf(e -> {
            long rate = rateOf.applyAsLong(e.getKey());
            if (rate <= 0) {
                return true;
            }
            Bucket b = e.getValue();
            synchronized (b) {
                refill(b, rate);
                return b.tokens >= rate;
            }
        });
    }

    /** Principals with a bucket (tests). */
    int trackedPrincipals() {
        return buckets.size();
    }
}
