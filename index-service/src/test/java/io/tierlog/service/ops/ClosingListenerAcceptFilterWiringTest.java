package io.tierlog.service.ops;

import io.quarkus.test.junit.QuarkusTest;
import org.jboss.logmanager.ExtHandler;
import org.jboss.logmanager.handlers.ConsoleHandler;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Filter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/** The running service's console log, where the packaged service writes, applies the filter (application.properties). */
@QuarkusTest
class ClosingListenerAcceptFilterWiringTest {

    @Test
    void theConsoleLogDropsTheClosingServerRaceWarningAndKeepsOtherWarnings() {
        List<Handler> consoles = new ArrayList<>();
        collectConsoles(LogManager.getLogManager().getLogger("").getHandlers(), consoles);
        assertThat(consoles).isNotEmpty();
        for (Handler console : consoles) {
            Filter filter = console.getFilter();
            assertThat(filter).as("console filter").isNotNull();
            assertThat(filter.isLoggable(acceptorWarning(ClosingListenerAcceptFilterTest.closingServerRace())))
                    .as("the closing-server race").isFalse();
            assertThat(filter.isLoggable(acceptorWarning(new IllegalStateException("another cause"))))
                    .as("another registration failure").isTrue();
        }
    }

    private static LogRecord acceptorWarning(Throwable thrown) {
        LogRecord record = new LogRecord(Level.WARNING, "Failed to register an accepted channel: {}");
        record.setLoggerName(ClosingListenerAcceptFilter.NETTY_ACCEPTOR_LOGGER);
        record.setThrown(thrown);
        return record;
    }

    private static void collectConsoles(Handler[] handlers, List<Handler> consoles) {
        for (Handler h : handlers) {
            if (h instanceof ConsoleHandler) {
                consoles.add(h);
            }
            if (h instanceof ExtHandler ext) {
                collectConsoles(ext.getHandlers(), consoles);
            }
        }
    }
}
