package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ResultsTest {
    private final Results.Key key = new Results.Key("produce", "Kafka", Durability.ALWAYS, 8);

    @Test
    void medianOfOddAndEvenRunCounts() {
        Results results = new Results();
        results.add(key, Map.of("mbps", 30.0));
        results.add(key, Map.of("mbps", 10.0));
        results.add(key, Map.of("mbps", 20.0));
        assertThat(results.median(key, "mbps")).hasValue(20.0);

        results.add(key, Map.of("mbps", 100.0));
        assertThat(results.median(key, "mbps")).hasValue(25.0);
    }

    @Test
    void nothingMeasuredIsEmptyAndRendersAsNotMeasured() {
        Results results = new Results();
        assertThat(results.median(key, "mbps")).isEmpty();
        assertThat(Report.ratio(results.median(key, "mbps"), results.median(key, "mbps"))).isEqualTo("not measured");
    }
}
