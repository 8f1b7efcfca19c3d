package io.tierlog.groups;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * How a coordinator tells whether a member's session has run out. A session runs from the arrival of the member's
 * last heartbeat: the instance that heard it measures on its own monotonic clock (no skew, immune to wall-clock
 * steps); any other instance only once its wall clock passes {@code lastHeartbeatMs + sessionTimeoutMs +
 * maxClockSkew}, so no instance expires a member before a full session timeout has really passed (ADR 0018).
 * Public for storage/sharegroups, whose share-group members expire by the same rule.
 */
public final class SessionClock {
    /** Names this clock in the state it writes: its monotonic readings mean something to itself only. */
    public final String instanceId = UUID.randomUUID().toString();
    private final Clock clock;
    private final LongSupplier monotonicMs;
    private final long maxClockSkewMs;

    /**
     * @param maxClockSkew how far apart the clocks of the processes sharing the volume may be
     * @param monotonicMs  this process's monotonic time in ms ({@link GroupCoordinator#monotonicOf(Clock)})
     */
    public SessionClock(Clock clock, Duration maxClockSkew, LongSupplier monotonicMs) {
        this.clock = clock;
        this.maxClockSkewMs = maxClockSkew.toMillis();
        this.monotonicMs = monotonicMs;
    }

    /** One reading of both clocks, taken once per call under the group's lock. */
    public record Now(long wallMs, long monotonicMs) {
    }

    public Now now() {
        return new Now(clock.millis(), monotonicMs.getAsLong());
    }

    /**
     * How long until this instance may expire a session last heard as given (negative: it may now).
     *
     * @param heardBy            the {@link #instanceId} of the clock that heard it
     * @param heardAtMonotonicMs that clock's monotonic reading then
     */
    public long sessionLeftMs(long lastHeartbeatMs, String heardBy, long heardAtMonotonicMs, long sessionTimeoutMs,
                              Now now) {
        if (instanceId.equals(heardBy)) {
            return heardAtMonotonicMs + sessionTimeoutMs - now.monotonicMs();
        }
        return lastHeartbeatMs + sessionTimeoutMs + maxClockSkewMs - now.wallMs();
    }
}
