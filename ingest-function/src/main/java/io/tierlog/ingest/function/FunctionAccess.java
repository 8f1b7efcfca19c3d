package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.tierlog.access.Authenticator;
import io.tierlog.access.Authorizer;
import io.tierlog.access.Decision;
import io.tierlog.access.FailureLimiter;
import io.tierlog.access.GrantStore;
import io.tierlog.access.JwksKeys;
import io.tierlog.access.JwtVerifier;
import io.tierlog.access.Operation;
import io.tierlog.access.Principal;
import io.tierlog.access.Resource;
import io.tierlog.access.Scopes;
import io.tierlog.access.Secrets;
import io.tierlog.access.TokenStore;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The function's identity and access check, the same rules and answers as the index-service's (docs/security.md),
 * from the environment: {@code TIERLOG_AUTH_MODE} ({@code none}, the default, or {@code token}),
 * {@code TIERLOG_AUTH_BOOTSTRAP_TOKEN_FILE}, {@code TIERLOG_AUTH_JWT_ISSUER}, {@code TIERLOG_AUTH_JWT_JWKS_URL},
 * {@code TIERLOG_AUTH_JWT_AUDIENCE}, {@code TIERLOG_AUTH_MAX_FAILURES_PER_MINUTE} (default 30).
 *
 * <p>In {@code token} mode, behind API Gateway's JWT authorizer the event carries the verified claims
 * ({@code requestContext.authorizer.jwt.claims}); their {@code scope} is used as is, API Gateway having checked
 * signature, issuer, audience and expiry. Invoked without them, the function verifies the bearer token itself:
 * a token minted on the shared hot volume (re-read when the last read is a second old, since a frozen Lambda
 * runs no background refresher), the bootstrap token, or a JWT. Token and JWT callers also have the grants to their
 * names on the volume (Kafka's ACLs), re-read as the tokens are. Built on the first request, not at
 * initialisation, so a SnapStart snapshot holds no file state. Thread-safe.
 */
final class FunctionAccess {
    private static final Logger AUDIT = LoggerFactory.getLogger("io.tierlog.audit");
    private static final Duration MAX_TOKEN_AGE = Duration.ofSeconds(1);

    private final boolean tokenMode;
    private final Map<String, String> env;
    private final Clock clock;
    private final Authorizer authorizer = new Authorizer();
    private volatile Authenticator authenticator;
    private volatile TokenStore tokens;
    private volatile GrantStore grants;
    private final FailureLimiter limiter;

    FunctionAccess(Map<String, String> env, Clock clock) {
        String mode = env.getOrDefault("TIERLOG_AUTH_MODE", "none").toLowerCase(Locale.ROOT);
        if (!mode.equals("none") && !mode.equals("token")) {
            throw new IllegalArgumentException("TIERLOG_AUTH_MODE must be none or token, not '" + mode + "'");
        }
        this.tokenMode = mode.equals("token");
        this.env = Map.copyOf(env);
        this.clock = clock;
        this.limiter = new FailureLimiter(Integer.parseInt(env.getOrDefault("TIERLOG_AUTH_MAX_FAILURES_PER_MINUTE",
                "30")), clock);
    }

    /** The caller of {@code event}; throws 401 {@code unauthorized} or 429 {@code too-many-failures}. */
    Principal authenticate(APIGatewayV2HTTPEvent event) {
        if (!tokenMode) {
            return Principal.ANONYMOUS;
        }
        Map<String, String> claims = authorizerClaims(event);
        if (claims != null) {
            authenticator(); // the grant store, read as fresh as the tokens
            return new Principal("jwt:" + claims.getOrDefault("sub", "?"), Scopes.fromOAuthScope(claims.get("scope")))
                    .withGrants(grants);
        }
        String address = sourceIp(event);
        long wait = limiter.retryAfterSeconds(address);
        if (wait > 0) {
            AUDIT.atInfo().addKeyValue("reason", "too-many-failures").addKeyValue("address", address)
                    .log("authentication failed");
            throw new TierlogException(ErrorType.TOO_MANY_FAILURES, "too many failed authentication attempts from "
                    + "this address; retry after " + wait + " s", Map.of("retryAfterSeconds", wait));
        }
        Authenticator.Result r = authenticator().authenticate(header(event, "authorization"));
        if (!r.ok()) {
            limiter.failed(address);
            AUDIT.atInfo().addKeyValue("reason", r.failure().reason()).addKeyValue("address", address)
                    .addKeyValue("detail", r.detail()).log("authentication failed");
            throw new TierlogException(ErrorType.UNAUTHORIZED,
                    "a valid bearer token is required (Authorization: Bearer <token>)");
        }
        return r.principal();
    }

    /** Throws 403 {@code forbidden} naming operation and resource unless {@code p} may produce to {@code topic}. */
    void authorizeProduce(Principal p, String topic) {
        Decision d = authorizer.authorize(p, Operation.PRODUCE, Resource.topic(topic));
        if (!d.allowed()) {
            AUDIT.atInfo().addKeyValue("principal", p.name()).addKeyValue("operation", d.operation())
                    .addKeyValue("resource", d.resource()).addKeyValue("reason", d.reason()).log("access denied");
            throw new TierlogException(ErrorType.FORBIDDEN, "not allowed to " + d.operation() + " " + d.resource(),
                    Map.of("operation", d.operation(), "resource", d.resource()));
        }
    }

    private Authenticator authenticator() {
        Authenticator a = authenticator;
        if (a == null) {
            synchronized (this) {
                if (authenticator == null) {
                    Path dataDir = Path.of(env.getOrDefault("TIERLOG_DATA_DIR", "./data/hot"));
                    Secrets secrets = new Secrets(new SecureRandom());
                    tokens = new TokenStore(TokenStore.directoryIn(dataDir), clock, secrets);
                    grants = new GrantStore(GrantStore.directoryIn(dataDir), clock, secrets);
                    Optional<String> bootstrap = Optional.ofNullable(env.get("TIERLOG_AUTH_BOOTSTRAP_TOKEN_FILE"))
                            .map(f -> Authenticator.readBootstrapToken(Path.of(f)));
                    authenticator = new Authenticator(tokens, grants, jwt(), bootstrap);
                }
                a = authenticator;
            }
        }
        tokens.refreshIfOlderThan(MAX_TOKEN_AGE);
        grants.refreshIfOlderThan(MAX_TOKEN_AGE);
        return a;
    }

    private Optional<JwtVerifier> jwt() {
        String issuer = env.get("TIERLOG_AUTH_JWT_ISSUER");
        String jwks = env.get("TIERLOG_AUTH_JWT_JWKS_URL");
        if (issuer == null || jwks == null) {
            return Optional.empty();
        }
        return Optional.of(new JwtVerifier(issuer, Optional.ofNullable(env.get("TIERLOG_AUTH_JWT_AUDIENCE")),
                new JwksKeys(URI.create(jwks), clock, Duration.ofMinutes(10), Duration.ofSeconds(10)), clock));
    }

    private static Map<String, String> authorizerClaims(APIGatewayV2HTTPEvent event) {
        var ctx = event.getRequestContext();
        if (ctx == null || ctx.getAuthorizer() == null || ctx.getAuthorizer().getJwt() == null) {
            return null;
        }
        return ctx.getAuthorizer().getJwt().getClaims();
    }

    private static String sourceIp(APIGatewayV2HTTPEvent event) {
        var ctx = event.getRequestContext();
        String ip = ctx == null || ctx.getHttp() == null ? null : ctx.getHttp().getSourceIp();
        return ip == null ? "unknown" : ip;
    }

    private static String header(APIGatewayV2HTTPEvent event, String name) {
        Map<String, String> headers = event.getHeaders();
        if (headers == null) {
            return null;
        }
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) {
                return e.getValue();
            }
        }
        return null;
    }
}
