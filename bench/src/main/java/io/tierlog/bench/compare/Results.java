package io.tierlog.bench.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every sample the comparison took, grouped by what was measured, plus the notes that say what failed or is not
 * comparable. Medians over runs are what the report shows. Used from one thread.
 */
public final class Results {
    /** What one sample measured: a phase of one system at one durability and producer count. */
    public record Key(String phase, String system, Durability durability, int producers) {
    }

    private final Map<Key, List<Map<String, Double>>> samples = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();

    public void add(Key key, Map<String, Double> metrics) {
        samples.computeIfAbsent(key, k -> new ArrayList<>()).add(Map.copyOf(metrics));
    }

    public void note(String note) {
        notes.add(note);
    }

    public List<String> notes() {
        return List.copyOf(notes);
    }

    public Map<Key, List<Map<String, Double>>> samples() {
        return samples;
    }

    public int count(Key key) {
        return samples.getOrDefault(key, List.of()).size();
    }

    /** The median of a metric over the runs of {@code key}; empty when nothing was measured. */
    public OptionalDouble median(Key key, String metric) {
        double[] values = samples.getOrDefault(key, List.of()).stream()
                .filter(m -> m.containsKey(metric)).mapToDouble(m -> m.get(metric)).sorted().toArray();
        return median(values);
    }

    static OptionalDouble median(double[] sorted) {
        int n = sorted.length;
        if (n == 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
    }

    public Set<Integer> producerCounts(String phase) {
        Set<Integer> counts = new TreeSet<>();
        samples.keySet().stream().filter(k -> k.phase().equals(phase)).forEach(k -> counts.add(k.producers()));
        return counts;
    }
}
