package io.tierlog.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The metrics Kafka clients push (KIP-714), exported on {@code /q/metrics} under the names they push
 * ({@code org.apache.kafka.producer.record.send.rate} scrapes as {@code org_apache_kafka_producer_record_send_rate}),
 * tagged with the client ({@code client_instance_id}, {@code client_id}, {@code client_software_name},
 * {@code client_software_version}) and each point's own attributes ({@code topic}, {@code node_id}, ...). A gauge
 * keeps its last value; a sum adds up its deltas (clients push deltas, as the subscription asks) and scrapes as a
 * counter. Only names under {@value #NAMESPACE} are taken, so a client cannot shadow the service's own meters.
 *
 * <p>At most {@code maxSeries} series at once: a point of a new series beyond that is dropped and counted
 * ({@code tierlog_client_telemetry_points_dropped_total}, as is a point whose series the registry refuses: Prometheus
 * wants one set of tag keys per name). A client's series go when it is forgotten ({@link #forget}). Thread-safe.
 */
public final class ClientTelemetryMeters {
    private static final Logger LOG = Logger.getLogger(ClientTelemetryMeters.class);
    /** KIP-714's namespace of client metrics, the Java client's and librdkafka's alike. */
    public static final String NAMESPACE = "org.apache.kafka.";
    static final String CLIENT_INSTANCE_ID = "client_instance_id";
    private static final Pattern TAG_KEY = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]{0,63}");
    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z0-9_.\\-]{1,200}");
    private static final int MAX_POINT_TAGS = 8;
    private static final int MAX_TAG_CHARS = 256;

    /**
     * One data point of a pushed metric.
     *
     * @param sum   a sum (a counter), else a gauge
     * @param delta for a sum: the value is the change since the last push, else the running total
     */
    public record Point(String name, boolean sum, boolean delta, Map<String, String> attributes, double value) {
    }

    /** A series' value, read by its meter on scrape. */
    private static final class Value {
        private volatile double value;
    }

    private record Series(Meter meter, Value value) {
    }

    private final MeterRegistry registry;
    private final int maxSeries;
    private final ConcurrentHashMap<String, Series> series = new ConcurrentHashMap<>();
    /** Each client instance's series keys, so forgetting one costs its own series only. */
    private final Map<String, List<String>> keysByClient = new HashMap<>();
    private final Counter dropped;

    ClientTelemetryMeters(MeterRegistry registry, int maxSeries) {
        this.registry = registry;
        this.maxSeries = maxSeries;
        this.dropped = Counter.builder("tierlog.client.telemetry.points.dropped")
                .description("Pushed client metric points not exported: past the series limit, or refused by "
                        + "the registry").register(registry);
        Gauge.builder("tierlog.client.telemetry.series", series, Map::size)
                .description("Series of pushed client metrics exported now").register(registry);
    }

    /** Counts a PushTelemetry answered with {@code error} ("none" when accepted). */
    public void push(String error) {
        registry.counter("tierlog.client.telemetry.pushes", "error", error).increment();
    }

    /** Records {@code points} of one push by the client {@code clientTags} names (its instance id among them). */
    public void record(Map<String, String> clientTags, List<Point> points) {
        String instance = clientTags.get(CLIENT_INSTANCE_ID);
        for (Point p : points) {
            if (!p.name().startsWith(NAMESPACE) || !METRIC_NAME.matcher(p.name()).matches()) {
                dropped.increment();
                continue;
            }
            Tags tags = tags(clientTags, p.attributes());
            String key = p.name() + '\u0000' + tags;
            Series s = series.get(key);
            if (s == null) {
                s = register(instance, key, p, tags);
                if (s == null) {
                    dropped.increment();
                    continue;
                }
            }
            synchronized (s.value()) {
                s.value().value = p.sum() && p.delta() ? s.value().value + p.value() : p.value();
            }
        }
    }

    private synchronized Series register(String instance, String key, Point p, Tags tags) {
        Series known = series.get(key);
        if (known != null) {
            return known;
        }
        if (series.size() >= maxSeries) {
            return null;
        }
        Value v = new Value();
        Meter meter;
        try {
            meter = p.sum()
                    ? FunctionCounter.builder(p.name(), v, x -> x.value).tags(tags).register(registry)
                    : Gauge.builder(p.name(), v, x -> x.value).tags(tags).register(registry);
        } catch (RuntimeException refused) {
            LOG.debugf("client metric %s not exported: %s", p.name(), refused.getMessage());
            return null;
        }
        Series s = new Series(meter, v);
        series.put(key, s);
        keysByClient.computeIfAbsent(instance, k -> new ArrayList<>()).add(key);
        return s;
    }

    /** Removes every series of the client instance {@code clientInstanceId}. */
    public synchronized void forget(String clientInstanceId) {
        List<String> keys = keysByClient.remove(clientInstanceId);
        if (keys != null) {
            for (String key : keys) {
                registry.remove(series.remove(key).meter());
            }
        }
    }

    /**
     * The client's tags, then the point's attributes that are valid tag keys and not the client's (at most 8, their
     * values cut to 256 characters).
     */
    private static Tags tags(Map<String, String> clientTags, Map<String, String> attributes) {
        TreeMap<String, String> all = new TreeMap<>();
        int added = 0;
        for (Map.Entry<String, String> a : new TreeMap<>(attributes).entrySet()) {
            String key = a.getKey().replace('.', '_').replace('-', '_');
            if (added < MAX_POINT_TAGS && TAG_KEY.matcher(key).matches() && !clientTags.containsKey(key)) {
                String value = a.getValue();
                all.put(key, value.length() > MAX_TAG_CHARS ? value.substring(0, MAX_TAG_CHARS) : value);
                added++;
            }
        }
        clientTags.forEach((k, v) -> all.put(k, v == null ? "" : v));
        List<Tag> out = new ArrayList<>(all.size());
        all.forEach((k, v) -> out.add(Tag.of(k, v)));
        return Tags.of(out);
    }
}
