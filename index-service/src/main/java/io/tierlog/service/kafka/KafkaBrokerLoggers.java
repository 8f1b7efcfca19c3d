package io.tierlog.service.kafka;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.config.LogLevelConfig;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.jboss.logmanager.Level;
import org.jboss.logmanager.LogContext;
import org.jboss.logmanager.Logger;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Broker loggers ({@code kafka-configs --entity-type broker-loggers}): this instance's log levels, read and changed
 * while it runs, as Kafka's broker offers them through DescribeConfigs and IncrementalAlterConfigs of
 * {@code BROKER_LOGGER}. The resource is named by the broker's node id and only that instance answers for it (Kafka's
 * Admin sends it to that node); a change lasts until the instance stops (ADR 0086).
 *
 * <p>Levels are Kafka's ({@link LogLevelConfig#VALID_LOG_LEVELS}); every logger, and each category above one (its
 * packages), is listed with its effective level (its own, or its nearest ancestor's), the root logger as
 * {@code root}. SET gives a logger a level; DELETE makes it take its parent's again (not allowed for the root); APPEND
 * and SUBTRACT are INVALID_REQUEST. A resource's changes are all checked before any applies. A describe creates no
 * logger.
 */
final class KafkaBrokerLoggers {
    static final String ROOT = "root";
    /** A category name: Java package and class names, as Quarkus's {@code quarkus.log.category} takes them. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_$-]+(\\.[A-Za-z0-9_$-]+)*");
    private static final int MAX_NAME_LENGTH = 255;
    private static final List<String> LEVELS = List.of(LogLevelConfig.FATAL_LOG_LEVEL, LogLevelConfig.ERROR_LOG_LEVEL,
            LogLevelConfig.WARN_LOG_LEVEL, LogLevelConfig.INFO_LOG_LEVEL, LogLevelConfig.DEBUG_LOG_LEVEL,
            LogLevelConfig.TRACE_LOG_LEVEL);

    private final LogContext context = LogContext.getLogContext();

    /** Every logger of this instance (or those {@code asked} names) with its effective level. */
    void describe(DescribeConfigsRequestData.DescribeConfigsResource asked, int selfId,
                  DescribeConfigsResponseData.DescribeConfigsResult result) {
        requireSelf(asked.resourceName(), selfId);
        TreeSet<String> names = new TreeSet<>();
        if (asked.configurationKeys() == null) {
            names.add(ROOT);
            // With each logger the categories above it: setting a package's level is how loggers are tuned, and
            // kafka-configs alters only names a describe listed.
            for (String logger : Collections.list(context.getLoggerNames())) {
                for (int dot = logger.indexOf('.'); dot > 0; dot = logger.indexOf('.', dot + 1)) {
                    names.add(logger.substring(0, dot));
                }
                if (!logger.isEmpty()) {
                    names.add(logger);
                }
            }
        } else {
            names.addAll(asked.configurationKeys());
        }
        for (String name : names) {
            if (!ROOT.equals(name) && !NAME.matcher(name).matches()) {
                continue; // no such logger
            }
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(name)
                    .setValue(kafkaLevel(effectiveLevel(name))).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(DescribeConfigsResponse.ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG.id())
                    .setConfigType(DescribeConfigsResponse.ConfigType.STRING.id()));
        }
    }

    /** Applies a resource's SETs and DELETEs, all or none; {@code validateOnly} checks them only. */
    void alter(IncrementalAlterConfigsRequestData.AlterConfigsResource asked, int selfId, boolean validateOnly) {
        requireSelf(asked.resourceName(), selfId);
        Map<String, java.util.logging.Level> changes = new LinkedHashMap<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : asked.configs()) {
            String name = c.name();
            if (name == null || name.length() > MAX_NAME_LENGTH
                    || (!ROOT.equals(name) && !NAME.matcher(name).matches())) {
                throw new TierlogException(ErrorType.INVALID_CONFIG, "logger name '" + name + "' is not a logger "
                        + "category (dotted Java names of at most " + MAX_NAME_LENGTH + " characters, or root)",
                        Map.of("key", String.valueOf(name)));
            }
            AlterConfigOp.OpType op = AlterConfigOp.OpType.forId(c.configOperation());
            if (op == AlterConfigOp.OpType.SET) {
                changes.put(name, level(name, c.value()));
            } else if (op == AlterConfigOp.OpType.DELETE) {
                if (ROOT.equals(name)) {
                    throw Errors.INVALID_REQUEST.exception("the root logger's level cannot be removed, only set");
                }
                changes.put(name, null);
            } else {
                throw Errors.INVALID_REQUEST.exception("operation " + op + " on logger " + name
                        + ": broker loggers take SET or DELETE");
            }
        }
        if (!validateOnly) {
            changes.forEach((name, level) -> logger(name).setLevel(level));
        }
    }

    private static java.util.logging.Level level(String logger, String value) {
        String upper = value == null ? "" : value.trim().toUpperCase(Locale.ROOT);
        if (!LogLevelConfig.VALID_LOG_LEVELS.contains(upper)) {
            throw new TierlogException(ErrorType.INVALID_CONFIG, "cannot set logger " + logger + " to '" + value
                    + "': valid levels are " + String.join(", ", LEVELS), Map.of("key", logger));
        }
        return Level.parse(upper);
    }

    private Logger logger(String name) {
        return context.getLogger(ROOT.equals(name) ? "" : name);
    }

    /** The level of the nearest of {@code name} and the categories above it that has one, without creating any. */
    private java.util.logging.Level effectiveLevel(String name) {
        String category = ROOT.equals(name) ? "" : name;
        while (true) {
            Logger logger = context.getLoggerIfExists(category);
            if (logger != null && logger.getLevel() != null) {
                return logger.getLevel();
            }
            if (category.isEmpty()) {
                return java.util.logging.Level.INFO;
            }
            int dot = category.lastIndexOf('.');
            category = dot < 0 ? "" : category.substring(0, dot);
        }
    }

    /** The Kafka name of a level: JBoss's and java.util.logging's map onto the nearest one at or below them. */
    static String kafkaLevel(java.util.logging.Level level) {
        int v = level.intValue();
        if (v == java.util.logging.Level.OFF.intValue()) {
            return "OFF";
        }
        if (v >= Level.FATAL.intValue()) {
            return LogLevelConfig.FATAL_LOG_LEVEL;
        }
        if (v >= Level.ERROR.intValue()) {
            return LogLevelConfig.ERROR_LOG_LEVEL;
        }
        if (v >= Level.WARN.intValue()) {
            return LogLevelConfig.WARN_LOG_LEVEL;
        }
        if (v >= Level.INFO.intValue()) {
            return LogLevelConfig.INFO_LOG_LEVEL;
        }
        if (v >= Level.DEBUG.intValue()) {
            return LogLevelConfig.DEBUG_LOG_LEVEL;
        }
        return LogLevelConfig.TRACE_LOG_LEVEL;
    }

    /** Kafka's check: a broker's loggers are described and changed on that broker only. */
    private static void requireSelf(String name, int selfId) {
        if (name == null || name.isEmpty()) {
            throw Errors.INVALID_REQUEST.exception("broker loggers are named by a broker's node id");
        }
        if (!name.equals(String.valueOf(selfId))) {
            throw Errors.INVALID_REQUEST.exception("unexpected broker id: this is broker " + selfId + ", not "
                    + name);
        }
    }
}
