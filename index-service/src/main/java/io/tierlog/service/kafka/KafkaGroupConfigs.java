package io.tierlog.service.kafka;

import io.tierlog.groups.GroupConfigs;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.service.config.TierlogConfig;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

import java.util.HashMap;
import java.util.Map;

/**
 * Kafka's group configs (resource type GROUP, {@code kafka-configs --entity-type groups}): a consumer group's own
 * session timeout and heartbeat interval for its KIP-848 members, stored in the group's state file by
 * {@link GroupCoordinator#alterConfigs} so every instance applies them. Described with the service's defaults
 * where the group sets none ({@code tierlog.kafka.group-session-timeout}); a group need not exist to be
 * configured, as in Kafka.
 */
@Singleton
public class KafkaGroupConfigs {
    private static final Map<String, String> DOCS = Map.of(
            GroupConfigs.SESSION_TIMEOUT_MS, "The timeout to detect client failures when using the consumer group protocol.",
            GroupConfigs.HEARTBEAT_INTERVAL_MS, "The heartbeat interval given to the members of a consumer group.");

    private final GroupCoordinator coordinator;
    private final long defaultSessionTimeoutMs;

    public KafkaGroupConfigs(GroupCoordinator coordinator, TierlogConfig config) {
        this.coordinator = coordinator;
        this.defaultSessionTimeoutMs = config.kafka().groupSessionTimeout().toMillis();
    }

    /** Every group config of {@code asked}'s group (or those it names), set or default. */
    void describe(DescribeConfigsRequestData.DescribeConfigsResource asked,
                  DescribeConfigsResponseData.DescribeConfigsResult result, boolean documentation) {
        GroupConfigs configs = coordinator.configs(asked.resourceName());
        Map<String, String> set = configs.values();
        Map<String, Long> effective = Map.of(
                GroupConfigs.SESSION_TIMEOUT_MS, configs.sessionTimeoutMs(defaultSessionTimeoutMs),
                GroupConfigs.HEARTBEAT_INTERVAL_MS, configs.heartbeatIntervalMs(defaultSessionTimeoutMs));
        for (String key : GroupConfigs.KEYS) {
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

    /**
     * IncrementalAlterConfigs on one group: SET a key or DELETE it (back to the default), all or nothing
     * (INVALID_CONFIG naming the key); APPEND and SUBTRACT are INVALID_REQUEST (no group config is a list).
     */
    void alter(IncrementalAlterConfigsRequestData.AlterConfigsResource asked, boolean validateOnly) {
        Map<String, String> changes = new HashMap<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : asked.configs()) {
            AlterConfigOp.OpType op = AlterConfigOp.OpType.forId(c.configOperation());
            if (op == AlterConfigOp.OpType.SET) {
                changes.put(c.name(), c.value() == null ? "" : c.value());
            } else if (op == AlterConfigOp.OpType.DELETE) {
                changes.put(c.name(), null);
            } else {
                throw Errors.INVALID_REQUEST.exception("operation " + op + " on " + c.name()
                        + ": group configs are not lists; use SET or DELETE");
            }
        }
        if (validateOnly) {
            coordinator.configs(asked.resourceName()).with(changes, defaultSessionTimeoutMs);
        } else if (!changes.isEmpty()) {
            coordinator.alterConfigs(asked.resourceName(), changes, defaultSessionTimeoutMs);
        }
    }
}
