package io.tierlog.ingest.function.logging;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

import java.time.Clock;
import java.util.Locale;

/**
 * The SLF4J 2 binding of the Lambda artifact: every log line, ours and the storage engine's, is one JSON object
 * on stdout (which Lambda ships to CloudWatch Logs) carrying the MDC, so the request id set by the handler is on
 * each line an invocation causes. A real logging backend would add megabytes to a function that logs a few lines.
 *
 * <p>The threshold comes from {@code TIERLOG_LOG_LEVEL}, else Lambda's own {@code AWS_LAMBDA_LOG_LEVEL}
 * (advanced logging controls), else INFO. Registered through
 * {@code META-INF/services/org.slf4j.spi.SLF4JServiceProvider}.
 */
public final class JsonLoggingProvider implements SLF4JServiceProvider {
    private volatile ILoggerFactory loggerFactory;
    private volatile IMarkerFactory markerFactory;
    private volatile MDCAdapter mdcAdapter;

    @Override
    public void initialize() {
        mdcAdapter = new BasicMDCAdapter();
        markerFactory = new BasicMarkerFactory();
        Level threshold = threshold(System.getenv("TIERLOG_LOG_LEVEL"), System.getenv("AWS_LAMBDA_LOG_LEVEL"));
        loggerFactory = new JsonLoggerFactory(new JsonLineWriter(Clock.systemUTC(), mdcAdapter), threshold);
    }

    static Level threshold(String tierlogLevel, String lambdaLevel) {
        for (String candidate : new String[]{tierlogLevel, lambdaLevel}) {
            if (candidate != null && !candidate.isBlank()) {
                String name = candidate.trim().toUpperCase(Locale.ROOT);
                for (Level l : Level.values()) {
                    if (l.name().equals(name)) {
                        return l;
                    }
                }
                if (name.equals("FATAL")) {
                    return Level.ERROR;
                }
            }
        }
        return Level.INFO;
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggerFactory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markerFactory;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdcAdapter;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }
}
