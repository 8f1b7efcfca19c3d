package io.tierlog.bench.soak;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * A least-squares line through a series of samples, for the soak's "no growth trend" verdict: the slope says how
 * fast a figure grows, min/max how much it wanders around that. NaN samples (not measured) are skipped.
 */
public record Trend(int samples, double first, double last, double min, double max, double slopePerHour) {

    public static <T> Trend of(List<T> rows, ToDoubleFunction<T> seconds, ToDoubleFunction<T> value) {
        int n = 0;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        double first = Double.NaN, last = Double.NaN, min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        for (T row : rows) {
            double y = value.applyAsDouble(row);
            if (Double.isNaN(y) || y < 0) {
                continue;
            }
            double x = seconds.applyAsDouble(row) / 3600.0;
            n++;
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            first = Double.isNaN(first) ? y : first;
            last = y;
            min = Math.min(min, y);
            max = Math.max(max, y);
        }
        double denominator = n * sxx - sx * sx;
        double slope = n < 2 || denominator == 0 ? Double.NaN : (n * sxy - sx * sy) / denominator;
        return new Trend(n, first, last, n == 0 ? Double.NaN : min, n == 0 ? Double.NaN : max, slope);
    }

    /** One table row: first, last, min, max and slope per hour, with the unit. */
    public String row(String name, String unit) {
        return String.format(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %+.2f %s/h |", name, samples, first,
                last, min, max, slopePerHour, unit);
    }
}
