package io.tierlog.bench.compare;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Order statistics of a small list of measurements (trials): median, nearest-rank percentiles, range. Used by the
 * benchmarks that repeat a short trial many times (auth, groups, share groups) and report p50/p99 or medians.
 */
public final class Samples {
    private final double[] sorted;

    public Samples(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no samples");
        }
        this.sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    /** The median (mean of the two middle values for an even count). */
    public double median() {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The nearest-rank percentile: the smallest value with at least {@code p}% of the samples at or below it. */
    public double percentile(double p) {
        int rank = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    public double min() {
        return sorted[0];
    }

    public double max() {
        return sorted[sorted.length - 1];
    }

    public int count() {
        return sorted.length;
    }

    /** "median (min–max)" with {@code pattern} (e.g. "%,.0f") for each number. */
    public String medianAndRange(String pattern) {
        return String.format(Locale.ROOT, pattern + " (" + pattern + "–" + pattern + ")", median(), min(), max());
    }

    @Override
    public String toString() {
        return Arrays.toString(sorted);
    }
}
