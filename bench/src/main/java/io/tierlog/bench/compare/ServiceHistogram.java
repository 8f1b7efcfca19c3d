package io.tierlog.bench.compare;

import java.util.Map;
import java.util.TreeMap;

/**
 * One latency histogram of the index-service's {@code /q/metrics} (Prometheus text): the cumulative counts of
 * {@code <name>_bucket{le="..."}} per upper bound, summed over the other labels. Two scrapes around a run give the
 * run's own distribution ({@link #since}); its quantiles are bucket upper bounds, so they round up to the next
 * bucket (Micrometer's percentile buckets are about 10-40% apart in this range). Immutable.
 */
final class ServiceHistogram {
    /** Upper bound in seconds → observations at or below it. */
    private final TreeMap<Double, Double> cumulative;

    private ServiceHistogram(TreeMap<Double, Double> cumulative) {
        this.cumulative = cumulative;
    }

    /** The histogram {@code name} (e.g. {@code tierlog_produce_latency_seconds}) in a scrape; empty if absent. */
    static ServiceHistogram parse(String metricsText, String name) {
        TreeMap<Double, Double> buckets = new TreeMap<>();
        String prefix = name + "_bucket{";
        for (String line : metricsText.split("\n")) {
            if (!line.startsWith(prefix)) {
                continue;
            }
            int le = line.indexOf("le=\"");
            if (le < 0) {
                continue;
            }
            String bound = line.substring(le + 4, line.indexOf('"', le + 4));
            double upper = bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
            double count = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            buckets.merge(upper, count, Double::sum);
        }
        return new ServiceHistogram(buckets);
    }

    /** The observations made between {@code earlier} and this scrape. */
    ServiceHistogram since(ServiceHistogram earlier) {
        TreeMap<Double, Double> delta = new TreeMap<>();
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            delta.put(e.getKey(), e.getValue() - earlier.cumulative.getOrDefault(e.getKey(), 0.0));
        }
        return new ServiceHistogram(delta);
    }

    double count() {
        return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
    }

    /** The upper bound, in milliseconds, of the bucket holding quantile {@code q}; NaN without observations. */
    double quantileMillis(double q) {
        double total = count();
        if (total <= 0) {
            return Double.NaN;
        }
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            if (e.getValue() >= q * total) {
                return e.getKey() * 1000;
            }
        }
        return Double.POSITIVE_INFINITY;
    }
}
