package io.tierlog.bench.cold;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The index-service's own cold-read counters from {@code /q/metrics} (Prometheus text), so a replay's result can
 * say what the service saw: chunk cache hits and misses, ranged GETs, and the number and total time of cold reads.
 * Samples of one name are summed over their labels. Stateless.
 */
final class ServiceMetrics {
    static final List<String> NAMES = List.of("tierlog_cold_cache_hits_total", "tierlog_cold_cache_misses_total",
            "tierlog_cold_range_gets_total", "tierlog_cold_read_seconds_count", "tierlog_cold_read_seconds_sum");

    private ServiceMetrics() {
    }

    /** The current values of {@link #NAMES} (absent ones are 0). */
    static Map<String, Double> scrape(HttpClient http, URI base) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("/q/metrics answered " + r.statusCode());
        }
        return parse(r.body());
    }

    static Map<String, Double> parse(String text) {
        Map<String, Double> out = new LinkedHashMap<>();
        NAMES.forEach(n -> out.put(n, 0.0));
        for (String line : text.split("\n")) {
            if (line.startsWith("#")) {
                continue;
            }
            int nameEnd = 0;
            while (nameEnd < line.length() && line.charAt(nameEnd) != '{' && line.charAt(nameEnd) != ' ') {
                nameEnd++;
            }
            String name = line.substring(0, nameEnd);
            if (out.containsKey(name)) {
                String value = line.substring(line.lastIndexOf(' ') + 1);
                out.merge(name, Double.parseDouble(value), Double::sum);
            }
        }
        return out;
    }

    /** {@code after - before}, per name. */
    static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> out = new LinkedHashMap<>();
        after.forEach((k, v) -> out.put(k, v - before.getOrDefault(k, 0.0)));
        return out;
    }
}
