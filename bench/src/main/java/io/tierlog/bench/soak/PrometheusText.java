package io.tierlog.bench.soak;

import java.util.List;

/**
 * Sums of samples in a Prometheus text exposition ({@code /q/metrics}), e.g. the heap's
 * {@code jvm_memory_used_bytes{area="heap",...}} over all heap pools. Only what the soak needs: no types, no
 * escaping beyond what Micrometer writes.
 */
public final class PrometheusText {
    private final List<String> lines;

    public PrometheusText(String text) {
        this.lines = text.lines().filter(l -> !l.startsWith("#")).toList();
    }

    /**
     * The sum of every sample of metric {@code name} whose labels contain each of {@code labels} (written as in
     * the text, e.g. {@code area="heap"}); NaN when there is none.
     */
    public double sum(String name, String... labels) {
        double sum = 0;
        boolean found = false;
        for (String line : lines) {
            if (!line.startsWith(name) || line.length() == name.length()) {
                continue;
            }
            char next = line.charAt(name.length());
            if (next != '{' && next != ' ') {
                continue; // another metric whose name starts with this one
            }
            int space = line.lastIndexOf(' ');
            String series = line.substring(0, space);
            boolean match = true;
            for (String label : labels) {
                match &= series.contains(label);
            }
            if (match) {
                try {
                    sum += Double.parseDouble(line.substring(space + 1));
                    found = true;
                } catch (NumberFormatException ignored) {
                    // a sample we cannot read counts as absent
                }
            }
        }
        return found ? sum : Double.NaN;
    }
}
