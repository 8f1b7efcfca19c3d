package io.tierlog.service.ops;

import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

class ClosingListenerAcceptFilterTest {
    private final ClosingListenerAcceptFilter filter = new ClosingListenerAcceptFilter();

    @Test
    void dropsTheAcceptorWarningWhenTheClosingServerHasNoEventLoopLeft() {
        assertThat(filter.isLoggable(acceptorWarning(closingServerRace()))).isFalse();
    }

    @Test
    void keepsEveryOtherRegistrationFailure() {
        assertThat(filter.isLoggable(acceptorWarning(thrownAt("io.netty.channel.SingleThreadEventLoop", "register"))))
                .as("another cause").isTrue();
        LogRecord rejected = acceptorWarning(null);
        rejected.setThrown(new java.util.concurrent.RejectedExecutionException("event executor terminated"));
        assertThat(filter.isLoggable(rejected)).as("another exception").isTrue();
        LogRecord otherLogger = acceptorWarning(closingServerRace());
        otherLogger.setLoggerName("io.tierlog.service.kafka.KafkaListener");
        assertThat(filter.isLoggable(otherLogger)).as("another logger").isTrue();
        assertThat(filter.isLoggable(new LogRecord(Level.INFO, "no exception"))).isTrue();
    }

    private static LogRecord acceptorWarning(Throwable thrown) {
        LogRecord record = new LogRecord(Level.WARNING, "Failed to register an accepted channel: {}");
        record.setLoggerName(ClosingListenerAcceptFilter.NETTY_ACCEPTOR_LOGGER);
        record.setThrown(thrown);
        return record;
    }

    /** What Vert.x 4's VertxEventLoopGroup.next throws when its server has no handler left. */
    static IllegalStateException closingServerRace() {
        return thrownAt(ClosingListenerAcceptFilter.VERTX_EVENT_LOOP_GROUP, "next");
    }

    private static IllegalStateException thrownAt(String className, String method) {
        IllegalStateException e = new IllegalStateException();
        e.setStackTrace(new StackTraceElement[] {
                new StackTraceElement(className, method, "X.java", 37),
                new StackTraceElement("io.netty.bootstrap.ServerBootstrap$ServerBootstrapAcceptor", "channelRead",
                        "ServerBootstrap.java", 249)});
        return e;
    }
}
