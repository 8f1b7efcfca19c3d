package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

class LoadSamplerTest {

    @Test
    void stealIsTheStolenShareOfAllCpuTimeBetweenTwoReadings() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        LoadSampler.CpuTicks before = LoadSampler.CpuTicks.parse(
                "cpu  1000 0 200 700 50 0 10 40 30 0\ncpu0 500 0 100 350 25 0 5 20 15 0\n");
        LoadSampler.CpuTicks after = LoadSampler.CpuTicks.parse(
                "cpu  1120 0 230 720 55 0 15 60 90 0\ncpu0 560 0 115 360 27 0 7 30 45 0\n");
        assertThat(before).isEqualTo(new LoadSampler.CpuTicks(2000, 40));
        // 200 ticks passed (guest time is inside user), 20 of them stolen.
        assertThat(after.stealSince(before)).isCloseTo(0.10, offset(1e-12));
    }

    @Test
    void aLineThatIsNotTheMachinesCpuLineIsRefused() {
        assertThatThrownBy(() -> LoadSampler.CpuTicks.parse("intr 12345 0 0\n"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theSummaryGivesTheLoadAndTheStealOfTheRunAndOfItsPeriods() {
        assertThat(LoadSampler.summary(List.of(2.5, 1.0, 4.0), List.of(0.19, 0.0, 0.03), 0.04)).isEqualTo(
                "1-min load average 1.00-4.00 (median 2.50, 3 samples every 5 s); CPU steal 4% of the run "
                        + "(5-s periods 0-19%, median 3%)");
        assertThat(LoadSampler.summary(List.of(1.0), List.of(), Double.NaN))
                .isEqualTo("1-min load average 1.00-1.00 (median 1.00, 1 samples every 5 s)");
        assertThat(LoadSampler.summary(List.of(), List.of(), Double.NaN)).isEqualTo("load average not available");
    }
}
