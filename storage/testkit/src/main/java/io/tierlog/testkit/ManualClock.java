package io.tierlog.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Clock} that moves only when told to. Thread-safe: all views ({@link #withZone}) share one instant,
 * so advancing the clock is seen at once by every component it was handed to.
 */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    /** A clock at {@code start}, in UTC. */
    public ManualClock(Instant start) {
        this(new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
    }

    /** A clock at {@code epochMillis}, in UTC. */
    public ManualClock(long epochMillis) {
        this(Instant.ofEpochMilli(epochMillis));
    }

    /** A clock at 2024-01-01T00:00:00Z, a fixed point so that test output is reproducible. */
    public ManualClock() {
        this(Instant.parse("2024-01-01T00:00:00Z"));
    }

    private ManualClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public ManualClock withZone(ZoneId zone) {
        return new ManualClock(now, Objects.requireNonNull(zone, "zone"));
    }

    /** Moves the clock to {@code instant}; going backwards is allowed (to test clock steps). */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }

    /** Moves the clock forward by {@code duration} and returns the new instant. */
    public Instant advance(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        return now.updateAndGet(current -> current.plus(duration));
    }

    /** Moves the clock forward by {@code millis} milliseconds and returns the new instant. */
    public Instant advanceMillis(long millis) {
        return advance(Duration.ofMillis(millis));
    }

    @Override
    public String toString() {
        return "ManualClock[" + now.get() + ", " + zone + "]";
    }
}
