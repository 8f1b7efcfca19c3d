package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A group's own settings for the members of one of Kafka's group protocols, Kafka's group configs by their Kafka
 * names: {@value #SESSION_TIMEOUT_MS} and {@value #HEARTBEAT_INTERVAL_MS} for a consumer group's KIP-848 members,
 * {@code share.session.timeout.ms} and {@code share.heartbeat.interval.ms} for a share group's members
 * ({@link #SHARE}), {@code streams.session.timeout.ms}, {@code streams.heartbeat.interval.ms} and the task settings
 * ({@value #STANDBY_REPLICAS}, {@value #WARMUP_REPLICAS}, {@value #ACCEPTABLE_RECOVERY_LAG},
 * {@value #TASK_OFFSET_INTERVAL_MS}, {@value #INITIAL_REBALANCE_DELAY_MS}, {@value #RACK_AWARE_ASSIGNMENT_TAGS}) for a
 * streams group's ({@link #STREAMS}). Only values set are stored (in the group's state file, so every instance applies them at the
 * member's next heartbeat); a key not set takes the service's default. Immutable.
 */
public record GroupConfigs(Keys keys, TreeMap<String, String> values) {
    /**
     * The keys of one protocol: its session timeout and heartbeat interval, and the whole-number and list settings of a
     * protocol whose members keep state (none for the others).
     */
    public record Keys(String sessionTimeoutMs, String heartbeatIntervalMs, List<Setting> settings,
                       List<String> lists) {
        public Keys {
            settings = List.copyOf(settings);
            lists = List.copyOf(lists);
        }

        Keys(String sessionTimeoutMs, String heartbeatIntervalMs) {
            this(sessionTimeoutMs, heartbeatIntervalMs, List.of(), List.of());
        }

        /** Every key, in the order Kafka lists them. */
        public List<String> all() {
            List<String> out = new ArrayList<>(List.of(sessionTimeoutMs, heartbeatIntervalMs));
            settings.forEach(s -> out.add(s.key()));
            out.addAll(lists);
            return List.copyOf(out);
        }

        Setting setting(String key) {
            return settings.stream().filter(s -> s.key().equals(key)).findFirst().orElse(null);
        }
    }

    /** A whole-number setting: its key, its bounds and its value when the group sets none (Kafka's default). */
    public record Setting(String key, long min, long max, long defaultValue) {
    }

    /** KIP-848 consumers' keys. */
    public static final Keys CONSUMER = new Keys("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms");
    /** KIP-932 share consumers' keys. */
    public static final Keys SHARE = new Keys("share.session.timeout.ms", "share.heartbeat.interval.ms");
    /** Standby copies of each task a streams group keeps (Kafka's group config, default 0). */
    public static final String STANDBY_REPLICAS = "streams.num.standby.replicas";
    /** How many warm-up tasks a streams group runs at once ({@link WarmupTasks}; Kafka's default 2, at most 20). */
    public static final String WARMUP_REPLICAS = "streams.num.warmup.replicas";
    /** A member whose copy of a task's state lags its changelog by at most this many records is caught up. */
    public static final String ACCEPTABLE_RECOVERY_LAG = "streams.acceptable.recovery.lag";
    /**
     * How long a streams group that was empty waits for more members before its first tasks go out (Kafka's
     * {@code group.streams.initial.rebalance.delay.ms}); not set, the service's default.
     */
    public static final String INITIAL_REBALANCE_DELAY_MS = "streams.initial.rebalance.delay.ms";
    /** How often streams members report their tasks' offsets (Kafka's default 60 s, at least 15 s). */
    public static final String TASK_OFFSET_INTERVAL_MS = "streams.task.offset.interval.ms";
    /**
     * The client tag keys (Kafka Streams' {@code client.tag.<key>}) whose values a streams group's standbys spread
     * over ({@link StandbyTasks}), a comma-separated list.
     */
    public static final String RACK_AWARE_ASSIGNMENT_TAGS = "streams.rack.aware.assignment.tags";
    /** Most tag keys a group may list, Kafka Streams' limit on {@code rack.aware.assignment.tags}. */
    public static final int MAX_ASSIGNMENT_TAGS = 5;
    /** Kafka's {@code group.streams.max.standby.replicas} default. */
    public static final int MAX_STANDBY_REPLICAS = 2;
    /** KIP-1071 streams members' keys, with the task settings. */
    public static final Keys STREAMS = new Keys("streams.session.timeout.ms", "streams.heartbeat.interval.ms",
            List.of(new Setting(STANDBY_REPLICAS, 0, MAX_STANDBY_REPLICAS, 0), new Setting(WARMUP_REPLICAS, 0, 20, 2),
                    new Setting(ACCEPTABLE_RECOVERY_LAG, 0, Long.MAX_VALUE, 10_000),
                    new Setting(TASK_OFFSET_INTERVAL_MS, 15_000, Integer.MAX_VALUE, 60_000),
                    new Setting(INITIAL_REBALANCE_DELAY_MS, 0, Integer.MAX_VALUE, 3_000)),
            List.of(RACK_AWARE_ASSIGNMENT_TAGS));
    public static final String SESSION_TIMEOUT_MS = "consumer.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms";
    /** Every key a consumer group may set, in the order Kafka lists them. */
    public static final List<String> KEYS = CONSUMER.all();
    static final long MIN_SESSION_TIMEOUT_MS = 1_000;
    static final long MIN_HEARTBEAT_INTERVAL_MS = 100;
    public static final GroupConfigs NONE = new GroupConfigs(new TreeMap<>());

    public GroupConfigs {
        values = new TreeMap<>(values);
    }

    /** A consumer group's configs. */
    public GroupConfigs(TreeMap<String, String> values) {
        this(CONSUMER, values);
    }

    @Override
    public TreeMap<String, String> values() {
        return new TreeMap<>(values);
    }

    /** The session timeout members get: the group's, else {@code defaultMs}. */
    public long sessionTimeoutMs(long defaultMs) {
        String v = values.get(keys.sessionTimeoutMs());
        return v == null ? defaultMs : Long.parseLong(v);
    }

    /** Standby copies of each task ({@link #STREAMS} keys only): the group's, else 0. */
    public int standbyReplicas() {
        return (int) setting(STANDBY_REPLICAS);
    }

    /** A list setting of these keys ({@link Keys#lists}): the group's values in order, else none. */
    public List<String> list(String key) {
        if (!keys.lists().contains(key)) {
            throw new IllegalArgumentException(key + " is not a list of this protocol");
        }
        String v = values.get(key);
        return v == null || v.isEmpty() ? List.of() : List.of(v.split(","));
    }

    /** A whole-number setting of these keys: the group's value, else {@code serviceDefault}. */
    public long setting(String key, long serviceDefault) {
        return values.containsKey(key) ? setting(key) : serviceDefault;
    }

    /** A whole-number setting of these keys ({@link Keys#settings}): the group's value, else its default. */
    public long setting(String key) {
        Setting setting = keys.setting(key);
        if (setting == null) {
            throw new IllegalArgumentException(key + " is not a setting of this protocol");
        }
        String v = values.get(key);
        return v == null ? setting.defaultValue() : Long.parseLong(v);
    }

    /** The heartbeat interval the group sets, or 0 when it sets none (the coordinator derives one). */
    public long heartbeatIntervalMs() {
        String v = values.get(keys.heartbeatIntervalMs());
        return v == null ? 0 : Long.parseLong(v);
    }

    /** The interval members are given: the group's, else a third of the session timeout, at most 5 s. */
    public long heartbeatIntervalMs(long defaultSessionTimeoutMs) {
        long set = heartbeatIntervalMs();
        return set > 0 ? set : GroupCoordinator.heartbeatInterval(sessionTimeoutMs(defaultSessionTimeoutMs));
    }

    /**
     * The interval members are given where the service sets one ({@code defaultIntervalMs}, below
     * {@code defaultSessionTimeoutMs}): the group's; else the service's, cut to a third of the session timeout when
     * the group sets a shorter one.
     */
    public long heartbeatIntervalMs(long defaultSessionTimeoutMs, long defaultIntervalMs) {
        long set = heartbeatIntervalMs();
        if (set > 0) {
            return set;
        }
        String session = values.get(keys.sessionTimeoutMs());
        return session == null ? defaultIntervalMs
                : Math.max(1, Math.min(defaultIntervalMs, Long.parseLong(session) / 3));
    }

    /**
     * These configs with {@code key} set to {@code value} (null: back to the default), checked as a whole against
     * {@code defaultSessionTimeoutMs} for the keys left at their default.
     *
     * @throws TierlogException {@code invalid-config} naming the key: unknown, not a whole number of milliseconds,
     *                          out of range, or a heartbeat interval not below the session timeout
     */
    public GroupConfigs with(Map<String, String> changes, long defaultSessionTimeoutMs) {
        TreeMap<String, String> next = new TreeMap<>(values);
        changes.forEach((key, value) -> {
            if (!keys.all().contains(key)) {
                throw invalid(key, "unknown group config '" + key + "': a group sets "
                        + String.join(", ", keys.all()));
            }
            Setting setting = keys.setting(key);
            if (value == null) {
                next.remove(key);
            } else if (keys.lists().contains(key)) {
                next.put(key, tagKeys(key, value));
            } else {
                next.put(key, String.valueOf(setting != null ? bounded(setting, value) : millis(key, value)));
            }
        });
        GroupConfigs result = new GroupConfigs(keys, next);
        long session = result.sessionTimeoutMs(defaultSessionTimeoutMs);
        String sessionKey = keys.sessionTimeoutMs();
        if (session < MIN_SESSION_TIMEOUT_MS || session > GroupCoordinator.MAX_SESSION_TIMEOUT_MS) {
            throw invalid(sessionKey, sessionKey + " must be from " + MIN_SESSION_TIMEOUT_MS + " to "
                    + GroupCoordinator.MAX_SESSION_TIMEOUT_MS + " ms: " + session);
        }
        long interval = result.heartbeatIntervalMs();
        String intervalKey = keys.heartbeatIntervalMs();
        if (interval != 0 && (interval < MIN_HEARTBEAT_INTERVAL_MS || interval >= session)) {
            throw invalid(intervalKey, intervalKey + " must be at least " + MIN_HEARTBEAT_INTERVAL_MS
                    + " ms and below the session timeout (" + session + " ms): " + interval);
        }
        return result;
    }

    /** A list of tag keys, as Kafka checks it: no key twice, at most {@value #MAX_ASSIGNMENT_TAGS}; normalized. */
    private static String tagKeys(String key, String value) {
        List<String> tags = new ArrayList<>();
        for (String t : value.split(",")) {
            String tag = t.strip();
            if (tag.isEmpty()) {
                continue;
            }
            if (tags.contains(tag)) {
                throw invalid(key, key + " must not contain duplicate tag keys.");
            }
            if (tag.length() > StreamsTopology.MAX_STRING_CHARS || tag.chars().anyMatch(Character::isISOControl)) {
                throw invalid(key, key + " has a tag key longer than " + StreamsTopology.MAX_STRING_CHARS
                        + " characters or with control characters");
            }
            tags.add(tag);
        }
        if (tags.size() > MAX_ASSIGNMENT_TAGS) {
            throw invalid(key, key + " may list at most " + MAX_ASSIGNMENT_TAGS + " tag keys: " + tags.size());
        }
        return String.join(",", tags);
    }

    private static long bounded(Setting setting, String value) {
        try {
            long n = Long.parseLong(value.strip());
            if (n >= setting.min() && n <= setting.max()) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        String range = setting.max() == Long.MAX_VALUE || setting.max() == Integer.MAX_VALUE
                ? "at least " + setting.min() : "from " + setting.min() + " to " + setting.max();
        throw invalid(setting.key(), setting.key() + " must be a whole number " + range + ": '" + value + "'");
    }

    private static long millis(String key, String value) {
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw invalid(key, key + " must be a whole number of milliseconds: '" + value + "'");
        }
    }

    private static TierlogException invalid(String key, String message) {
        return new TierlogException(ErrorType.INVALID_CONFIG, message, Map.of("key", key));
    }
}
