package io.tierlog.service.ops;

import io.quarkus.logging.LoggingFilter;

import java.util.logging.Filter;
import java.util.logging.LogRecord;

/**
 * Drops Netty's "Failed to register an accepted channel" warning when its cause is Vert.x 4's closing-server race: a
 * connection accepted after the server's last handler was removed, but before its socket was closed, finds no event
 * loop ({@code VertxEventLoopGroup.next} throws {@link IllegalStateException}) and is closed unanswered, which is what
 * a stopping server does with a new connection anyway. Without this filter, every SIGTERM under load may print a
 * stack trace for it (eclipse-vertx/vert.x#6087, fixed in Vert.x 5). Any other registration failure is still logged.
 */
@LoggingFilter(name = "closing-listener-accept")
public final class ClosingListenerAcceptFilter implements Filter {
    static final String NETTY_ACCEPTOR_LOGGER = "io.netty.bootstrap.ServerBootstrap";
    static final String VERTX_EVENT_LOOP_GROUP = "io.vertx.core.net.impl.VertxEventLoopGroup";

    @Override
    public boolean isLoggable(LogRecord record) {
        return !isClosingServerRace(record);
    }

    private static boolean isClosingServerRace(LogRecord record) {
        if (!NETTY_ACCEPTOR_LOGGER.equals(record.getLoggerName())
                || !(record.getThrown() instanceof IllegalStateException thrown)) {
            return false;
        }
        StackTraceElement[] stack = thrown.getStackTrace();
        return stack.length > 0 && VERTX_EVENT_LOOP_GROUP.equals(stack[0].getClassName())
                && "next".equals(stack[0].getMethodName());
    }
}
