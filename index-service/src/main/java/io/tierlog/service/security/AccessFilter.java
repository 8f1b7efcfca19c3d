package io.tierlog.service.security;

import io.tierlog.access.Authenticator;
import io.tierlog.access.Decision;
import io.tierlog.access.HttpRoutes;
import io.tierlog.access.JwtVerifier;
import io.tierlog.access.Principal;
import io.tierlog.access.Requirement;
import io.tierlog.http.ProblemType;
import io.tierlog.log.ErrorType;
import io.tierlog.service.http.Problem;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.config.TierlogConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The one access check of every HTTP request, a Vert.x route ahead of all others ({@value #ORDER}), run before any
 * body is read: CORS ({@link Cors}); then for {@code /v1} paths authentication ({@code token} mode: a bearer token,
 * else 401 {@code unauthorized} with {@code WWW-Authenticate: Bearer}; {@code none} mode: the anonymous principal),
 * the per-address failed-attempt limit (429 {@code too-many-failures} with {@code Retry-After}), authorization
 * against {@link HttpRoutes} (403 {@code forbidden} naming operation and resource), and the request media type of
 * JSON endpoints (415 {@code unsupported-media-type}). The principal is left in the routing context under
 * {@value Principal#CONTEXT_KEY}. In {@code token} mode {@code /q/*} other than {@code /q/health} needs
 * {@code admin:cluster}. Stateless apart from {@link AccessControl}'s state; runs on the event loop, except JWT
 * verification, which may fetch the issuer's keys and so runs on a worker with the request paused.
 */
@Singleton
public class AccessFilter {
    static final int ORDER = -1000;
    private static final List<Requirement> ADMIN = HttpRoutes.requirements("GET", "/v1/tokens");

    private final AccessControl access;
    private final Cors cors;

    public AccessFilter(AccessControl access, TierlogConfig config) {
        this.access = access;
        this.cors = new Cors(config.cors().origins().orElse(List.of()));
    }

    void install(@Observes Router router) {
        router.route().order(ORDER).handler(this::filter);
    }

    private void filter(RoutingContext ctx) {
        if (cors.handle(ctx)) {
            return;
        }
        String path = ctx.normalizedPath();
        List<Requirement> needs;
        if (path.equals("/v1") || path.startsWith("/v1/")) {
            needs = HttpRoutes.requirements(ctx.request().method().name(), path);
        } else if (access.tokenMode() && path.startsWith("/q/") && !path.equals("/q/health")
                && !path.startsWith("/q/health/")) {
            needs = ADMIN;
        } else {
            ctx.next();
            return;
        }
        if (!access.tokenMode()) {
            authorized(ctx, Principal.ANONYMOUS, needs, path);
            return;
        }
        String address = address(ctx.request());
        long wait = access.limiter().retryAfterSeconds(address);
        if (wait > 0) {
            access.authenticationFailed("too-many-failures", "", address, ctx.request().method() + " " + path);
            ctx.response().putHeader("Retry-After", Long.toString(wait));
            problem(ctx, new Problem(ProblemType.TOO_MANY_FAILURES, "too many failed authentication attempts from this "
                    + "address; retry after " + wait + " s", Map.of("retryAfterSeconds", wait)));
            return;
        }
        String authorization = ctx.request().getHeader("Authorization");
        if (authorization != null && JwtVerifier.looksLikeJwt(authorization)) {
            // The issuer's keys may have to be fetched: off the event loop, with the body held back meanwhile.
            HttpServerRequest request = ctx.request();
            request.pause();
            ctx.vertx().executeBlocking(() -> access.authenticator().authenticate(authorization), false)
                    .onComplete(r -> {
                        Authenticator.Result result = r.succeeded() ? r.result()
                                : new Authenticator.Result(null, io.tierlog.access.AuthFailure.INVALID_JWT,
                                String.valueOf(r.cause()));
                        authenticated(ctx, result, address, needs, path);
                        request.resume();
                    });
            return;
        }
        authenticated(ctx, access.authenticator().authenticate(authorization), address, needs, path);
    }

    private void authenticated(RoutingContext ctx, Authenticator.Result result, String address,
                               List<Requirement> needs, String path) {
        if (!result.ok()) {
            access.limiter().failed(address);
            access.authenticationFailed(result.failure().reason(), result.detail(), address,
                    ctx.request().method() + " " + path);
            ctx.response().putHeader("WWW-Authenticate", result.failure() == io.tierlog.access.AuthFailure.MISSING
                    ? "Bearer realm=\"tierlog\"" : "Bearer realm=\"tierlog\", error=\"invalid_token\"");
            problem(ctx, Problem.of(ErrorType.UNAUTHORIZED,
                    "a valid bearer token is required (Authorization: Bearer <token>)"));
            return;
        }
        authorized(ctx, result.principal().at(address), needs, path);
    }

    private void authorized(RoutingContext ctx, Principal principal, List<Requirement> needs, String path) {
        ctx.put(Principal.CONTEXT_KEY, principal);
        Decision d = access.authorize(principal, needs, ctx.request().method().name(), path);
        if (!d.allowed()) {
            Problem p = Problem.of(AccessControl.forbidden(d));
            problem(ctx, p);
            return;
        }
        String unsupported = unsupportedMediaType(ctx.request(), path);
        if (unsupported != null) {
            problem(ctx, new Problem(ProblemType.UNSUPPORTED_MEDIA_TYPE, unsupported, Map.of("field", "Content-Type")));
            return;
        }
        ctx.next();
    }

    /**
     * JSON endpoints take only JSON ({@code application/json} or a {@code +json} type); produce also takes record
     * batches. Other types, or none, would let a web page post to the API without a CORS preflight (browsers send
     * {@code text/plain} bodies cross-origin unasked). Null when the type is fine.
     */
    static String unsupportedMediaType(HttpServerRequest request, String path) {
        HttpMethod m = request.method();
        if (!(m.equals(HttpMethod.POST) || m.equals(HttpMethod.PUT) || m.equals(HttpMethod.PATCH))) {
            return null;
        }
        String contentType = request.getHeader("Content-Type");
        String media = contentType == null ? "" : contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (media.equals("application/json") || media.endsWith("+json")) {
            return null;
        }
        if (media.equals(RecordBatchesMedia.TYPE) && m.equals(HttpMethod.POST) && path.endsWith("/records")) {
            return null;
        }
        return contentType == null ? "Content-Type is required: application/json"
                : "Content-Type '" + contentType + "' is not supported; send application/json";
    }

    private static String address(HttpServerRequest request) {
        SocketAddress a = request.remoteAddress();
        return a == null ? "unknown" : a.hostAddress();
    }

    static void problem(RoutingContext ctx, Problem p) {
        if (!ctx.request().isEnded()) {
            // the body is not read, so the connection cannot carry another request
            ctx.response().putHeader("Connection", "close");
        }
        ctx.response().setStatusCode(p.status()).putHeader("Content-Type", Problem.MEDIA_TYPE)
                .end(Buffer.buffer(p.toJson()));
    }
}
