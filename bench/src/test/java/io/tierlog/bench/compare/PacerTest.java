package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PacerTest {

    @Test
    void scheduledTimesAreEvenlySpacedAndStaggeredPerWorker() {
        // A start far in the past: every unit is already due, so nothing waits and the schedule is exact.
        long start = System.nanoTime() - 60_000_000_000L;
        Pacer first = new Pacer(start, 100, 0, 4);   // 100 units/s: one every 10 ms
        Pacer third = new Pacer(start, 100, 2, 4);   // starts half an interval later

        assertThat(first.awaitNext()).isEqualTo(start);
        assertThat(first.awaitNext()).isEqualTo(start + 10_000_000);
        assertThat(third.awaitNext()).isEqualTo(start + 5_000_000);
        assertThat(third.awaitNext()).isEqualTo(start + 15_000_000);
    }

    @Test
    void aLateCallerGetsTheScheduledTimeNotTheTimeItSends() {
        long start = System.nanoTime() - 1_000_000_000L;
        Pacer pacer = new Pacer(start, 1000);

        // The caller is a whole second behind; latency measured from this value includes that delay.
        assertThat(pacer.awaitNext()).isEqualTo(start);
    }

    @Test
    void unpacedReturnsNow() {
        long before = System.nanoTime();
        long t = new Pacer(0, 0).awaitNext();
        assertThat(t).isBetween(before, System.nanoTime());
    }
}
