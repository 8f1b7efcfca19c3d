package io.tierlog.log.topic;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A topic's configuration, with Kafka's key names and meanings; {@code -1} means unlimited.
 *
 * <ul>
 *   <li>{@code retention.ms}, {@code retention.bytes}: the whole log, hot plus cold.</li>
 *   <li>{@code local.retention.ms}, {@code local.retention.bytes}: the hot tier only; a hot segment is evicted
 *       by them only after its upload is committed. Never larger than the totals. {@code -2} (the default, as in
 *       Kafka) means "the same as the total": it is stored and described as -2, and
 *       {@link #effectiveLocalRetentionMs()} / {@link #effectiveLocalRetentionBytes()} resolve it, so that a user who
 *       changes only {@code retention.ms} gets that retention on the hot tier too.</li>
 *   <li>{@code segment.bytes}, {@code segment.ms}: when the active segment rolls (and so becomes eligible
 *       for tiering).</li>
 *   <li>{@code max.message.bytes}: the largest single record (key + value + headers) accepted.</li>
 * </ul>
 * Instances are immutable and always valid.
 */
public record TopicConfig(long retentionMs, long retentionBytes, long localRetentionMs, long localRetentionBytes,
                          long segmentBytes, long segmentMs, int maxMessageBytes) {

    public static final String RETENTION_MS = "retention.ms";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String LOCAL_RETENTION_MS = "local.retention.ms";
    public static final String LOCAL_RETENTION_BYTES = "local.retention.bytes";
    public static final String SEGMENT_BYTES = "segment.bytes";
    public static final String SEGMENT_MS = "segment.ms";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    /** Kafka's value of {@code local.retention.*} for "the same as the total" ({@code retention.*}). */
    public static final long SAME_AS_TOTAL = -2;
    public static final Set<String> KEYS = Set.of(RETENTION_MS, RETENTION_BYTES, LOCAL_RETENTION_MS,
            LOCAL_RETENTION_BYTES, SEGMENT_BYTES, SEGMENT_MS, MAX_MESSAGE_BYTES);

    /** Kafka's smallest segment.bytes is 14 bytes; we ask for room for at least one batch header. */
    static final long MIN_SEGMENT_BYTES = 1024;
    static final int MAX_SEGMENT_BYTES = Integer.MAX_VALUE;

    /**
     * Defaults: 7 days in all (Kafka's {@code retention.ms}), the hot tier as long as the total (Kafka's -2),
     * 128 MiB or one hour per segment so that sealed segments reach S3 within the hour, Kafka's 1 MiB (+ batch
     * overhead) record limit.
     */
    public static final TopicConfig DEFAULTS = new TopicConfig(
            7L * 24 * 3600 * 1000, -1, SAME_AS_TOTAL, SAME_AS_TOTAL, 128L * 1024 * 1024, 3600L * 1000, 1048588);

    public TopicConfig {
        requireLimit(RETENTION_MS, retentionMs, 1);
        requireLimit(RETENTION_BYTES, retentionBytes, 0);
        requireLocalLimit(LOCAL_RETENTION_MS, localRetentionMs);
        requireLocalLimit(LOCAL_RETENTION_BYTES, localRetentionBytes);
        if (segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > MAX_SEGMENT_BYTES) {
            throw invalid(SEGMENT_BYTES, segmentBytes, "must be in [" + MIN_SEGMENT_BYTES + ", " + MAX_SEGMENT_BYTES + "]");
        }
        if (segmentMs < 1) {
            throw invalid(SEGMENT_MS, segmentMs, "must be >= 1");
        }
        if (maxMessageBytes < 1) {
            throw invalid(MAX_MESSAGE_BYTES, maxMessageBytes, "must be >= 1");
        }
        if (notLarger(localRetentionMs, retentionMs)) {
            throw invalid(LOCAL_RETENTION_MS, localRetentionMs, "must not exceed retention.ms (" + retentionMs + ")");
        }
        if (notLarger(localRetentionBytes, retentionBytes)) {
            throw invalid(LOCAL_RETENTION_BYTES, localRetentionBytes,
                    "must not exceed retention.bytes (" + retentionBytes + ")");
        }
    }

    /** True when {@code local} is a larger limit than {@code total} (-1 = unlimited, -2 = same as the total). */
    private static boolean notLarger(long local, long total) {
        if (total == -1 || local == SAME_AS_TOTAL) {
            return false;
        }
        return local == -1 || local > total;
    }

    /** How long a record stays hot: {@code local.retention.ms}, or {@code retention.ms} where that is -2. */
    public long effectiveLocalRetentionMs() {
        return localRetentionMs == SAME_AS_TOTAL ? retentionMs : localRetentionMs;
    }

    /** How many bytes a partition keeps hot: {@code local.retention.bytes}, or {@code retention.bytes} where -2. */
    public long effectiveLocalRetentionBytes() {
        return localRetentionBytes == SAME_AS_TOTAL ? retentionBytes : localRetentionBytes;
    }

    private static void requireLocalLimit(String key, long value) {
        if (value != -1 && value != SAME_AS_TOTAL && value < 0) {
            throw invalid(key, value, "must be -2 (same as the total), -1 (unlimited) or >= 0");
        }
    }

    private static void requireLimit(String key, long value, long min) {
        if (value != -1 && value < min) {
            throw invalid(key, value, "must be -1 (unlimited) or >= " + min);
        }
    }

    private static TierlogException invalid(String key, Object value, String why) {
        return new TierlogException(ErrorType.INVALID_CONFIG, "config '" + key + "' = " + value + ": " + why,
                Map.of("key", key));
    }

    /**
     * Returns this config with the given keys changed. Values may be JSON numbers or numeric strings (as Kafka's
     * tools pass them). Unknown keys and bad values raise {@code invalid-config} naming the key.
     */
    public TopicConfig with(Map<String, ?> changes) {
        Map<String, Long> values = new LinkedHashMap<>();
        toMap().forEach((k, v) -> values.put(k, v.longValue()));
        for (Map.Entry<String, ?> e : changes.entrySet()) {
            if (!KEYS.contains(e.getKey())) {
                throw new TierlogException(ErrorType.INVALID_CONFIG, "unknown config key '" + e.getKey()
                        + "'; known keys: " + String.join(", ", KEYS.stream().sorted().toList()),
                        Map.of("key", e.getKey()));
            }
            values.put(e.getKey(), parseLong(e.getKey(), e.getValue()));
        }
        long maxMessage = values.get(MAX_MESSAGE_BYTES);
        if (maxMessage > Integer.MAX_VALUE) {
            throw invalid(MAX_MESSAGE_BYTES, maxMessage, "must be <= " + Integer.MAX_VALUE);
        }
        return new TopicConfig(values.get(RETENTION_MS), values.get(RETENTION_BYTES), values.get(LOCAL_RETENTION_MS),
                values.get(LOCAL_RETENTION_BYTES), values.get(SEGMENT_BYTES), values.get(SEGMENT_MS), (int) maxMessage);
    }

    private static long parseLong(String key, Object value) {
        if (value instanceof Integer || value instanceof Long || value instanceof Short) {
            return ((Number) value).longValue();
        }
        if (value instanceof Number n) {
            double d = n.doubleValue();
            if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 9.0e18) {
                return (long) d;
            }
        } else if (value instanceof String s) {
            try {
                return Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                // fall through to the error below
            }
        }
        throw invalid(key, value, "must be an integer");
    }

    /** Kafka-named keys to values, in a stable order. */
    public Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put(RETENTION_MS, retentionMs);
        m.put(RETENTION_BYTES, retentionBytes);
        m.put(LOCAL_RETENTION_MS, localRetentionMs);
        m.put(LOCAL_RETENTION_BYTES, localRetentionBytes);
        m.put(SEGMENT_BYTES, segmentBytes);
        m.put(SEGMENT_MS, segmentMs);
        m.put(MAX_MESSAGE_BYTES, (long) maxMessageBytes);
        return m;
    }
}
