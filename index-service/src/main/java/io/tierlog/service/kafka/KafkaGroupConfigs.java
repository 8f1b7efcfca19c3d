package io.tierlog.service.kafka;

import io.tierlog.groups.GroupConfigs;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.sharegroups.ShareGroupConfig;
import io.tierlog.sharegroups.ShareGroupMembers;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Kafka's group configs (resource type GROUP, {@code kafka-configs --entity-type groups}): a consumer group's own
 * session timeout and heartbeat interval for its KIP-848 members, a streams group's for its members with its standby
 * replicas per task ({@link GroupConfigs#STREAMS}), stored in the group's state file by
 * {@link GroupCoordinator#alterConfigs} so every instance applies them; a share group's session timeout and
 * heartbeat interval for its share consumers, stored in its members file by {@link ShareGroupMembers#alterConfigs};
 * and a share group's {@value #SHARE_AUTO_OFFSET_RESET}, {@value #SHARE_DELIVERY_COUNT_LIMIT},
 * {@value #SHARE_ISOLATION_LEVEL} and {@value #SHARE_RECORD_LOCK_DURATION_MS}, which are its share-group config
 * ({@code start}, {@code max.delivery.attempts}, {@code isolation} and {@code lease.ms}, the same as HTTP's
 * {@code PUT /v1/share-groups/{g}/config}).
 * Described with the service's defaults where the group sets none; a group need not exist to be configured, as in
 * Kafka.
 */
@Singleton
public class KafkaGroupConfigs {
    private static final Map<String, String> DOCS = Map.of(
            GroupConfigs.SESSION_TIMEOUT_MS, "The timeout to detect client failures when using the consumer group protocol.",
            GroupConfigs.HEARTBEAT_INTERVAL_MS, "The heartbeat interval given to the members of a consumer group.",
            GroupConfigs.SHARE.sessionTimeoutMs(), "The timeout to detect client failures when using the share group "
                    + "protocol.",
            GroupConfigs.SHARE.heartbeatIntervalMs(), "The heartbeat interval given to the members of a share group.",
            GroupConfigs.STREAMS.sessionTimeoutMs(), "The timeout to detect client failures when using the streams "
                    + "group protocol.",
            GroupConfigs.STREAMS.heartbeatIntervalMs(), "The heartbeat interval given to the members of a streams "
                    + "group.",
            GroupConfigs.STANDBY_REPLICAS, "The number of standby replicas for each task of a streams group.",
            GroupConfigs.WARMUP_REPLICAS, "The maximum number of warm-up replicas (extra standbys beyond the "
                    + "configured num.standbys) that can be assigned at once.",
            GroupConfigs.ACCEPTABLE_RECOVERY_LAG, "The maximum acceptable lag (number of offsets to catch up) for an "
                    + "instance to be considered caught-up and ready for the active task.",
            GroupConfigs.TASK_OFFSET_INTERVAL_MS, "The interval in milliseconds with which the streams group members "
                    + "report their task offsets.");
    private static final String TAGS_DOC = "List of client tag keys used to distribute standby replicas across Kafka "
            + "Streams instances.";
    private static final String DELAY_DOC = "The amount of time the group coordinator will wait for more streams "
            + "clients to join a new group before performing the first rebalance.";

    static final String SHARE_AUTO_OFFSET_RESET = "share.auto.offset.reset";
    static final String SHARE_DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
    static final String SHARE_ISOLATION_LEVEL = "share.isolation.level";
    static final String SHARE_RECORD_LOCK_DURATION_MS = "share.record.lock.duration.ms";
    private static final List<String> SHARE_KEYS = List.of(SHARE_AUTO_OFFSET_RESET, SHARE_DELIVERY_COUNT_LIMIT,
            SHARE_ISOLATION_LEVEL, SHARE_RECORD_LOCK_DURATION_MS);

    private final GroupCoordinator coordinator;
    private final ShareGroups shares;
    private final ShareGroupMembers shareMembers;
    private final long defaultSessionTimeoutMs;
    private final long defaultShareSessionTimeoutMs;
    private final long defaultShareHeartbeatIntervalMs;
    private final long defaultLockMs;
    private final long defaultStreamsInitialDelayMs;

    public KafkaGroupConfigs(GroupCoordinator coordinator, ShareGroups shares, ShareGroupMembers shareMembers,
                             TierlogConfig config) {
        this.coordinator = coordinator;
        this.shares = shares;
        this.shareMembers = shareMembers;
        this.defaultSessionTimeoutMs = config.kafka().groupSessionTimeout().toMillis();
        this.defaultShareSessionTimeoutMs = config.kafka().shareSessionTimeout().toMillis();
        this.defaultShareHeartbeatIntervalMs = config.kafka().shareHeartbeatInterval().toMillis();
        this.defaultLockMs = config.kafka().shareRecordLockDuration().toMillis();
        this.defaultStreamsInitialDelayMs = config.kafka().streamsInitialRebalanceDelay().toMillis();
    }

    /**
     * The groups with configs set, members or not (ListGroups leaves out a group that has only configs): consumer
     * groups with a config stored, and share groups with anything stored (a config among it).
     */
    Set<String> configuredGroups() {
        Set<String> out = new TreeSet<>();
        for (String group : coordinator.groups()) {
            if (!coordinator.configs(group).values().isEmpty()) {
                out.add(group);
            }
        }
        out.addAll(shares.groups());
        return out;
    }

    /** Every group config of {@code asked}'s group (or those it names), set or default. */
    void describe(DescribeConfigsRequestData.DescribeConfigsResource asked,
                  DescribeConfigsResponseData.DescribeConfigsResult result, boolean documentation) {
        GroupConfigs configs = coordinator.configs(asked.resourceName());
        describeSession(asked, result, documentation, configs, configs.sessionTimeoutMs(defaultSessionTimeoutMs),
                configs.heartbeatIntervalMs(defaultSessionTimeoutMs));
        GroupConfigs streams = coordinator.configs(asked.resourceName(), GroupConfigs.STREAMS);
        describeSession(asked, result, documentation, streams, streams.sessionTimeoutMs(defaultSessionTimeoutMs),
                streams.heartbeatIntervalMs(defaultSessionTimeoutMs));
        for (GroupConfigs.Setting setting : GroupConfigs.STREAMS.settings()) {
            String key = setting.key();
            if (asked.configurationKeys() != null && !asked.configurationKeys().contains(key)) {
                continue;
            }
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(key).setValue(String.valueOf(key.equals(GroupConfigs.INITIAL_REBALANCE_DELAY_MS)
                            ? streams.setting(key, defaultStreamsInitialDelayMs) : streams.setting(key)))
                    .setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(streams.values().containsKey(key)
                            ? DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id())
                    .setConfigType((key.equals(GroupConfigs.ACCEPTABLE_RECOVERY_LAG)
                            ? DescribeConfigsResponse.ConfigType.LONG : DescribeConfigsResponse.ConfigType.INT).id())
                    .setDocumentation(documentation ? (key.equals(GroupConfigs.INITIAL_REBALANCE_DELAY_MS) ? DELAY_DOC
                            : DOCS.get(key)) : null));
        }
        String tags = GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS;
        if (asked.configurationKeys() == null || asked.configurationKeys().contains(tags)) {
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(tags)
                    .setValue(String.join(",", streams.list(tags))).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(streams.values().containsKey(tags)
                            ? DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id())
                    .setConfigType(DescribeConfigsResponse.ConfigType.LIST.id())
                    .setDocumentation(documentation ? TAGS_DOC : null));
        }
        GroupConfigs shareSession = shareMembers.configs(asked.resourceName());
        describeSession(asked, result, documentation, shareSession,
                shareSession.sessionTimeoutMs(defaultShareSessionTimeoutMs),
                shareSession.heartbeatIntervalMs(defaultShareSessionTimeoutMs, defaultShareHeartbeatIntervalMs));
        ShareGroupConfig share = shares.config(asked.resourceName());
        Map<String, String> shareValues = Map.of(SHARE_AUTO_OFFSET_RESET, share.start(),
                SHARE_DELIVERY_COUNT_LIMIT, String.valueOf(share.maxDeliveryAttempts()),
                SHARE_ISOLATION_LEVEL, share.isolation(),
                SHARE_RECORD_LOCK_DURATION_MS, String.valueOf(share.leaseMsOr(defaultLockMs)));
        Map<String, String> shareDefaults = Map.of(SHARE_AUTO_OFFSET_RESET, ShareGroupConfig.DEFAULTS.start(),
                SHARE_DELIVERY_COUNT_LIMIT, String.valueOf(ShareGroupConfig.DEFAULTS.maxDeliveryAttempts()),
                SHARE_ISOLATION_LEVEL, ShareGroupConfig.DEFAULTS.isolation());
        for (String key : SHARE_KEYS) {
            if (asked.configurationKeys() != null && !asked.configurationKeys().contains(key)) {
                continue;
            }
            boolean isDefault = key.equals(SHARE_RECORD_LOCK_DURATION_MS) ? share.leaseMs() == null
                    : shareValues.get(key).equals(shareDefaults.get(key));
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(key)
                    .setValue(shareValues.get(key)).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(isDefault ? DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id())
                    .setConfigType(key.equals(SHARE_DELIVERY_COUNT_LIMIT) || key.equals(SHARE_RECORD_LOCK_DURATION_MS)
                            ? DescribeConfigsResponse.ConfigType.INT.id()
                            : DescribeConfigsResponse.ConfigType.STRING.id())
                    .setDocumentation(documentation ? SHARE_DOCS.get(key) : null));
        }
    }

    /** One protocol's session timeout and heartbeat interval, as members get them now. */
    private static void describeSession(DescribeConfigsRequestData.DescribeConfigsResource asked,
                                        DescribeConfigsResponseData.DescribeConfigsResult result, boolean documentation,
                                        GroupConfigs configs, long sessionTimeoutMs, long heartbeatIntervalMs) {
        Map<String, String> set = configs.values();
        Map<String, Long> effective = Map.of(configs.keys().sessionTimeoutMs(), sessionTimeoutMs,
                configs.keys().heartbeatIntervalMs(), heartbeatIntervalMs);
        for (String key : List.of(configs.keys().sessionTimeoutMs(), configs.keys().heartbeatIntervalMs())) {
            if (asked.configurationKeys() != null && !asked.configurationKeys().contains(key)) {
                continue;
            }
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(key)
                    .setValue(String.valueOf(effective.get(key))).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(set.containsKey(key) ? DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id())
                    .setConfigType(DescribeConfigsResponse.ConfigType.INT.id())
                    .setDocumentation(documentation ? DOCS.get(key) : null));
        }
    }

    private static final Map<String, String> SHARE_DOCS = Map.of(
            SHARE_AUTO_OFFSET_RESET, "Where a share group starts on a partition it has no state for: earliest or latest.",
            SHARE_DELIVERY_COUNT_LIMIT, "How many times a record is delivered before it is treated as rejected.",
            SHARE_ISOLATION_LEVEL, "read_committed delivers only records of committed transactions, up to the last "
                    + "stable offset; read_uncommitted delivers every record.",
            SHARE_RECORD_LOCK_DURATION_MS, "How long a share consumer holds the records it acquired before they are "
                    + "available again without an acknowledgement.");

    /**
     * IncrementalAlterConfigs on one group: SET a key or DELETE it (back to the default), all or nothing
     * (INVALID_CONFIG naming the key); APPEND and SUBTRACT are INVALID_REQUEST (no group config is a list).
     */
    void alter(IncrementalAlterConfigsRequestData.AlterConfigsResource asked, boolean validateOnly) {
        Map<String, String> changes = new HashMap<>();
        Map<String, String> streamsChanges = new HashMap<>();
        Map<String, String> shareSessionChanges = new HashMap<>();
        Map<String, String> shareChanges = new HashMap<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : asked.configs()) {
            Map<String, String> into = GroupConfigs.SHARE.all().contains(c.name()) ? shareSessionChanges
                    : c.name().startsWith("share.") ? shareChanges
                    : c.name().startsWith("streams.") ? streamsChanges : changes;
            AlterConfigOp.OpType op = AlterConfigOp.OpType.forId(c.configOperation());
            if (op == AlterConfigOp.OpType.SET) {
                into.put(c.name(), c.value() == null ? "" : c.value());
            } else if (op == AlterConfigOp.OpType.DELETE) {
                into.put(c.name(), null);
            } else {
                throw Errors.INVALID_REQUEST.exception("operation " + op + " on " + c.name()
                        + ": group configs are not lists; use SET or DELETE");
            }
        }
        ShareGroupConfig share = shareChanges.isEmpty() ? null
                : shareConfig(shares.config(asked.resourceName()), shareChanges);
        // Each part is checked before any is stored.
        if (validateOnly || !changes.isEmpty()) {
            coordinator.configs(asked.resourceName()).with(changes, defaultSessionTimeoutMs);
        }
        if (validateOnly || !streamsChanges.isEmpty()) {
            coordinator.configs(asked.resourceName(), GroupConfigs.STREAMS).with(streamsChanges,
                    defaultSessionTimeoutMs);
        }
        if (validateOnly || !shareSessionChanges.isEmpty()) {
            shareMembers.configs(asked.resourceName()).with(shareSessionChanges, defaultShareSessionTimeoutMs);
        }
        if (validateOnly) {
            return;
        }
        if (!changes.isEmpty()) {
            coordinator.alterConfigs(asked.resourceName(), changes, defaultSessionTimeoutMs);
        }
        if (!streamsChanges.isEmpty()) {
            coordinator.alterConfigs(asked.resourceName(), GroupConfigs.STREAMS, streamsChanges,
                    defaultSessionTimeoutMs);
        }
        if (!shareSessionChanges.isEmpty()) {
            shareMembers.alterConfigs(asked.resourceName(), shareSessionChanges);
        }
        if (share != null) {
            shares.configure(asked.resourceName(), share);
        }
    }

    /** {@code current} with Kafka's share keys applied (null: back to the default), each checked by its Kafka name. */
    private static ShareGroupConfig shareConfig(ShareGroupConfig current, Map<String, String> changes) {
        String start = current.start();
        int attempts = current.maxDeliveryAttempts();
        String isolation = current.isolation();
        Long leaseMs = current.leaseMs();
        for (Map.Entry<String, String> e : changes.entrySet()) {
            String key = e.getKey();
            String value = e.getValue() == null ? null : e.getValue().strip();
            if (key.equals(SHARE_AUTO_OFFSET_RESET)) {
                start = value == null ? ShareGroupConfig.DEFAULTS.start() : value;
                if (!start.equals("earliest") && !start.equals("latest")) {
                    throw invalid(key, key + " must be earliest or latest: '" + value + "'");
                }
            } else if (key.equals(SHARE_DELIVERY_COUNT_LIMIT)) {
                try {
                    attempts = value == null ? ShareGroupConfig.DEFAULTS.maxDeliveryAttempts() : Integer.parseInt(value);
                } catch (NumberFormatException notANumber) {
                    throw invalid(key, key + " must be a whole number: '" + value + "'");
                }
                if (attempts < 1 || attempts > 100) {
                    throw invalid(key, key + " must be from 1 to 100: " + attempts);
                }
            } else if (key.equals(SHARE_ISOLATION_LEVEL)) {
                isolation = value == null ? ShareGroupConfig.DEFAULTS.isolation() : value;
                if (!isolation.equals(ShareGroupConfig.READ_COMMITTED)
                        && !isolation.equals(ShareGroupConfig.READ_UNCOMMITTED)) {
                    throw invalid(key, key + " must be read_committed or read_uncommitted: '" + value + "'");
                }
            } else if (key.equals(SHARE_RECORD_LOCK_DURATION_MS)) {
                try {
                    leaseMs = value == null ? null : Long.valueOf(value);
                } catch (NumberFormatException notANumber) {
                    throw invalid(key, key + " must be a whole number of milliseconds: '" + value + "'");
                }
                if (leaseMs != null && (leaseMs < ShareGroupConfig.MIN_LEASE_MS
                        || leaseMs > ShareGroupConfig.MAX_LEASE_MS)) {
                    throw invalid(key, key + " must be from " + ShareGroupConfig.MIN_LEASE_MS + " to "
                            + ShareGroupConfig.MAX_LEASE_MS + ": " + leaseMs);
                }
            } else {
                throw invalid(key, "unknown share group config '" + key + "': a share group sets "
                        + String.join(", ", GroupConfigs.SHARE.all()) + ", " + String.join(", ", SHARE_KEYS));
            }
        }
        return new ShareGroupConfig(start, attempts, current.redeliveryDelayMs(), current.deadLetterTopic(),
                isolation, leaseMs);
    }

    private static TierlogException invalid(String key, String message) {
        return new TierlogException(ErrorType.INVALID_CONFIG, message, Map.of("key", key));
    }
}
