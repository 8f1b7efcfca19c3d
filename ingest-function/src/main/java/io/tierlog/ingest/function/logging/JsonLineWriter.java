package io.tierlog.ingest.function.logging;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.spi.MDCAdapter;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Renders one log event as one line of JSON:
 * {@code {"timestamp", "level", "logger", "message", <MDC entries, e.g. "requestId">, <key-values>, "error",
 * "stackTrace"}} and prints it to the current {@code System.out} with a single {@code println}, so lines from
 * concurrent threads never interleave and a stack trace never spans several CloudWatch events. Stdout is looked up
 * per line because the runtime interface client replaces it before loading the handler. Thread-safe.
 */
final class JsonLineWriter {
    private static final JsonFactory JSON = new JsonFactory();

    private final Clock clock;
    private final MDCAdapter mdc;

    JsonLineWriter(Clock clock, MDCAdapter mdc) {
        this.clock = clock;
        this.mdc = mdc;
    }

    void write(Level level, String logger, String message, List<KeyValuePair> pairs, Throwable error) {
        System.out.println(render(level, logger, message, pairs, error));
    }

    String render(Level level, String logger, String message, List<KeyValuePair> pairs, Throwable error) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("timestamp", Instant.ofEpochMilli(clock.millis()).toString());
            g.writeStringField("level", level.name());
            g.writeStringField("logger", logger);
            g.writeStringField("message", message);
            Map<String, String> context = mdc.getCopyOfContextMap();
            if (context != null) {
                for (Map.Entry<String, String> e : context.entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
            }
            for (KeyValuePair p : pairs) {
                writeValue(g, p.key, p.value);
            }
            if (error != null) {
                g.writeStringField("error", error.getClass().getName() + ": " + error.getMessage());
                StringWriter trace = new StringWriter();
                error.printStackTrace(new PrintWriter(trace));
                g.writeStringField("stackTrace", trace.toString());
            }
            g.writeEndObject();
        } catch (IOException e) {
            // A StringWriter does not fail; keep the event rather than lose it.
            return "{\"level\":\"" + level.name() + "\",\"message\":\"unrenderable log event\"}";
        }
        return out.toString();
    }

    private static void writeValue(JsonGenerator g, String key, Object value) throws IOException {
        if (value instanceof Integer || value instanceof Long || value instanceof Short) {
            g.writeNumberField(key, ((Number) value).longValue());
        } else if (value instanceof Boolean b) {
            g.writeBooleanField(key, b);
        } else if (value == null) {
            g.writeNullField(key);
        } else {
            g.writeStringField(key, String.valueOf(value));
        }
    }
}
