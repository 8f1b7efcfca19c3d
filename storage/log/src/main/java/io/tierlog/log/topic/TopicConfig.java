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
 *   <li>{@code cleanup.policy}: {@code delete} (retention removes whole segments), {@code compact} (the cleaner keeps
 *       the last record of each key; retention.ms/bytes remove nothing) or {@code compact,delete} (both). Kafka's
 *       spellings are accepted in any order and stored in this canonical form.</li>
 *   <li>{@code delete.retention.ms}: how long a tombstone survives after the cleaner first kept it.</li>
 *   <li>{@code min.compaction.lag.ms}: a record younger than this (by its segment's largest timestamp) is never
 *       compacted away.</li>
 *   <li>{@code min.cleanable.dirty.ratio}: the share of not-yet-cleaned bytes in the cleanable range that starts a
 *       pass, a decimal in [0, 1].</li>
 *   <li>{@code message.timestamp.type}: {@code CreateTime} (records keep the producer's timestamps) or
 *       {@code LogAppendTime} (the writer stamps each batch with the time it appends it, and every record of the batch
 *       reads as that time, as in Kafka; retention and time lookups then follow the log's clock).</li>
 * </ul>
 * Instances are immutable and always valid.
 */
public record TopicConfig(long retentionMs, long retentionBytes, long localRetentionMs, long localRetentionBytes,
                          long segmentBytes, long segmentMs, int maxMessageBytes, String cleanupPolicy,
                          long deleteRetentionMs, long minCompactionLagMs, double minCleanableDirtyRatio,
                          String messageTimestampType) {

    public static final String RETENTION_MS = "retention.ms";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String LOCAL_RETENTION_MS = "local.retention.ms";
    public static final String LOCAL_RETENTION_BYTES = "local.retention.bytes";
    public static final String SEGMENT_BYTES = "segment.bytes";
    public static final String SEGMENT_MS = "segment.ms";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    public static final String CLEANUP_POLICY = "cleanup.policy";
    public static final String DELETE_RETENTION_MS = "delete.retention.ms";
    public static final String MIN_COMPACTION_LAG_MS = "min.compaction.lag.ms";
    public static final String MIN_CLEANABLE_DIRTY_RATIO = "min.cleanable.dirty.ratio";
    public static final String MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type";
    public static final String CREATE_TIME = "CreateTime";
    public static final String LOG_APPEND_TIME = "LogAppendTime";
    public static final String POLICY_DELETE = "delete";
    public static final String POLICY_COMPACT = "compact";
    public static final String POLICY_COMPACT_DELETE = "compact,delete";
    /** Kafka's value of {@code local.retention.*} for "the same as the total" ({@code retention.*}). */
    public static final long SAME_AS_TOTAL = -2;
    public static final Set<String> KEYS = Set.of(RETENTION_MS, RETENTION_BYTES, LOCAL_RETENTION_MS,
            LOCAL_RETENTION_BYTES, SEGMENT_BYTES, SEGMENT_MS, MAX_MESSAGE_BYTES, CLEANUP_POLICY, DELETE_RETENTION_MS,
            MIN_COMPACTION_LAG_MS, MIN_CLEANABLE_DIRTY_RATIO, MESSAGE_TIMESTAMP_TYPE);

    /** Kafka's smallest segment.bytes is 14 bytes; we ask for room for at least one batch header. */
    static final long MIN_SEGMENT_BYTES = 1024;
    static final int MAX_SEGMENT_BYTES = Integer.MAX_VALUE;

    /**
     * Defaults: 7 days in all (Kafka's {@code retention.ms}), the hot tier as long as the total (Kafka's -2),
     * 128 MiB or one hour per segment so that sealed segments reach S3 within the hour, Kafka's 1 MiB (+ batch
     * overhead) record limit, Kafka's compaction defaults (delete policy, tombstones kept one day, no lag,
     * ratio 0.5), and the producer's timestamps (CreateTime).
     */
    public static final TopicConfig DEFAULTS = new TopicConfig(
            7L * 24 * 3600 * 1000, -1, SAME_AS_TOTAL, SAME_AS_TOTAL, 128L * 1024 * 1024, 3600L * 1000, 1048588,
            POLICY_DELETE, 24L * 3600 * 1000, 0, 0.5, CREATE_TIME);

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
        if (!POLICY_DELETE.equals(cleanupPolicy) && !POLICY_COMPACT.equals(cleanupPolicy)
                && !POLICY_COMPACT_DELETE.equals(cleanupPolicy)) {
            throw invalid(CLEANUP_POLICY, cleanupPolicy, "must be delete, compact or compact,delete");
        }
        if (deleteRetentionMs < 0) {
            throw invalid(DELETE_RETENTION_MS, deleteRetentionMs, "must be >= 0");
        }
        if (minCompactionLagMs < 0) {
            throw invalid(MIN_COMPACTION_LAG_MS, minCompactionLagMs, "must be >= 0");
        }
        if (!(minCleanableDirtyRatio >= 0 && minCleanableDirtyRatio <= 1)) {
            throw invalid(MIN_CLEANABLE_DIRTY_RATIO, minCleanableDirtyRatio, "must be a decimal in [0, 1]");
        }
        if (!CREATE_TIME.equals(messageTimestampType) && !LOG_APPEND_TIME.equals(messageTimestampType)) {
            throw invalid(MESSAGE_TIMESTAMP_TYPE, messageTimestampType, "must be CreateTime or LogAppendTime");
        }
        if (notLarger(localRetentionMs, retentionMs)) {
            throw invalid(LOCAL_RETENTION_MS, localRetentionMs, "must not exceed retention.ms (" + retentionMs + ")");
        }
        if (notLarger(localRetentionBytes, retentionBytes)) {
            throw invalid(LOCAL_RETENTION_BYTES, localRetentionBytes,
                    "must not exceed retention.bytes (" + retentionBytes + ")");
        }
    }

    /** Whether the cleaner keeps only the last record of each key ({@code compact} or {@code compact,delete}). */
    public boolean compacts() {
        return !POLICY_DELETE.equals(cleanupPolicy);
    }

    /**
     * Whether {@code retention.ms} and {@code retention.bytes} delete old segments ({@code delete} or
     * {@code compact,delete}); as in Kafka, a {@code compact}-only topic keeps every key's last record forever.
     * Local (hot) retention applies either way: it only evicts segments already committed to the cold tier.
     */
    public boolean deletesByRetention() {
        return !POLICY_COMPACT.equals(cleanupPolicy);
    }

    /** Whether the writer stamps each batch with its append time ({@code message.timestamp.type=LogAppendTime}). */
    public boolean logAppendTime() {
        return LOG_APPEND_TIME.equals(messageTimestampType);
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
        Map<String, Object> values = new LinkedHashMap<>(toMap());
        for (Map.Entry<String, ?> e : changes.entrySet()) {
            if (!KEYS.contains(e.getKey())) {
                throw new TierlogException(ErrorType.INVALID_CONFIG, "unknown config key '" + e.getKey()
                        + "'; known keys: " + String.join(", ", KEYS.stream().sorted().toList()),
                        Map.of("key", e.getKey()));
            }
            Object value = switch (e.getKey()) {
                case CLEANUP_POLICY -> parsePolicy(e.getValue());
                case MIN_CLEANABLE_DIRTY_RATIO -> parseRatio(e.getValue());
                case MESSAGE_TIMESTAMP_TYPE -> parseTimestampType(e.getValue());
                default -> parseLong(e.getKey(), e.getValue());
            };
            values.put(e.getKey(), value);
        }
        long maxMessage = (Long) values.get(MAX_MESSAGE_BYTES);
        if (maxMessage > Integer.MAX_VALUE) {
            throw invalid(MAX_MESSAGE_BYTES, maxMessage, "must be <= " + Integer.MAX_VALUE);
        }
        return new TopicConfig((Long) values.get(RETENTION_MS), (Long) values.get(RETENTION_BYTES),
                (Long) values.get(LOCAL_RETENTION_MS), (Long) values.get(LOCAL_RETENTION_BYTES),
                (Long) values.get(SEGMENT_BYTES), (Long) values.get(SEGMENT_MS), (int) maxMessage,
                (String) values.get(CLEANUP_POLICY), (Long) values.get(DELETE_RETENTION_MS),
                (Long) values.get(MIN_COMPACTION_LAG_MS), (Double) values.get(MIN_CLEANABLE_DIRTY_RATIO),
                (String) values.get(MESSAGE_TIMESTAMP_TYPE));
    }

    /**
     * Kafka's list of {@code compact} and {@code delete}, comma-separated in any order (or a JSON array of them),
     * as the canonical {@code delete}, {@code compact} or {@code compact,delete}.
     */
    private static String parsePolicy(Object value) {
        java.util.List<?> parts;
        if (value instanceof String s) {
            parts = java.util.Arrays.asList(s.split(",", -1));
        } else if (value instanceof java.util.List<?> list) {
            parts = list;
        } else {
            throw invalid(CLEANUP_POLICY, value, "must be delete, compact or compact,delete");
        }
        boolean compact = false;
        boolean delete = false;
        for (Object part : parts) {
            String p = part instanceof String s ? s.trim() : null;
            if (POLICY_COMPACT.equals(p) && !compact) {
                compact = true;
            } else if (POLICY_DELETE.equals(p) && !delete) {
                delete = true;
            } else {
                throw invalid(CLEANUP_POLICY, value, "must be delete, compact or compact,delete");
            }
        }
        return compact && delete ? POLICY_COMPACT_DELETE : compact ? POLICY_COMPACT : POLICY_DELETE;
    }

    /** Kafka's two spellings, exactly as Kafka takes them. */
    private static String parseTimestampType(Object value) {
        if (value instanceof String s && (CREATE_TIME.equals(s.trim()) || LOG_APPEND_TIME.equals(s.trim()))) {
            return s.trim();
        }
        throw invalid(MESSAGE_TIMESTAMP_TYPE, value, "must be CreateTime or LogAppendTime");
    }

    private static double parseRatio(Object value) {
        if (value instanceof Number n) {
            return n.doubleValue();
        }
        if (value instanceof String s) {
            try {
                return Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                // fall through to the error below
            }
        }
        throw invalid(MIN_CLEANABLE_DIRTY_RATIO, value, "must be a decimal in [0, 1]");
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

    /**
     * Kafka-named keys to values, in a stable order: {@code Long} for every key but {@code cleanup.policy} and
     * {@code message.timestamp.type} ({@code String}) and {@code min.cleanable.dirty.ratio} ({@code Double}).
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(RETENTION_MS, retentionMs);
        m.put(RETENTION_BYTES, retentionBytes);
        m.put(LOCAL_RETENTION_MS, localRetentionMs);
        m.put(LOCAL_RETENTION_BYTES, localRetentionBytes);
        m.put(SEGMENT_BYTES, segmentBytes);
        m.put(SEGMENT_MS, segmentMs);
        m.put(MAX_MESSAGE_BYTES, (long) maxMessageBytes);
        m.put(CLEANUP_POLICY, cleanupPolicy);
        m.put(DELETE_RETENTION_MS, deleteRetentionMs);
        m.put(MIN_COMPACTION_LAG_MS, minCompactionLagMs);
        m.put(MIN_CLEANABLE_DIRTY_RATIO, minCleanableDirtyRatio);
        m.put(MESSAGE_TIMESTAMP_TYPE, messageTimestampType);
        return m;
    }
}
