package io.tierlog.service.quota;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A byte-rate quota per principal, as Kafka's {@code producer_byte_rate} / {@code consumer_byte_rate} mean it: a
 * request is not cut short or dropped for its size; the bytes it moved are counted after it, and a principal that
 * has gone over its rate is made to wait until its average is back within it. Over HTTP the wait is the client's:
 * the next request of a principal in debt is refused (429 {@code quota-exceeded}) with the time after which it is
 * admitted.
 *
 * <p>The algorithm is a token bucket that may go into debt: each principal's bucket fills at {@code bytesPerSecond}
 * up to one second's worth (the burst), a request is admitted while the bucket is not negative, and its bytes are
 * taken from the bucket when it ends ({@link #record}), which may push it below zero. The refusal's wait is the time
 * the bucket needs to climb back to zero, rounded up to whole seconds, so a client that waits that long before its
 * retry (and sends nothing meanwhile) is admitted. A principal who stays within the rate is never refused.
 *
 * <p>Buckets of idle principals are dropped once more than {@value #MAX_IDLE_BUCKETS} exist (a full bucket carries no
 * state). Time comes from the injected clock. Thread-safe.
 */
public final class ByteRateQuota {
    static final int MAX_IDLE_BUCKETS = 10_000;

    private final long bytesPerSecond;
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

    public ByteRateQuota(long bytesPerSecond, Clock clock) {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("a byte-rate quota must be at least 1 byte per second: " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.clock = clock;
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
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
        synchronized (b) {
            refill(b);
            return b.tokens >= 0 ? 0 : (long) Math.ceil(-b.tokens * 1000 / bytesPerSecond);
        }
    }

    /** Counts {@code bytes} moved by a request of {@code principal} that was admitted. */
    public void record(String principal, long bytes) {
        if (bytes <= 0) {
            return;
        }
        if (buckets.size() > MAX_IDLE_BUCKETS) {
            dropFullBuckets();
        }
        Bucket b = buckets.computeIfAbsent(principal, k -> new Bucket(bytesPerSecond, clock.millis()));
        synchronized (b) {
            refill(b);
            b.tokens -= bytes;
        }
    }

    private void refill(Bucket b) {
        long now = clock.millis();
        if (now > b.atMillis) {
            b.tokens = Math.min(bytesPerSecond, b.tokens + (now - b.atMillis) * (double) bytesPerSecond / 1000);
            b.atMillis = now;
        }
    }

    private void dropFullBuckets() {
        buckets.values().removeIf(b -> {
            synchronized (b) {
                refill(b);
                return b.tokens >= bytesPerSecond;
            }
        });
    }

    /** Principals with a bucket (tests). */
    int trackedPrincipals() {
        return buckets.size();
    }
}
