package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A consumer group's own settings for members of Kafka's consumer protocol (KIP-848), Kafka's group configs by their
 * Kafka names: {@value #SESSION_TIMEOUT_MS} and {@value #HEARTBEAT_INTERVAL_MS}. Only values set are stored (in the
 * group's state file, so every instance applies them at the member's next heartbeat); a key not set takes the
 * service's default. Immutable.
 */
public record GroupConfigs(TreeMap<String, String> values) {
    public static final String SESSION_TIMEOUT_MS = "consumer.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms";
    /** Every key a group may set, in the order Kafka lists them. */
    public static final List<String> KEYS = List.of(SESSION_TIMEOUT_MS, HEARTBEAT_INTERVAL_MS);
    static final long MIN_SESSION_TIMEOUT_MS = 1_000;
    static final long MIN_HEARTBEAT_INTERVAL_MS = 100;
    public static final GroupConfigs NONE = new GroupConfigs(new TreeMap<>());

    public GroupConfigs {
        values = new TreeMap<>(values);
    }

    @Override
    public TreeMap<String, String> values() {
        return new TreeMap<>(values);
    }

    /** The session timeout members of the consumer protocol get: the group's, else {@code defaultMs}. */
    public long sessionTimeoutMs(long defaultMs) {
        String v = values.get(SESSION_TIMEOUT_MS);
        return v == null ? defaultMs : Long.parseLong(v);
    }

    /** The heartbeat interval the group sets, or 0 when it sets none (the coordinator derives one). */
    public long heartbeatIntervalMs() {
        String v = values.get(HEARTBEAT_INTERVAL_MS);
        return v == null ? 0 : Long.parseLong(v);
    }

    /** The interval members are given: the group's, else a third of the session timeout, at most 5 s. */
    public long heartbeatIntervalMs(long defaultSessionTimeoutMs) {
        long set = heartbeatIntervalMs();
        return set > 0 ? set : GroupCoordinator.heartbeatInterval(sessionTimeoutMs(defaultSessionTimeoutMs));
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
            if (!KEYS.contains(key)) {
                throw invalid(key, "unknown group config '" + key + "': a group sets " + String.join(", ", KEYS));
            }
            if (value == null) {
                next.remove(key);
            } else {
                next.put(key, String.valueOf(millis(key, value)));
            }
        });
        GroupConfigs result = new GroupConfigs(next);
        long session = result.sessionTimeoutMs(defaultSessionTimeoutMs);
        if (session < MIN_SESSION_TIMEOUT_MS || session > GroupCoordinator.MAX_SESSION_TIMEOUT_MS) {
            throw invalid(SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS + " must be from " + MIN_SESSION_TIMEOUT_MS + " to "
                    + GroupCoordinator.MAX_SESSION_TIMEOUT_MS + " ms: " + session);
        }
        long interval = result.heartbeatIntervalMs();
        if (interval != 0 && (interval < MIN_HEARTBEAT_INTERVAL_MS || interval >= session)) {
            throw invalid(HEARTBEAT_INTERVAL_MS, HEARTBEAT_INTERVAL_MS + " must be at least "
                    + MIN_HEARTBEAT_INTERVAL_MS + " ms and below the session timeout (" + session + " ms): " + interval);
        }
        return result;
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
