package io.tierlog.bench.cold;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ServiceMetricsTest {

    @Test
    void sumsTheSamplesOfEachNameOverLabelsAndSubtracts() {
        String before = """
                # HELP tierlog_cold_cache_hits_total Cold chunk reads served from the on-disk cache
                # TYPE tierlog_cold_cache_hits_total counter
                tierlog_cold_cache_hits_total 3.0
                tierlog_cold_read_seconds_count{outcome="ok",x="a b"} 2.0
                tierlog_cold_read_seconds_count{outcome="error"} 1.0
                tierlog_cold_read_seconds_sum{outcome="ok"} 0.5
                tierlog_cold_read_seconds_max 0.4
                """;
        String after = before.replace("hits_total 3.0", "hits_total 10.0").replace("sum{outcome=\"ok\"} 0.5",
                "sum{outcome=\"ok\"} 2.0");

        Map<String, Double> b = ServiceMetrics.parse(before);
        Map<String, Double> d = ServiceMetrics.delta(b, ServiceMetrics.parse(after));

        assertThat(b).containsEntry("tierlog_cold_read_seconds_count", 3.0).containsEntry("tierlog_cold_cache_misses_total", 0.0);
        assertThat(d).containsEntry("tierlog_cold_cache_hits_total", 7.0).containsEntry("tierlog_cold_read_seconds_sum", 1.5)
                .containsEntry("tierlog_cold_read_seconds_count", 0.0);
    }
}
