package io.tierlog.ingest.function.logging;

import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventAware;

import java.util.List;

/**
 * A logger that writes JSON lines. It implements {@link LoggingEventAware} so that SLF4J's fluent API hands over
 * key-value pairs ({@code LOG.atInfo().addKeyValue("topic", t)}) as separate JSON members instead of folding them
 * into the message text. Thread-safe.
 */
final class JsonLineLogger extends LegacyAbstractLogger implements LoggingEventAware {
    private final transient JsonLineWriter writer;
    private final Level threshold;

    JsonLineLogger(String name, JsonLineWriter writer, Level threshold) {
        this.name = name;
        this.writer = writer;
        this.threshold = threshold;
    }

    private boolean enabled(Level level) {
        return level.toInt() >= threshold.toInt();
    }

    @Override
    public boolean isTraceEnabled() {
        return enabled(Level.TRACE);
    }

    @Override
    public boolean isDebugEnabled() {
        return enabled(Level.DEBUG);
    }

    @Override
    public boolean isInfoEnabled() {
        return enabled(Level.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return enabled(Level.WARN);
    }

    @Override
    public boolean isErrorEnabled() {
        return enabled(Level.ERROR);
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                               Throwable throwable) {
        writer.write(level, name, MessageFormatter.basicArrayFormat(pattern, arguments), List.of(), throwable);
    }

    @Override
    public void log(LoggingEvent event) {
        if (!enabled(event.getLevel())) {
            return;
        }
        Object[] args = event.getArgumentArray();
        String message = args == null || args.length == 0 ? event.getMessage()
                : MessageFormatter.basicArrayFormat(event.getMessage(), args);
        List<KeyValuePair> pairs = event.getKeyValuePairs() == null ? List.of() : event.getKeyValuePairs();
        writer.write(event.getLevel(), name, message, pairs, event.getThrowable());
    }
}
