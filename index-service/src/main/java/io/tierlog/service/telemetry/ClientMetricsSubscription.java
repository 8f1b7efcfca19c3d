package io.tierlog.service.telemetry;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * One client-metrics subscription (KIP-714; Kafka's CLIENT_METRICS config resource, {@code kafka-client-metrics}):
 * the metric-name prefixes {@link #metrics} that clients matching every pattern of {@link #match} push every
 * {@link #intervalMs}. Built from its configs as Kafka names and checks them ({@link #of}); immutable.
 *
 * @param configs the keys set on the subscription, as given (described back as they were set)
 */
public record ClientMetricsSubscription(String name, List<String> metrics, int intervalMs,
                                        Map<String, Pattern> match, Map<String, String> configs) {
    public static final String METRICS = "metrics";
    public static final String INTERVAL_MS = "interval.ms";
    public static final String MATCH = "match";
    public static final List<String> KEYS = List.of(METRICS, INTERVAL_MS, MATCH);
    /** Kafka's defaults: no metrics, a push every 5 minutes, every client. */
    public static final int DEFAULT_INTERVAL_MS = 300_000;
    /** {@code metrics=*}: every metric the client has. */
    public static final String ALL_METRICS = "*";

    /** What a {@link #match} pattern may test, KIP-714's client selectors. */
    public static final List<String> SELECTORS = List.of("client_instance_id", "client_id", "client_software_name",
            "client_software_version", "client_source_address", "client_source_port");
    static final int MIN_INTERVAL_MS = 100;
    static final int MAX_INTERVAL_MS = 3_600_000;
    /** Kafka has none; this keeps a stored subscription's name bounded. */
    static final int MAX_NAME_CHARS = 1024;

    public ClientMetricsSubscription {
        Objects.requireNonNull(name, "name");
        metrics = List.copyOf(metrics);
        match = Map.copyOf(match);
        configs = Map.copyOf(configs);
    }

    /**
     * The subscription {@code configs} describe (keys absent take Kafka's defaults). Refuses, with INVALID_CONFIG
     * naming the key, what Kafka refuses: an unknown key, an interval outside 100 ms to 1 hour, a match entry that is
     * not {@code selector=regex} over a known selector.
     */
    public static ClientMetricsSubscription of(String name, Map<String, String> configs) {
        if (name == null || name.isBlank()) {
            throw new TierlogException(ErrorType.INVALID_CONFIG, "a client metrics subscription needs a name",
                    Map.of("key", "name"));
        }
        if (name.length() > MAX_NAME_CHARS) {
            throw invalid("name", "a subscription's name is at most " + MAX_NAME_CHARS + " characters");
        }
        for (String key : configs.keySet()) {
            if (!KEYS.contains(key)) {
                throw invalid(key, "unknown client metrics config '" + key + "': a subscription sets "
                        + String.join(", ", KEYS));
            }
        }
        List<String> metrics = list(configs.get(METRICS));
        int intervalMs = DEFAULT_INTERVAL_MS;
        String interval = configs.get(INTERVAL_MS);
        if (interval != null) {
            try {
                intervalMs = Integer.parseInt(interval.strip());
            } catch (NumberFormatException notANumber) {
                throw invalid(INTERVAL_MS, INTERVAL_MS + " must be a whole number of milliseconds: '" + interval + "'");
            }
            if (intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS) {
                throw invalid(INTERVAL_MS, INTERVAL_MS + " must be from " + MIN_INTERVAL_MS + " to "
                        + MAX_INTERVAL_MS + " (1 hour): " + intervalMs);
            }
        }
        Map<String, Pattern> match = new LinkedHashMap<>();
        for (String entry : list(configs.get(MATCH))) {
            String[] parts = entry.split("=", -1);
            String selector = parts[0].strip();
            if (parts.length != 2 || !SELECTORS.contains(selector)) {
                throw invalid(MATCH, "a match entry is selector=regex with a selector of "
                        + String.join(", ", SELECTORS) + ": '" + entry + "'");
            }
            try {
                match.put(selector, Pattern.compile(parts[1].strip()));
            } catch (PatternSyntaxException bad) {
                throw invalid(MATCH, "not a regular expression in '" + entry + "': " + bad.getDescription());
            }
        }
        return new ClientMetricsSubscription(name, metrics, intervalMs, match, configs);
    }

    /** Whether a client with these selector values ({@link #SELECTORS}) matches every pattern (all do when none). */
    public boolean matches(Map<String, String> client) {
        for (Map.Entry<String, Pattern> p : match.entrySet()) {
            String value = client.get(p.getKey());
            if (value == null || !p.getValue().matcher(value).matches()) {
                return false;
            }
        }
        return true;
    }

    /** A Kafka LIST value: comma-separated, each entry trimmed, empty ones dropped. */
    public static List<String> list(String value) {
        if (value == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String s : Arrays.asList(value.split(","))) {
            if (!s.isBlank()) {
                out.add(s.strip());
            }
        }
        return out;
    }

    private static TierlogException invalid(String key, String message) {
        return new TierlogException(ErrorType.INVALID_CONFIG, message, Map.of("key", key));
    }
}
