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
import java.util.function.Function;

/**
 * Rates an administrator set for quota entities, over the service's {@code tierlog.quota.*} settings: what Kafka's
 * client-quota APIs alter and describe ({@link Kind}). An entity is a user (a principal, or {@link #DEFAULT}: each
 * principal without its own), a Kafka client id (or {@link #DEFAULT}: each client id without its own), or both;
 * Kafka's order decides which applies ({@link #bucket}). An ip entity (an address, or {@link #DEFAULT}) stands alone
 * and has only the connection rate ({@link #connectionRate}). Durable on the
 * shared hot volume ({@link VolumeRecords}, one file per entity and key, named by their SHA-256, replaced whole by a
 * change), so every instance enforces the same rates within its refresh interval. Thread-safe.
 */
public final class QuotaOverrides implements AutoCloseable {
    /** The entity name of the rate for every principal without its own (Kafka's default user). */
    public static final String DEFAULT = "<default>";

    /** Bucket-key prefixes of the entity shapes that name a client id ({@link #bucket}). */
    private static final String USER_AND_CLIENT = "user+client:";
    private static final String CLIENT = "client:";
    private static final char SEPARATOR = '\u0001';
    private static final char IP = '\u0002';

    private final VolumeRecords<Rate, Map<Kind, Map<Entity, Long>>> records;

    /**
     * A quota entity: {@code user} a principal's name, {@link #DEFAULT} or null (not part of it), {@code client} a
     * client id, {@link #DEFAULT} or null; or {@code ip} alone, an address or {@link #DEFAULT} (Kafka's ip entity).
     */
    public record Entity(String user, String client, String ip) {
        public Entity {
            if (ip == null ? user == null && client == null : user != null || client != null) {
                throw new IllegalArgumentException("a quota entity names a user, a client id or both, or an ip alone");
            }
        }

        public Entity(String user, String client) {
            this(user, client, null);
        }

        /** Kafka's ip entity: an address, or {@link #DEFAULT}. */
        public static Entity ip(String address) {
            return new Entity(null, null, address);
        }

        /** The name its file key is made from: a user alone keeps the name it had before client ids existed. */
        String name() {
            return ip != null ? IP + ip : client == null ? user : (user == null ? "" : user) + SEPARATOR + client;
        }
    }

    /** The kinds of rate, by Kafka's quota key, and what one unit of each is. */
    public enum Kind {
        PRODUCE("producer_byte_rate", "bytes", 1, "bytes per second"),
        FETCH("consumer_byte_rate", "bytes", 1, "bytes per second"),
        /** Partitions created (with a topic, or added to one) or deleted (with their topic). */
        MUTATION("controller_mutation_rate", "partitions", 1, "partitions per second"),
        /** Connections opened to the Kafka listener from one address: ip entities only. */
        CONNECTION("connection_creation_rate", "connections", 1, "connections per second"),
        /**
         * The listener's thread time spent on a caller's requests. Kafka's key is a percentage of one thread's time
         * (100: one whole thread), stored as microseconds per second: 1% is 10,000.
         */
        REQUEST("request_percentage", "microseconds", 10_000, "percent of one thread's time");

        private final String kafkaKey;
        private final String unit;
        private final long perKafkaUnit;
        private final String kafkaUnit;

        Kind(String kafkaKey, String unit, long perKafkaUnit, String kafkaUnit) {
            this.kafkaKey = kafkaKey;
            this.unit = unit;
            this.perKafkaUnit = perKafkaUnit;
            this.kafkaUnit = kafkaUnit;
        }

        /** What the value of Kafka's key counts ({@code bytes per second}, {@code percent of one thread's time}). */
        public String kafkaUnit() {
            return kafkaUnit;
        }

        public String kafkaKey() {
            return kafkaKey;
        }

        /** What the rate counts per second ({@code bytes}, {@code partitions}). */
        public String unit() {
            return unit;
        }

        /**
         * A rate per second in {@link #unit}s from the value of Kafka's key, rounded; empty unless the value is finite
         * and at least one unit ({@link #toKafka toKafka(1)}).
         */
        public OptionalLong fromKafka(double value) {
            if (!(value >= toKafka(1)) || Double.isInfinite(value)) {
                return OptionalLong.empty();
            }
            return OptionalLong.of(Math.max(1, Math.round(value * perKafkaUnit)));
        }

        /** The value of Kafka's key for a rate of {@code perSecond} {@link #unit}s. */
        public double toKafka(long perSecond) {
            return perSecond / (double) perKafkaUnit;
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

    /** One rate: {@code perSecond} units of {@code kind} ({@link Kind#unit}) for {@code entity}. */
    public record Rate(Entity entity, Kind kind, long perSecond) {
        public Rate {
            Objects.requireNonNull(entity, "entity");
            Objects.requireNonNull(kind, "kind");
            if (perSecond < 1) {
                throw new IllegalArgumentException("a rate must be at least 1 per second");
            }
            if ((entity.ip() != null) != (kind == Kind.CONNECTION)) {
                throw new IllegalArgumentException("the connection rate is an ip entity's only rate");
            }
        }

        /** A user's rate ({@code user} a principal's name or {@link #DEFAULT}). */
        public Rate(String user, Kind kind, long perSecond) {
            this(new Entity(user, null), kind, perSecond);
        }

        static String key(Entity entity, Kind kind) {
            return HexFormat.of().formatHex(Secrets.sha256(entity.name() + '\u0000' + kind.kafkaKey()));
        }

        static Rate parse(String key, Map<String, Object> json) {
            // "bytesPerSecond": files written before mutation and connection rates had other units.
            Number perSecond = (Number) json.getOrDefault("perSecond", json.get("bytesPerSecond"));
            Rate o = new Rate(new Entity((String) json.get("entity"), (String) json.get("client"),
                    (String) json.get("ip")), Kind.ofKafkaKey((String) json.get("key")), perSecond.longValue());
            if (!key(o.entity(), o.kind()).equals(key)) {
                throw new IllegalArgumentException("its name is not its rate's");
            }
            return o;
        }
    }

    /** The rates by kind and entity (no allocation per lookup). */
    private static Map<Kind, Map<Entity, Long>> byKindAndEntity(Map<String, Rate> source) {
        Map<Kind, Map<Entity, Long>> rates = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            rates.put(k, new HashMap<>());
        }
        source.values().forEach(r -> rates.get(r.kind()).put(r.entity(), r.perSecond()));
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
        json.put("entity", rate.entity().user());
        if (rate.entity().client() != null) {
            json.put("client", rate.entity().client());
        }
        if (rate.entity().ip() != null) {
            json.put("ip", rate.entity().ip());
        }
        json.put("key", rate.kind().kafkaKey());
        json.put("perSecond", rate.perSecond());
        records.put(Rate.key(rate.entity(), rate.kind()), json, rate);
    }

    /** Removes the rate of {@code kind} for {@code entity}; durable before it returns. Whether there was one. */
    public boolean remove(Entity entity, Kind kind) {
        return records.remove(Rate.key(entity, kind));
    }

    /** Removes a user's rate ({@link #remove(Entity, Kind)}). */
    public boolean remove(String user, Kind kind) {
        return remove(new Entity(user, null), kind);
    }

    /** Every rate, by user, then client id (entities without one first), then ip, then kind. */
    public List<Rate> list() {
        List<Rate> out = new ArrayList<>(records.all().values());
        out.sort(Comparator.comparing((Rate r) -> r.entity().user(), Comparator.nullsFirst(Comparator.naturalOrder()))
                .thenComparing(r -> r.entity().client(), Comparator.nullsFirst(Comparator.naturalOrder()))
                .thenComparing(r -> r.entity().ip(), Comparator.nullsFirst(Comparator.naturalOrder()))
                .thenComparing(Rate::kind));
        return out;
    }

    /** The connection rate set for {@code address}, else for the default ip; empty: none set. */
    public OptionalLong connectionRate(String address) {
        Map<Entity, Long> rates = records.index().get(Kind.CONNECTION);
        if (rates.isEmpty()) {
            return OptionalLong.empty();
        }
        Long rate = first(rates, Entity.ip(address), Entity.ip(DEFAULT));
        return rate == null ? OptionalLong.empty() : OptionalLong.of(rate);
    }

    /** The rate of {@code kind} set for the principal named {@code principal}, else the default's; empty: none set. */
    public OptionalLong rate(Kind kind, String principal) {
        Map<Entity, Long> rates = records.index().get(kind);
        Long own = principal == null ? null : rates.get(new Entity(principal, null));
        Long rate = own != null ? own : rates.get(new Entity(DEFAULT, null));
        return rate == null ? OptionalLong.empty() : OptionalLong.of(rate);
    }

    /**
     * The bucket a caller's bytes of {@code kind} count in, by Kafka's order of quota entities: the caller's user with
     * its client id, with the default client id, alone; the default user with the client id, with the default
     * client id, alone; the client id alone, the default client id alone. A default stands for each user (or client
     * id) without its own, so each gets its own bucket at that rate. {@code callerKey} is the caller's bucket when
     * the rate is per user (or none applies): {@link Quotas#key}. A null {@code clientId} (HTTP) matches only entities
     * without one. Map lookups only; none at all while no rate of {@code kind} is set.
     *
     * @param user the caller's principal name, or null (an unauthenticated caller: only defaults reach it)
     */
    public String bucket(Kind kind, String callerKey, String user, String clientId) {
        Map<Entity, Long> rates = records.index().get(kind);
        if (rates.isEmpty() || clientId == null) {
            return callerKey;
        }
        // The caller key's length first: neither a principal's name nor a client id can then be read as the other.
        String pair = USER_AND_CLIENT + callerKey.length() + ':' + callerKey + clientId;
        if (user != null) {
            if (rates.containsKey(new Entity(user, clientId)) || rates.containsKey(new Entity(user, DEFAULT))) {
                return pair;
            }
            if (rates.containsKey(new Entity(user, null))) {
                return callerKey;
            }
        }
        if (rates.containsKey(new Entity(DEFAULT, clientId)) || rates.containsKey(new Entity(DEFAULT, DEFAULT))) {
            return pair;
        }
        if (rates.containsKey(new Entity(DEFAULT, null))) {
            return callerKey;
        }
        if (rates.containsKey(new Entity(null, clientId)) || rates.containsKey(new Entity(null, DEFAULT))) {
            return CLIENT + clientId;
        }
        return callerKey;
    }

    /**
     * The rate of a bucket named by {@link #bucket} that names a client id, the first of its shape in Kafka's order;
     * empty for a caller's own bucket ({@code callerKey}: the user's rate, {@link #rate}) or when none is set now.
     *
     * @param userOf the principal name in a caller key, or null for an unauthenticated caller's
     */
    public OptionalLong clientRate(Kind kind, String bucket, Function<String, String> userOf) {
        Map<Entity, Long> rates = records.index().get(kind);
        Long rate = null;
        if (bucket.startsWith(CLIENT)) {
            String client = bucket.substring(CLIENT.length());
            rate = first(rates, new Entity(null, client), new Entity(null, DEFAULT));
        } else if (bucket.startsWith(USER_AND_CLIENT)) {
            int colon = bucket.indexOf(':', USER_AND_CLIENT.length());
            int end = colon + 1 + Integer.parseInt(bucket, USER_AND_CLIENT.length(), colon, 10);
            String user = userOf.apply(bucket.substring(colon + 1, end));
            String client = bucket.substring(end);
            rate = user == null ? null : first(rates, new Entity(user, client), new Entity(user, DEFAULT));
            if (rate == null) {
                rate = first(rates, new Entity(DEFAULT, client), new Entity(DEFAULT, DEFAULT));
            }
        }
        return rate == null ? OptionalLong.empty() : OptionalLong.of(rate);
    }

    /** Whether {@code bucket} names a client id (its rate is {@link #clientRate}'s). */
    public static boolean namesClient(String bucket) {
        return bucket.startsWith(CLIENT) || bucket.startsWith(USER_AND_CLIENT);
    }

    private static Long first(Map<Entity, Long> rates, Entity preferred, Entity otherwise) {
        Long rate = rates.get(preferred);
        return rate != null ? rate : rates.get(otherwise);
    }

    @Override
    public void close() {
        records.close();
    }
}
