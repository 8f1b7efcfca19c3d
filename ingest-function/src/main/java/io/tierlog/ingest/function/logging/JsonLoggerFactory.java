package io.tierlog.ingest.function.logging;

import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.event.Level;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One {@link JsonLineLogger} per name, all sharing one writer and threshold. Thread-safe. */
final class JsonLoggerFactory implements ILoggerFactory {
    private final JsonLineWriter writer;
    private final Level threshold;
    private final Map<String, Logger> loggers = new ConcurrentHashMap<>();

    JsonLoggerFactory(JsonLineWriter writer, Level threshold) {
        this.writer = writer;
        this.threshold = threshold;
    }

    @Override
    public Logger getLogger(String name) {
        return loggers.computeIfAbsent(name, n -> new JsonLineLogger(n, writer, threshold));
    }
}
