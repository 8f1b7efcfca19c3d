package io.tierlog.access;

import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Limits failed authentication attempts per client address: after {@code maxPerMinute} failures within a one-minute
 * window an address is refused (429 {@code too-many-failures}) until the window ends, valid token or not, so a
 * guesser gets {@code maxPerMinute} guesses a minute. Windows are fixed, per address, and forgotten once over; at
 * most {@value #MAX_ADDRESSES} addresses are tracked (past that, ended windows are dropped first). Thread-safe.
 */
public final class FailureLimiter {
    static final int MAX_ADDRESSES = 100_000;
    private static final long WINDOW_MILLIS = 60_000;

    private final int maxPerMinute;
    private final Clock clock;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    private record Window(long start, int failures) {
    }

    public FailureLimiter(int maxPerMinute, Clock clock) {
        this.maxPerMinute = maxPerMinute;
        this.clock = clock;
    }

    /** Seconds the address must wait before trying again, or 0 when it may try now. */
    public long retryAfterSeconds(String address) {
        if (maxPerMinute <= 0) {
            return 0;
        }
        Window w = windows.get(address);
        long now = clock.millis();
        if (w == null || now - w.start() >= WINDOW_MILLIS || w.failures() < maxPerMinute) {
            return 0;
        }
        return Math.max(1, (w.start() + WINDOW_MILLIS - now + 999) / 1000);
    }

    /** Counts one failed attempt from {@code address}. */
    public void failed(String address) {
        if (maxPerMinute <= 0) {
            return;
        }
        long now = clock.millis();
        if (windows.size() >= MAX_ADDRESSES) {
            windows.values().removeIf(w -> now - w.start() >= WINDOW_MILLIS);
        }
        windows.compute(address, (a, w) -> w == null || now - w.start() >= WINDOW_MILLIS
                ? new Window(now, 1) : new Window(w.start(), w.failures() + 1));
    }
}
