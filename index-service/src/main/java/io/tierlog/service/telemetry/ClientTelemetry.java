package io.tierlog.service.telemetry;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tierlog.service.metrics.ClientTelemetryMeters;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TelemetryTooLargeException;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.errors.UnknownSubscriptionIdException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;

/**
 * Client metrics (KIP-714) as Kafka's broker serves them: a client asks what to push (GetTelemetrySubscriptions),
 * gets the metrics every matching subscription names ({@link ClientMetricsSubscriptions}) and the shortest of their
 * intervals, and pushes them that often (PushTelemetry); the pushed points are exported on {@code /q/metrics}
 * ({@link ClientTelemetryMeters}). Kafka's rules: a client asking or pushing again before its interval is throttled
 * (THROTTLING_QUOTA_EXCEEDED) unless its subscription changed since; a push under a subscription id that is no longer
 * the client's is UNKNOWN_SUBSCRIPTION_ID (it asks again); nothing is taken after a client's terminating push.
 *
 * <p>A subscription id is a function of the metrics, the interval and the client instance id, so every instance
 * computes the same one and a client may push to any instance. What a client did when (its throttle) is per instance,
 * as in Kafka, and forgotten after {@code max(60 s, 3 intervals)} of silence, with its exported series
 * ({@link #expire}). Thread-safe.
 */
public final class ClientTelemetry {
    /** Kafka's order of preference: zstd, lz4, gzip, snappy (codec ids). */
    public static final List<Byte> COMPRESSION_TYPES = List.of((byte) 4, (byte) 3, (byte) 1, (byte) 2);
    /** As Kafka's broker: state of at most this many client instances; the least recently heard from goes first. */
    static final int MAX_CLIENTS = 16_384;
    static final long MIN_EXPIRY_MS = 60_000;
    /** A client id may be 32 KiB long; a series' tag need not be. */
    static final int MAX_TAG_CHARS = 256;

    /** What the listener knows of a client connection: KIP-714's selectors but the instance id. */
    public record Client(String clientId, String softwareName, String softwareVersion, String sourceAddress,
                         int sourcePort) {
        Map<String, String> selectors(Uuid instance) {
            Map<String, String> m = new HashMap<>();
            m.put("client_instance_id", instance.toString());
            m.put("client_id", clientId == null ? "" : clientId);
            m.put("client_software_name", softwareName == null ? "" : softwareName);
            m.put("client_software_version", softwareVersion == null ? "" : softwareVersion);
            m.put("client_source_address", sourceAddress == null ? "" : sourceAddress);
            m.put("client_source_port", Integer.toString(sourcePort));
            return m;
        }

        /** The selectors that tag its exported series, each cut to {@value #MAX_TAG_CHARS} characters. */
        Map<String, String> tags(Uuid instance) {
            return Map.of("client_instance_id", instance.toString(), "client_id", cut(clientId),
                    "client_software_name", cut(softwareName), "client_software_version", cut(softwareVersion));
        }

        private static String cut(String value) {
            return value == null ? "" : value.length() > MAX_TAG_CHARS ? value.substring(0, MAX_TAG_CHARS) : value;
        }
    }

    /** What a client instance is to push: {@link #metrics} prefixes ("*": all) every {@link #intervalMs}. */
    public record Subscription(Uuid clientInstanceId, int id, List<String> metrics, int intervalMs) {
    }

    /** A push that passed the checks, whose payload is yet to be read ({@link #export}). */
    public record Admitted(Uuid clientInstanceId, Client client) {
    }

    /** One client instance's requests, as Kafka's {@code ClientMetricsInstance} keeps them. */
    private static final class Instance {
        long lastGetMs;
        long lastPushMs;
        long lastSeenMs;
        int intervalMs = ClientMetricsSubscription.DEFAULT_INTERVAL_MS;
        /** The subscription id this instance last handed out, or 0. */
        int givenId;
        boolean terminating;
    }

    private final ClientMetricsSubscriptions subscriptions;
    private final ClientTelemetryMeters meters;
    private final Clock clock;
    private final int maxBytes;
    private final ConcurrentHashMap<Uuid, Instance> instances = new ConcurrentHashMap<>();

    public ClientTelemetry(ClientMetricsSubscriptions subscriptions, ClientTelemetryMeters meters, Clock clock,
                           int maxBytes) {
        this.subscriptions = subscriptions;
        this.meters = meters;
        this.clock = clock;
        this.maxBytes = maxBytes;
    }

    /** Where pushed points go, and pushes are counted. */
    public ClientTelemetryMeters meters() {
        return meters;
    }

    /** The largest payload a client may push, as told in each subscription. */
    public int maxBytes() {
        return maxBytes;
    }

    /**
     * GetTelemetrySubscriptions: the subscription of {@code asked} (a new instance id when zero).
     *
     * @throws ThrottlingQuotaExceededException when asked again within the interval with nothing changed
     */
    public Subscription subscribe(Uuid asked, Client client) {
        Uuid id = asked == null || Uuid.ZERO_UUID.equals(asked) ? newInstanceId() : asked;
        Subscription s = current(id, client);
        Instance i = instance(id);
        synchronized (i) {
            long now = clock.millis();
            boolean changed = i.givenId != s.id();
            if (!changed && now - Math.max(i.lastGetMs, i.lastPushMs) < s.intervalMs()) {
                throw new ThrottlingQuotaExceededException("asked for its subscription again before its push "
                        + "interval (" + s.intervalMs() + " ms)");
            }
            if (changed) {
                i.lastPushMs = 0; // a new subscription starts afresh, as Kafka's new client instance state does
            }
            i.lastGetMs = now;
            i.givenId = s.id();
            i.intervalMs = s.intervalMs();
        }
        return s;
    }

    /**
     * PushTelemetry's checks, in Kafka's order; the payload is read by {@link #export}.
     *
     * @throws InvalidRequestException              a reserved instance id, or a push after a terminating one
     * @throws ThrottlingQuotaExceededException     pushed again within the interval (a terminating push never is)
     * @throws UnknownSubscriptionIdException       the subscription changed since the client asked
     * @throws UnsupportedCompressionTypeException  a codec Kafka does not have
     * @throws TelemetryTooLargeException           a payload over {@link #maxBytes}
     */
    public Admitted admit(Uuid id, int subscriptionId, boolean terminating, byte compression, int payloadBytes,
                          Client client) {
        if (id == null || Uuid.RESERVED.contains(id)) {
            throw new InvalidRequestException("a push needs the client instance id its subscription gave");
        }
        Subscription s = current(id, client);
        Instance i = instance(id);
        synchronized (i) {
            try {
                if (i.terminating) {
                    throw new InvalidRequestException("the client instance sent its terminating push already");
                }
                long now = clock.millis();
                boolean afterGet = i.lastGetMs > i.lastPushMs;
                if (!afterGet && !terminating && now - i.lastPushMs < s.intervalMs()) {
                    throw new ThrottlingQuotaExceededException("pushed again before its push interval ("
                            + s.intervalMs() + " ms)");
                }
                i.lastPushMs = now;
                i.intervalMs = s.intervalMs();
                if (subscriptionId != s.id()) {
                    throw new UnknownSubscriptionIdException("the client's subscriptions changed: ask again");
                }
                if (!COMPRESSION_TYPES.contains(compression) && compression != 0) {
                    i.givenId = 0; // as Kafka: the client may ask again at once
                    throw new UnsupportedCompressionTypeException("unknown compression type " + compression);
                }
                if (payloadBytes > maxBytes) {
                    throw new TelemetryTooLargeException("a push is at most " + maxBytes + " bytes: " + payloadBytes);
                }
            } finally {
                i.terminating = terminating;
            }
        }
        return new Admitted(id, client);
    }

    /**
     * Exports an admitted push's decompressed OTLP payload.
     *
     * @throws InvalidRecordException when it is not an OTLP MetricsData message (the client stops pushing)
     */
    public void export(Admitted push, byte[] otlp) {
        try {
            meters.record(push.client().tags(push.clientInstanceId()), OtlpPoints.of(otlp));
        } catch (InvalidProtocolBufferException notOtlp) {
            throw new InvalidRecordException("the pushed metrics are not an OTLP MetricsData message");
        }
    }

    /** Forgets the client instances silent for {@code max(60 s, 3 intervals)}, and their exported series. */
    public void expire() {
        long now = clock.millis();
        List<Uuid> gone = new ArrayList<>();
        instances.forEach((id, i) -> {
            synchronized (i) {
                if (now - i.lastSeenMs >= Math.max(MIN_EXPIRY_MS, 3L * i.intervalMs)) {
                    gone.add(id);
                }
            }
        });
        gone.forEach(this::forget);
    }

    /** Client instances this instance has state for. */
    int instances() {
        return instances.size();
    }

    private void forget(Uuid id) {
        instances.remove(id);
        meters.forget(id.toString());
    }

    /** The subscription every matching subscription adds up to now: all their metrics, the shortest interval. */
    private Subscription current(Uuid id, Client client) {
        Map<String, String> selectors = client.selectors(id);
        TreeSet<String> metrics = new TreeSet<>();
        int interval = ClientMetricsSubscription.DEFAULT_INTERVAL_MS;
        boolean all = false;
        for (ClientMetricsSubscription s : subscriptions.all()) {
            if (s.matches(selectors)) {
                metrics.addAll(s.metrics());
                all |= s.metrics().contains(ClientMetricsSubscription.ALL_METRICS);
                interval = Math.min(interval, s.intervalMs());
            }
        }
        List<String> requested = all ? List.of(ClientMetricsSubscription.ALL_METRICS) : List.copyOf(metrics);
        // Kafka's id: CRC32C of the metrics and interval, XOR the instance id's hash; sorted, so every instance
        // computes the same.
        CRC32C crc = new CRC32C();
        crc.update((requested + "" + interval).getBytes(StandardCharsets.UTF_8));
        return new Subscription(id, (int) crc.getValue() ^ id.hashCode(), requested, interval);
    }

    private Instance instance(Uuid id) {
        Instance i = instances.get(id);
        if (i == null) {
            if (instances.size() >= MAX_CLIENTS) {
                evictLeastRecent();
            }
            i = instances.computeIfAbsent(id, k -> new Instance());
        }
        synchronized (i) {
            i.lastSeenMs = clock.millis();
        }
        return i;
    }

    private void evictLeastRecent() {
        Uuid oldest = null;
        long oldestMs = Long.MAX_VALUE;
        for (Map.Entry<Uuid, Instance> e : instances.entrySet()) {
            long seen = e.getValue().lastSeenMs;
            if (seen < oldestMs) {
                oldestMs = seen;
                oldest = e.getKey();
            }
        }
        if (oldest != null) {
            forget(oldest);
        }
    }

    private Uuid newInstanceId() {
        Uuid id = Uuid.randomUuid();
        while (instances.containsKey(id) || Uuid.RESERVED.contains(id)) {
            id = Uuid.randomUuid();
        }
        return id;
    }
}
