package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SamplesTest {
    @Test
    void medianPercentilesAndRange() {
        Samples odd = new Samples(List.of(5.0, 1.0, 3.0));
        assertThat(odd.median()).isEqualTo(3.0);
        assertThat(new Samples(List.of(4.0, 1.0, 3.0, 2.0)).median()).isEqualTo(2.5);
        Samples twenty = new Samples(java.util.stream.IntStream.rangeClosed(1, 20).mapToObj(i -> (double) i).toList());
        assertThat(twenty.percentile(50)).isEqualTo(10.0);
        assertThat(twenty.percentile(99)).isEqualTo(20.0);
        assertThat(twenty.percentile(95)).isEqualTo(19.0);
        assertThat(odd.medianAndRange("%.1f")).isEqualTo("3.0 (1.0–5.0)");
    }
}
