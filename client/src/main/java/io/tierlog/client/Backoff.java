package io.tierlog.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with "equal jitter": attempt n waits a random time in [d/2, d] with
 * d = min(max, initial * 2^n), so that clients that failed together do not retry together, and never less than the
 * server's {@code Retry-After}. Immutable, thread-safe.
 */
public record Backoff(Duration initial, Duration max) {
    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5));

    public Backoff {
        if (initial.isNegative() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 <= initial <= max: " + initial + ", " + max);
        }
    }

    /** The wait before retry number {@code attempt} (0 = the first retry); {@code retryAfterSeconds} < 0: none. */
    public long delayMillis(int attempt, long retryAfterSeconds) {
        long cap = max.toMillis();
        long d = initial.toMillis() << Math.min(attempt, 30);
        if (d <= 0 || d > cap) {
            d = cap;
        }
        long jittered = d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
        return Math.max(jittered, retryAfterSeconds < 0 ? 0 : retryAfterSeconds * 1000);
    }
}
