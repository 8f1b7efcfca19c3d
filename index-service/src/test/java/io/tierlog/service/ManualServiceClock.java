package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.tierlog.testkit.ManualClock;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;

/**
 * The service's {@link java.time.Clock} as a {@link ManualClock} that a test moves: group sessions, leases, quotas and
 * producer expiry then advance when the test says, not after wall-clock sleeps. An alternative to {@link Engine}'s
 * system clock, enabled only by a test profile that lists it ({@link Profile}, or a profile's own
 * {@code getEnabledAlternatives}); a test injects {@link ManualClock} to move it. Starts at the real time, so that
 * records stamped with it look recent to retention.
 */
@Alternative
@Singleton
public class ManualServiceClock {
    private final ManualClock clock = new ManualClock(Instant.now());

    @Produces
    @Singleton
    ManualClock clock() {
        return clock;
    }

    /**
     * A test profile whose service runs on the manual clock, with producer ids expiring after
     * {@link #PRODUCER_ID_EXPIRATION} of it (stepping it past the default day would run out every session and lease
     * too), and every append fsynced before it is acknowledged (the deployed default; the other tests' profiles skip
     * fsync for speed).
     */
    public static class Profile implements QuarkusTestProfile {
        public static final Duration PRODUCER_ID_EXPIRATION = Duration.ofSeconds(3);

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(ManualServiceClock.class);
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("tierlog.producer-id-expiration", PRODUCER_ID_EXPIRATION.toSeconds() + "s",
                    "tierlog.fsync", "always");
        }
    }
}
