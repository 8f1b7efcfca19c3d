package io.tierlog.bench.kafkaperf;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

import static org.assertj.core.api.Assertions.assertThat;

class PairedRatiosTest {
    private static final ToDoubleFunction<Double> SELF = Double::doubleValue;

    @Test
    void theSignTestRanksAreTheTabulatedOnes() {
        // Tables of the distribution-free interval of a median at 95% (n: lower rank).
        assertThat(PairedRatios.rankFor95(5)).isZero();
        assertThat(PairedRatios.rankFor95(6)).isEqualTo(1);
        assertThat(PairedRatios.rankFor95(9)).isEqualTo(2);
        assertThat(PairedRatios.rankFor95(15)).isEqualTo(4);
        assertThat(PairedRatios.rankFor95(27)).isEqualTo(8);
        assertThat(PairedRatios.rankFor95(30)).isEqualTo(10);
    }

    @Test
    void ratiosArePairedByRunAndTheIntervalComesFromTheirOrder() {
        // Kafka 100 every run; Tierlog 91..117 in some order: ratios 0.91..1.17.
        List<Double> kafka = new ArrayList<>();
        List<Double> tierlog = new ArrayList<>();
        for (int i = 0; i < 27; i++) {
            kafka.add(100.0);
            tierlog.add(91.0 + (i * 7) % 27);
        }
        PairedRatios p = PairedRatios.of(kafka, tierlog, SELF, true);
        assertThat(p.pairs()).isEqualTo(27);
        assertThat(p.median()).isCloseTo(1.04, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(p.low()).isCloseTo(0.98, org.assertj.core.data.Offset.offset(1e-9)); // 8th smallest
        assertThat(p.high()).isCloseTo(1.10, org.assertj.core.data.Offset.offset(1e-9)); // 20th smallest
        assertThat(p.describe()).isEqualTo("1.04x (0.98x–1.10x, 27 pairs)");
    }

    @Test
    void lowerIsBetterInvertsTheRatioAndUnpairedListsGiveNothing() {
        PairedRatios p = PairedRatios.of(List.of(10.0, 10.0), List.of(5.0, 20.0), SELF, false);
        assertThat(p.median()).isCloseTo(1.25, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(p.describe()).isEqualTo("1.25x (2 pairs, too few for a 95% interval)");
        assertThat(PairedRatios.of(List.of(1.0), List.of(1.0, 2.0), SELF, true)).isNull();
    }
}
