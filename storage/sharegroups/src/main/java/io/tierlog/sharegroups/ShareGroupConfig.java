package io.tierlog.sharegroups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A share group's settings (Kafka's names where Kafka has one). {@code start}: where a share-partition first touched
 * begins ({@code earliest} = the log start, {@code latest} = the high watermark; Kafka's
 * {@code share.auto.offset.reset}, default latest). {@code max.delivery.attempts}: deliveries without an accept after
 * which a record is treated as rejected ({@code group.share.delivery.count.limit}, default 5).
 * {@code redelivery.delay.ms}: how long a released record waits before it is leased again. {@code dead.letter.topic}:
 * where rejected records are produced, or null. {@code isolation}: {@code read_uncommitted} delivers every record up
 * to the high watermark; {@code read_committed} only what a read_committed consumer reads, up to the last stable
 * offset and never a record of an aborted transaction (Kafka's {@code share.isolation.level}). {@code lease.ms}: how
 * long a lease lasts when the lease call names none, and the acquisition lock of the group's Kafka share consumers
 * (Kafka's {@code share.record.lock.duration.ms}); null: the caller's default.
 */
public record ShareGroupConfig(String start, int maxDeliveryAttempts, long redeliveryDelayMs, String deadLetterTopic,
                               String isolation, Long leaseMs) {
    public static final String READ_UNCOMMITTED = "read_uncommitted";
    public static final String READ_COMMITTED = "read_committed";
    public static final ShareGroupConfig DEFAULTS = new ShareGroupConfig("latest", 5, 0, null);
    static final int MAX_DELIVERY_ATTEMPTS_LIMIT = 100;
    static final long MAX_REDELIVERY_DELAY_MS = 24 * 3600_000L;
    /** The range of {@code lease.ms}: HTTP's for a lease call's own {@code leaseMs}, at least a second. */
    public static final long MIN_LEASE_MS = 1_000;
    public static final long MAX_LEASE_MS = 3_600_000;

    /** A config at {@code read_uncommitted}. */
    public ShareGroupConfig(String start, int maxDeliveryAttempts, long redeliveryDelayMs, String deadLetterTopic) {
        this(start, maxDeliveryAttempts, redeliveryDelayMs, deadLetterTopic, READ_UNCOMMITTED);
    }

    /** A config without its own lease duration. */
    public ShareGroupConfig(String start, int maxDeliveryAttempts, long redeliveryDelayMs, String deadLetterTopic,
                            String isolation) {
        this(start, maxDeliveryAttempts, redeliveryDelayMs, deadLetterTopic, isolation, null);
    }

    public ShareGroupConfig {
        if (!READ_UNCOMMITTED.equals(isolation) && !READ_COMMITTED.equals(isolation)) {
            throw invalid("isolation", "isolation must be read_uncommitted or read_committed: " + isolation);
        }
        if (leaseMs != null && (leaseMs < MIN_LEASE_MS || leaseMs > MAX_LEASE_MS)) {
            throw invalid("lease.ms", "lease.ms must be " + MIN_LEASE_MS + ".." + MAX_LEASE_MS + ": " + leaseMs);
        }
        if (!"earliest".equals(start) && !"latest".equals(start)) {
            throw invalid("start", "start must be earliest or latest: " + start);
        }
        if (maxDeliveryAttempts < 1 || maxDeliveryAttempts > MAX_DELIVERY_ATTEMPTS_LIMIT) {
            throw invalid("max.delivery.attempts", "max.delivery.attempts must be 1.." + MAX_DELIVERY_ATTEMPTS_LIMIT
                    + ": " + maxDeliveryAttempts);
        }
        if (redeliveryDelayMs < 0 || redeliveryDelayMs > MAX_REDELIVERY_DELAY_MS) {
            throw invalid("redelivery.delay.ms", "redelivery.delay.ms must be 0.." + MAX_REDELIVERY_DELAY_MS + ": "
                    + redeliveryDelayMs);
        }
        if (deadLetterTopic != null) {
            try {
                Names.requireValidTopic(deadLetterTopic);
            } catch (TierlogException e) {
                throw invalid("dead.letter.topic", "dead.letter.topic is not a valid topic name: " + deadLetterTopic);
            }
        }
    }

    /**
     * The config a PUT body describes: every key it omits takes its default. Values as Jackson binds JSON (String,
     * Integer/Long, null).
     *
     * @throws TierlogException {@code invalid-config} naming the key, for an unknown key or a bad value
     */
    public static ShareGroupConfig parse(Map<String, Object> body) {
        for (String key : body.keySet()) {
            if (!DEFAULTS.toMap().containsKey(key)) {
                throw invalid(key, "unknown share-group config key '" + key + "'");
            }
        }
        Object start = body.getOrDefault("start", DEFAULTS.start);
        if (!(start instanceof String s)) {
            throw invalid("start", "start must be earliest or latest");
        }
        Object dlt = body.getOrDefault("dead.letter.topic", null);
        if (dlt != null && !(dlt instanceof String)) {
            throw invalid("dead.letter.topic", "dead.letter.topic must be a topic name or null");
        }
        Object isolation = body.getOrDefault("isolation", DEFAULTS.isolation);
        if (!(isolation instanceof String i)) {
            throw invalid("isolation", "isolation must be read_uncommitted or read_committed");
        }
        Long leaseMs = body.get("lease.ms") == null ? null : whole(body, "lease.ms", 0);
        return new ShareGroupConfig(s, (int) whole(body, "max.delivery.attempts", DEFAULTS.maxDeliveryAttempts),
                whole(body, "redelivery.delay.ms", DEFAULTS.redeliveryDelayMs), (String) dlt, i, leaseMs);
    }

    /** The group's lease duration, or {@code callersDefault} when it sets none. */
    public long leaseMsOr(long callersDefault) {
        return leaseMs != null ? leaseMs : callersDefault;
    }

    public boolean readCommitted() {
        return READ_COMMITTED.equals(isolation);
    }

    private static long whole(Map<String, Object> body, String key, long dflt) {
        Object v = body.getOrDefault(key, dflt);
        if (v instanceof Integer || v instanceof Long) {
            long l = ((Number) v).longValue();
            if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE && key.equals("max.delivery.attempts")) {
                throw invalid(key, key + " is out of range: " + l);
            }
            return l;
        }
        throw invalid(key, key + " must be a whole number");
    }

    /** The config under its external key names (the JSON of PUT and GET). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("start", start);
        m.put("max.delivery.attempts", maxDeliveryAttempts);
        m.put("redelivery.delay.ms", redeliveryDelayMs);
        m.put("dead.letter.topic", deadLetterTopic);
        m.put("isolation", isolation);
        m.put("lease.ms", leaseMs);
        return m;
    }

    private static TierlogException invalid(String key, String detail) {
        return new TierlogException(ErrorType.INVALID_CONFIG, detail, Map.of("field", key));
    }
}
