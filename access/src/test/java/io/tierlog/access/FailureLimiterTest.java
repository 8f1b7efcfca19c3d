package io.tierlog.access;

import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FailureLimiterTest {

    @Test
    void anAddressIsRefusedAfterMaxFailuresUntilItsMinuteEnds() {
        ManualClock clock = new ManualClock(0);
        FailureLimiter l = new FailureLimiter(3, clock);
        for (int i = 0; i < 3; i++) {
            assertThat(l.retryAfterSeconds("10.0.0.1")).isZero();
            l.failed("10.0.0.1");
        }
        clock.advanceMillis(20_000);
        assertThat(l.retryAfterSeconds("10.0.0.1")).isEqualTo(40);
        assertThat(l.retryAfterSeconds("10.0.0.2")).isZero();
        clock.advanceMillis(40_000);
        assertThat(l.retryAfterSeconds("10.0.0.1")).isZero();
    }

    @Test
    void zeroTurnsItOff() {
        FailureLimiter l = new FailureLimiter(0, new ManualClock(0));
        for (int i = 0; i < 100; i++) {
            l.failed("a");
        }
        assertThat(l.retryAfterSeconds("a")).isZero();
    }
}
