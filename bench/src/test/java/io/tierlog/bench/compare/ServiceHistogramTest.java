package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ServiceHistogramTest {
    private static String scrape(long upTo1ms, long upTo5ms, long upTo20ms, long all) {
        return "# TYPE tierlog_produce_latency_seconds histogram\n"
                + "tierlog_produce_latency_seconds_bucket{le=\"0.001\"} " + upTo1ms + "\n"
                + "tierlog_produce_latency_seconds_bucket{le=\"0.005\"} " + upTo5ms + "\n"
                + "tierlog_produce_latency_seconds_bucket{le=\"0.02\"} " + upTo20ms + "\n"
                + "tierlog_produce_latency_seconds_bucket{le=\"+Inf\"} " + all + "\n"
                + "tierlog_produce_latency_seconds_count " + all + "\n"
                + "tierlog_fetch_latency_seconds_bucket{le=\"0.001\"} 999\n";
    }

    @Test
    void quantilesOfTheObservationsBetweenTwoScrapesAreTheirBucketsUpperBounds() {
        ServiceHistogram before = ServiceHistogram.parse(scrape(500, 500, 500, 500), "tierlog_produce_latency_seconds");
        // Since then: 10 at <= 1 ms, 80 in (1, 5] ms, 9 in (5, 20] ms, 1 above 20 ms.
        ServiceHistogram after = ServiceHistogram.parse(scrape(510, 590, 599, 600), "tierlog_produce_latency_seconds");
        ServiceHistogram run = after.since(before);
        assertThat(run.count()).isEqualTo(100);
        assertThat(run.quantileMillis(0.05)).isEqualTo(1.0);
        assertThat(run.quantileMillis(0.5)).isEqualTo(5.0);
        assertThat(run.quantileMillis(0.99)).isEqualTo(20.0);
        assertThat(run.quantileMillis(0.999)).isInfinite();
    }

    @Test
    void anAbsentHistogramHasNoQuantiles() {
        assertThat(ServiceHistogram.parse("", "tierlog_produce_durable_wait_seconds").quantileMillis(0.5)).isNaN();
    }
}
