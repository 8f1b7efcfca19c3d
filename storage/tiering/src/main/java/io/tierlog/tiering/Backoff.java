package io.tierlog.tiering;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): after the
 * {@code n}-th consecutive failure wait a uniformly random time in {@code [0, min(cap, base * 2^(n-1))]}. Full
 * jitter spreads the retries of many nodes that failed together, so a recovering S3 is not hit in lockstep.
 * The delay is computed, never slept here: the tierer compares it with its clock, so nothing blocks.
 * Not thread-safe (the random generator is shared by the caller's single thread).
 */
final class Backoff {
    private final long baseMs;
    private final long capMs;
    private final RandomGenerator random;

    Backoff(Duration base, Duration cap, RandomGenerator random) {
        this.baseMs = Math.max(1, base.toMillis());
        this.capMs = Math.max(baseMs, cap.toMillis());
        this.random = random;
    }

    /** The delay before the next attempt after {@code failures >= 1} consecutive failures. */
    long delayMs(int failures) {
        int shift = Math.min(Math.max(failures - 1, 0), 30);
        long ceiling = Math.min(capMs, baseMs << shift);
        return random.nextLong(ceiling + 1);
    }
}
