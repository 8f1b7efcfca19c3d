package io.tierlog.service.security;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

import java.util.List;
import java.util.Set;

/**
 * Cross-origin access for browsers, only for the origins in {@code tierlog.cors.origins} (default none: no CORS
 * header is ever sent, so browsers keep other sites' pages from reading answers or sending non-simple requests).
 * An allowed origin gets {@code Access-Control-Allow-Origin} echoed (or {@code *} when {@code *} is configured) and
 * {@code Vary: Origin}; a preflight ({@code OPTIONS} with {@code Access-Control-Request-Method}) from it is answered
 * 204 here, without a token, as browsers send none. {@code Access-Control-Allow-Credentials} is never sent: the API
 * authenticates with bearer tokens, not cookies. Immutable.
 */
final class Cors {
    private static final String METHODS = "GET, POST, PUT, PATCH, DELETE";
    private static final String HEADERS = "Authorization, Content-Type, Accept, Last-Event-ID";
    private static final String EXPOSED = "Retry-After, WWW-Authenticate, Location, Tierlog-Next-Offset, "
            + "Tierlog-High-Watermark, Tierlog-Log-Start-Offset";

    private final Set<String> origins;
    private final boolean any;

    Cors(List<String> origins) {
        this.origins = Set.copyOf(origins.stream().map(String::trim).filter(s -> !s.isEmpty()).toList());
        this.any = this.origins.contains("*");
    }

    /** Adds CORS headers for an allowed origin; true when this answered the request (a preflight). */
    boolean handle(RoutingContext ctx) {
        if (origins.isEmpty()) {
            return false;
        }
        String origin = ctx.request().getHeader("Origin");
        if (origin == null) {
            return false;
        }
        boolean allowed = any || origins.contains(origin);
        boolean preflight = ctx.request().method().equals(HttpMethod.OPTIONS)
                && ctx.request().getHeader("Access-Control-Request-Method") != null;
        HttpServerResponse r = ctx.response();
        r.putHeader("Vary", "Origin");
        if (!allowed) {
            if (preflight) {
                // no CORS headers: the browser refuses the actual request
                r.setStatusCode(403).end();
                return true;
            }
            return false;
        }
        r.putHeader("Access-Control-Allow-Origin", any ? "*" : origin);
        if (preflight) {
            r.putHeader("Access-Control-Allow-Methods", METHODS).putHeader("Access-Control-Allow-Headers", HEADERS)
                    .putHeader("Access-Control-Max-Age", "600").setStatusCode(204).end();
            return true;
        }
        r.putHeader("Access-Control-Expose-Headers", EXPOSED);
        return false;
    }
}
