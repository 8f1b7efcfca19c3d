package io.tierlog.service.api;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.service.http.ProblemMapper;
import io.tierlog.service.http.Requests;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.util.Map;

/**
 * Once the service is stopping ({@link #drain}, on SIGTERM), answers every new request 503
 * {@code service-stopping} with {@code Retry-After: 1} and {@code Connection: close}, before any other route
 * (authentication included); its body is read and dropped first, so that the answer is not lost to a reset.
 * Nothing of the request is done, so a retry elsewhere is safe.
 * Quarkus' graceful shutdown by itself keeps serving new requests while it waits for those in flight, and a
 * producer that keeps sending would then meet the closing server mid-request. Requests already past this route
 * are answered normally. Thread-safe.
 */
@Singleton
public class DrainRoute {
    private volatile boolean draining;

    void install(@Observes Router router) {
        router.route().order(-2000).handler(this::handle);
    }

    /** From now on every new request is refused. Idempotent. */
    public void drain() {
        draining = true;
    }

    private void handle(RoutingContext ctx) {
        if (!draining) {
            ctx.next();
            return;
        }
        ctx.response().putHeader("Connection", "close");
        ProblemMapper.respondAfterBody(ctx, new TierlogException(ErrorType.SERVICE_STOPPING,
                "the service is stopping; retry the request (nothing of it was done)",
                Map.of(TierlogException.RETRY_AFTER_SECONDS, 1L)));
    }
}
