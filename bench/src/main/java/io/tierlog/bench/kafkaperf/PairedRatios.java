package io.tierlog.bench.kafkaperf;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The ratios of runs paired in time (Kafka's i-th run against Tierlog's i-th), their median, and a 95% interval of
 * that median from the order statistics alone (the sign-test interval: no assumption about the spread, and the same
 * answer every time). A consume run's spread between runs is wider than the difference between the servers, so the
 * interval says whether a median below or above 1.0x means anything.
 *
 * @param median    the median ratio
 * @param low       the interval's lower end, NaN when there are too few pairs for 95%
 * @param high      the interval's upper end, NaN likewise
 * @param pairs     how many pairs
 */
record PairedRatios(double median, double low, double high, int pairs) {

    /**
     * @param higherIsBetter true: Tierlog/Kafka (throughput); false: Kafka/Tierlog (latency, CPU)
     * @return null when the two lists do not pair (a run failed on one side)
     */
    static <T> PairedRatios of(List<T> kafka, List<T> tierlog, ToDoubleFunction<T> f, boolean higherIsBetter) {
        if (kafka.size() != tierlog.size() || kafka.isEmpty()) {
            return null;
        }
        double[] r = new double[kafka.size()];
        for (int i = 0; i < r.length; i++) {
            double k = f.applyAsDouble(kafka.get(i));
            double t = f.applyAsDouble(tierlog.get(i));
            r[i] = higherIsBetter ? t / k : k / t;
        }
        Arrays.sort(r);
        int n = r.length;
        double median = n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
        int j = rankFor95(n);
        return j == 0 ? new PairedRatios(median, Double.NaN, Double.NaN, n)
                : new PairedRatios(median, r[j - 1], r[n - j], n);
    }

    /**
     * The largest rank j (1-based) such that [r(j), r(n+1-j)] covers the median with at least 95%: twice the chance
     * that a Binomial(n, 1/2) is below j is at most 5%. 0 when no such rank exists (n below 6).
     */
    static int rankFor95(int n) {
        int best = 0;
        double below = 0; // P(X <= k - 1)
        double p = Math.pow(0.5, n); // P(X = 0)
        for (int k = 1; k <= n / 2; k++) {
            below += p;
            p = p * (n - (k - 1)) / k; // P(X = k)
            if (2 * below <= 0.05) {
                best = k;
            }
        }
        return best;
    }

    /** "1.00x (0.95x–1.06x, 27 pairs)", or without the interval when the pairs are too few. */
    String describe() {
        String m = String.format(Locale.ROOT, "%.2fx", median);
        return Double.isNaN(low) ? m + " (" + pairs + " pairs, too few for a 95% interval)"
                : m + String.format(Locale.ROOT, " (%.2fx–%.2fx, %d pairs)", low, high, pairs);
    }
}
