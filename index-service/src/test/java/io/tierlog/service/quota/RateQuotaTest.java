package io.tierlog.service.quota;

import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The token bucket with debt, on a manual clock. */
class RateQuotaTest {
    private final ManualClock clock = new ManualClock();
    private final RateQuota quota = new RateQuota(1000, clock);

    @Test
    void aRequestIsNeverCutForItsSizeButTheNextWaitsUntilTheDebtIsPaid() {
        assertThat(quota.check("a")).isEmpty();
        quota.record("a", 3500);
        // 1000 burst - 3500 = -2500: 2.5 s to pay back, rounded up.
        assertThat(quota.check("a")).hasValue(Duration.ofSeconds(3));
        clock.advance(Duration.ofMillis(2499));
        assertThat(quota.check("a")).hasValue(Duration.ofSeconds(1));
        clock.advance(Duration.ofMillis(1));
        assertThat(quota.check("a")).isEmpty();
    }

    @Test
    void waitingTheAnsweredTimeAlwaysAdmits() {
        for (long bytes : new long[]{1001, 1999, 2000, 2001, 123_457}) {
            RateQuota q = new RateQuota(1000, clock);
            q.record("p", bytes);
            Duration wait = q.check("p").orElseThrow();
            clock.advance(wait);
            assertThat(q.check("p")).as("after %s for %d bytes", wait, bytes).isEmpty();
        }
    }

    @Test
    void withinTheRateNothingIsRefused() {
        for (int i = 0; i < 100; i++) {
            assertThat(quota.check("steady")).isEmpty();
            quota.record("steady", 100);
            clock.advance(Duration.ofMillis(100));
        }
    }

    @Test
    void principalsAreMeteredApartAndTheBurstIsOneSecond() {
        quota.record("a", 5000);
        assertThat(quota.check("a")).isPresent();
        assertThat(quota.check("b")).isEmpty();
        // An hour idle does not bank an hour of bytes: the bucket holds at most one second's worth.
        clock.advance(Duration.ofHours(1));
        quota.record("b", 1000);
        assertThat(quota.check("b")).isEmpty();
        quota.record("b", 1);
        assertThat(quota.check("b")).hasValue(Duration.ofSeconds(1));
    }

    @Test
    void idleBucketsAreDroppedOnceThereAreMany() {
        for (int i = 0; i <= RateQuota.MAX_IDLE_BUCKETS; i++) {
            quota.record("client-" + i, 10);
        }
        clock.advance(Duration.ofSeconds(1));
        quota.record("late", 10);
        assertThat(quota.trackedPrincipals()).isEqualTo(1);
    }

    @Test
    void eachPrincipalsRateIsLookedUpAtEachCallSoAChangeHoldsAtOnce() {
        java.util.Map<String, Long> rates = new java.util.concurrent.ConcurrentHashMap<>(java.util.Map.of("a", 1000L));
        RateQuota q = new RateQuota(p -> rates.getOrDefault(p, 0L), clock);
        q.record("b", 1_000_000);
        assertThat(q.check("b")).as("no rate: nothing counted").isEmpty();
        q.record("a", 5000);
        assertThat(q.check("a")).hasValue(Duration.ofSeconds(4));
        rates.put("a", 4000L);
        assertThat(q.check("a")).as("the same debt at the new rate").hasValue(Duration.ofSeconds(1));
        assertThat(q.perSecond("a")).isEqualTo(4000);
        rates.remove("a");
        assertThat(q.check("a")).as("its rate removed").isEmpty();
    }

    @Test
    void aQuotaBelowOneBytePerSecondIsRefused() {
        assertThatThrownBy(() -> new RateQuota(0, clock)).isInstanceOf(IllegalArgumentException.class);
    }
}
