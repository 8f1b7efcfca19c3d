package io.tierlog.service.quota;

import io.tierlog.access.Secrets;
import io.tierlog.access.VolumeRecords;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Byte rates an administrator set for one principal, or for every principal (the default), over the service's
 * {@code tierlog.quota.*} settings: what Kafka's client-quota APIs alter and describe ({@code producer_byte_rate},
 * {@code consumer_byte_rate} of a {@code user}). Durable on the shared hot volume ({@link VolumeRecords}, one file per
 * principal and key, named by their SHA-256, replaced whole by a change), so every instance enforces the same rates
 * within its refresh interval. A principal's own rate beats the default, which beats the service's setting, as in
 * Kafka. Thread-safe.
 */
public final class QuotaOverrides implements AutoCloseable {
    /** The entity name of the rate for every principal without its own (Kafka's default user). */
    public static final String DEFAULT = "<default>";

    private final VolumeRecords<Rate, Map<Kind, Map<String, Long>>> records;

    /** The kinds of rate, by Kafka's quota key. */
    public enum Kind {
        PRODUCE("producer_byte_rate"), FETCH("consumer_byte_rate");

        private final String kafkaKey;

        Kind(String kafkaKey) {
            this.kafkaKey = kafkaKey;
        }

        public String kafkaKey() {
            return kafkaKey;
        }

        /** The kind whose Kafka key is {@code key}, or null. */
        public static Kind ofKafkaKey(String key) {
            for (Kind k : values()) {
                if (k.kafkaKey.equals(key)) {
                    return k;
                }
            }
            return null;
        }
    }

    /** One rate: {@code bytesPerSecond} of {@code kind} for {@code entity} (a principal's name, or {@link #DEFAULT}). */
    public record Rate(String entity, Kind kind, long bytesPerSecond) {
        public Rate {
            Objects.requireNonNull(entity, "entity");
            Objects.requireNonNull(kind, "kind");
            if (bytesPerSecond < 1) {
                throw new IllegalArgumentException("a byte rate must be at least 1 byte per second");
            }
        }

        static String key(String entity, Kind kind) {
            return HexFormat.of().formatHex(Secrets.sha256(entity + '\u0000' + kind.kafkaKey()));
        }

        static Rate parse(String key, Map<String, Object> json) {
            Rate o = new Rate((String) json.get("entity"), Kind.ofKafkaKey((String) json.get("key")),
                    ((Number) json.get("bytesPerSecond")).longValue());
            if (!key(o.entity(), o.kind()).equals(key)) {
                throw new IllegalArgumentException("its name is not its rate's");
            }
            return o;
        }
    }

    /** The rates by kind and entity (no allocation per lookup). */
    private static Map<Kind, Map<String, Long>> byKindAndEntity(Map<String, Rate> source) {
        Map<Kind, Map<String, Long>> rates = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            rates.put(k, new HashMap<>());
        }
        source.values().forEach(r -> rates.get(r.kind()).put(r.entity(), r.bytesPerSecond()));
        return rates;
    }

    public QuotaOverrides(Path dir, Clock clock, Secrets secrets) {
        this.records = new VolumeRecords<>(dir, clock, secrets, "quota", Rate::parse,
                QuotaOverrides::byKindAndEntity);
    }

    /** The directory under a hot volume: {@code <data-dir>/__metadata/quotas}. */
    public static Path directoryIn(Path dataDir) {
        return dataDir.resolve("__metadata").resolve("quotas");
    }

    public void startRefresher(Duration period) {
        records.startRefresher(period);
    }

    /** Re-reads the directory now (the refresher does this every period). */
    public void refresh() {
        records.refresh();
    }

    /** Sets a rate (replacing any for that entity and kind); durable before it returns. */
    public void set(Rate rate) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("entity", rate.entity());
        json.put("key", rate.kind().kafkaKey());
        json.put("bytesPerSecond", rate.bytesPerSecond());
        records.put(Rate.key(rate.entity(), rate.kind()), json, rate);
    }

    /** Removes the rate of {@code kind} for {@code entity}; durable before it returns. Whether there was one. */
    public boolean remove(String entity, Kind kind) {
        return records.remove(Rate.key(entity, kind));
    }

    /** Every rate, by entity then kind. */
    public List<Rate> list() {
        List<Rate> out = new ArrayList<>(records.all().values());
        out.sort(Comparator.comparing(Rate::entity).thenComparing(Rate::kind));
        return out;
    }

    /** The rate of {@code kind} set for the principal named {@code principal}, else the default's; empty: none set. */
    public OptionalLong rate(Kind kind, String principal) {
        Map<String, Long> rates = records.index().get(kind);
        Long own = principal == null ? null : rates.get(principal);
        Long rate = own != null ? own : rates.get(DEFAULT);
        return rate == null ? OptionalLong.empty() : OptionalLong.of(rate);
    }

    @Override
    public void close() {
        records.close();
    }
}
