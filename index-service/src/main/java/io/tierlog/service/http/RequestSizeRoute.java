package io.tierlog.service.http;

import io.tierlog.http.ProblemType;
import io.tierlog.service.config.TierlogConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.util.Map;

/**
 * Rejects a produce request whose declared {@code Content-Length} exceeds {@code tierlog.max-request-bytes}
 * with 413 {@code request-too-large} before its body is read, so an oversize request costs no memory and gets the
 * api.md problem rather than the HTTP layer's bare 413. Bodies without a length (chunked) are checked by
 * {@link io.tierlog.ingest.IngestService} once read, within Vert.x's {@code quarkus.http.limits.max-body-size}.
 */
@Singleton
public class RequestSizeRoute {
    private final int maxRequestBytes;

    public RequestSizeRoute(TierlogConfig config) {
        this.maxRequestBytes = config.maxRequestBytes();
    }

    void install(@Observes Router router) {
        router.post("/v1/topics/:topic/records").order(-100).handler(this::check);
    }

    private void check(RoutingContext ctx) {
        long length = RequestBody.declaredLength(ctx.request());
        if (length <= maxRequestBytes) {
            ctx.next();
            return;
        }
        Problem p = new Problem(ProblemType.REQUEST_TOO_LARGE, "request body of " + length
                + " bytes exceeds max.request.bytes = " + maxRequestBytes, Map.of("maxRequestBytes", maxRequestBytes));
        // The body is not read, so the connection cannot be reused.
        ctx.response().setStatusCode(p.status()).putHeader("Content-Type", Problem.MEDIA_TYPE)
                .putHeader("Connection", "close").end(Buffer.buffer(p.toJson()));
    }
}
