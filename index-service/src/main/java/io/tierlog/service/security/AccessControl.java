package io.tierlog.service.security;

import io.quarkus.runtime.StartupEvent;
import io.tierlog.access.Authenticator;
import io.tierlog.access.Authorizer;
import io.tierlog.access.Decision;
import io.tierlog.access.DelegationTokenStore;
import io.tierlog.access.FailureLimiter;
import io.tierlog.access.GrantStore;
import io.tierlog.access.JwksKeys;
import io.tierlog.access.JwtVerifier;
import io.tierlog.access.Operation;
import io.tierlog.access.Principal;
import io.tierlog.access.Requirement;
import io.tierlog.access.Resource;
import io.tierlog.access.ScramCredentialStore;
import io.tierlog.access.Scopes;
import io.tierlog.access.Secrets;
import io.tierlog.access.TokenRecord;
import io.tierlog.access.TokenStore;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import io.vertx.ext.web.RoutingContext;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The service's identity and access wiring (docs/security.md): the mode ({@code none} or {@code token}), the minted
 * tokens and the grants on the hot volume (re-read every {@code tierlog.auth.token-refresh-interval}), the bootstrap token, the
 * JWT issuer, the failed-attempt limiter, and the one authorization check with its audit log line
 * (category {@code io.tierlog.audit}) and counters {@code tierlog_auth_failures_total{reason}} and
 * {@code tierlog_auth_denied_total{operation}}. Secrets are never logged. Thread-safe.
 */
@Singleton
public class AccessControl {
    static final Logger AUDIT = Logger.getLogger("io.tierlog.audit");

    private final boolean tokenMode;
    private final boolean allowAnonymous;
    private final TokenStore tokens;
    private final GrantStore grants;
    private final ScramCredentialStore scram;
    private final DelegationTokenStore delegationTokens;
    private final Authenticator authenticator;
    private final Authorizer authorizer = new Authorizer();
    private final FailureLimiter limiter;
    private final Meters meters;
    private final Clock clock;

    @Inject
    public AccessControl(TierlogConfig config, Meters meters) {
        this(config, meters, Clock.systemUTC());
    }

    AccessControl(TierlogConfig config, Meters meters, Clock clock) {
        TierlogConfig.Auth auth = config.auth();
        String mode = auth.mode().toLowerCase(Locale.ROOT);
        if (!mode.equals("none") && !mode.equals("token")) {
            throw new IllegalArgumentException("tierlog.auth.mode must be none or token, not '" + auth.mode() + "'");
        }
        this.tokenMode = mode.equals("token");
        this.allowAnonymous = auth.allowAnonymous();
        this.meters = meters;
        this.clock = clock;
        Secrets secrets = new Secrets(new SecureRandom());
        this.tokens = new TokenStore(TokenStore.directoryIn(config.dataDir()), clock, secrets);
        this.grants = new GrantStore(GrantStore.directoryIn(config.dataDir()), clock, secrets);
        this.scram = new ScramCredentialStore(ScramCredentialStore.directoryIn(config.dataDir()), clock, secrets);
        this.delegationTokens = new DelegationTokenStore(DelegationTokenStore.directoryIn(config.dataDir()), clock,
                secrets, auth.delegationTokenExpiryTime(), auth.delegationTokenMaxLifetime());
        this.limiter = new FailureLimiter(auth.maxFailuresPerMinute(), clock);
        Optional<String> bootstrap = auth.bootstrapTokenFile().map(Authenticator::readBootstrapToken)
                .or(() -> auth.bootstrapToken().map(String::strip).filter(t -> !t.isEmpty()));
        this.authenticator = new Authenticator(tokens, grants, jwt(auth.jwt(), clock), bootstrap);
        if (tokenMode) {
            tokens.startRefresher(auth.tokenRefreshInterval());
            grants.startRefresher(auth.tokenRefreshInterval());
            scram.startRefresher(auth.tokenRefreshInterval());
            delegationTokens.startRefresher(auth.tokenRefreshInterval());
        }
    }

    private static Optional<JwtVerifier> jwt(TierlogConfig.Auth.Jwt jwt, Clock clock) {
        if (jwt.issuer().isEmpty() && jwt.jwksUrl().isEmpty()) {
            return Optional.empty();
        }
        if (jwt.issuer().isEmpty() || jwt.jwksUrl().isEmpty()) {
            throw new IllegalArgumentException("JWTs need both tierlog.auth.jwt.issuer and tierlog.auth.jwt.jwks-url");
        }
        JwksKeys keys = new JwksKeys(URI.create(jwt.jwksUrl().get()), clock, Duration.ofMinutes(10),
                jwt.jwksMinRefreshInterval());
        return Optional.of(new JwtVerifier(jwt.issuer().get(), jwt.audience(), keys, clock));
    }

    /**
     * Refuses to start an open ({@code none}) service on a non-loopback address unless
     * {@code tierlog.auth.allow-anonymous=true}: anyone who reaches the port could otherwise do anything.
     */
    void checkBinding(@Observes StartupEvent start) {
        String host = ConfigProvider.getConfig().getOptionalValue("quarkus.http.host", String.class).orElse("0.0.0.0");
        if (!tokenMode && !allowAnonymous && !loopback(host)) {
            throw new IllegalStateException("tierlog.auth.mode=none on non-loopback address " + host
                    + ": set tierlog.auth.mode=token (docs/security.md), or tierlog.auth.allow-anonymous=true to "
                    + "let anyone who reaches this address use the service");
        }
        AUDIT.infof("auth mode=%s host=%s", tokenMode ? "token" : "none", host);
    }

    public static boolean loopback(String host) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    public boolean tokenMode() {
        return tokenMode;
    }

    Clock clock() {
        return clock;
    }

    public TokenStore tokens() {
        return tokens;
    }

    /** The grants (Kafka's ACLs) on the hot volume. */
    public GrantStore grants() {
        return grants;
    }

    /** Adds {@code grant}, durable before it returns, audited with who made it; whether it is new. */
    public boolean grant(GrantStore.Grant grant, Principal by) {
        boolean added = grants.add(grant);
        if (added) {
            audit("grant added principal=\"" + grant.principal() + "\" scope=" + grant.scope() + hostAndEffect(grant),
                    by);
        }
        return added;
    }

    /** Removes {@code grant}, durable before it returns, audited with who removed it; whether it was there. */
    public boolean revokeGrant(GrantStore.Grant grant, Principal by) {
        boolean removed = grants.remove(grant);
        if (removed) {
            audit("grant removed principal=\"" + grant.principal() + "\" scope=" + grant.scope()
                    + hostAndEffect(grant), by);
        }
        return removed;
    }

    private static String hostAndEffect(GrantStore.Grant grant) {
        return (grant.host() == null ? "" : " host=" + grant.host()) + (grant.deny() ? " effect=deny" : "");
    }

    /** One audit line for an administrator's change ({@code change}, then who made it); never give it a secret. */
    public void audit(String change, Principal by) {
        AUDIT.infof("%s by=%s", change, by.name());
    }

    Authenticator authenticator() {
        return authenticator;
    }

    FailureLimiter limiter() {
        return limiter;
    }

    /** The one check: allowed, or the denial counted and audited. */
    Decision authorize(Principal principal, List<Requirement> requirements, String method, String path) {
        Decision d = authorizer.authorize(principal, requirements);
        if (!d.allowed()) {
            denied(d, method + " " + path);
        }
        return d;
    }

    /**
     * For a handler that learns the resource name from the body (creating a topic): throws 403 {@code forbidden}
     * unless the request's principal may {@code op} on {@code resource}.
     */
    public void require(RoutingContext ctx, Operation op, Resource resource) {
        Principal p = principal(ctx);
        Decision d = authorizer.authorize(p, op, resource);
        if (!d.allowed()) {
            denied(d, ctx.request().method() + " " + ctx.normalizedPath());
            throw forbidden(d);
        }
    }

    /**
     * Authentication for edges other than HTTP (the Kafka listener's SASL/PLAIN password, SASL/OAUTHBEARER token):
     * a bare token, under the same per-address failed-attempt limit and audit line as a bearer header. Blocking (a
     * JWT may need the issuer's keys fetched).
     *
     * @return the principal, or empty when refused (bad token, or too many failures from {@code address})
     */
    public Optional<Principal> authenticateToken(String token, String address, String request) {
        if (!mayAttempt(address, request)) {
            return Optional.empty();
        }
        Authenticator.Result result = authenticator.authenticateToken(token);
        if (!result.ok()) {
            attemptFailed(result.failure().reason(), result.detail(), address, request);
            return Optional.empty();
        }
        return Optional.of(result.principal());
    }

    /** The SCRAM credentials Kafka's AlterUserScramCredentials sets (docs/kafka.md "SCRAM users"). */
    public ScramCredentialStore scramCredentials() {
        return scram;
    }

    /** Kafka's delegation tokens (docs/kafka.md "Delegation tokens"). */
    public DelegationTokenStore delegationTokens() {
        return delegationTokens;
    }

    /**
     * Who a delegation token authenticates as: its owner, with the scopes it was created with and the grants to the
     * owner's name; empty when the token is no longer usable, or is owned by a Tierlog token that is revoked or
     * expired (revoking a token cuts the delegation tokens made from it).
     */
    public Optional<Principal> delegatedPrincipal(DelegationTokenStore.Token token) {
        String owner = token.ownership().owner();
        String prefix = TokenRecord.PRINCIPAL_PREFIX;
        if (owner.startsWith(prefix) && tokens.usable(owner.substring(prefix.length())).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Principal(owner, token.ownership().scopes()).withGrants(grants));
    }

    /**
     * Whether {@code address} may try to authenticate now (under the failed-attempt limit); when not, the refusal is
     * counted and audited. For edges that verify a credential themselves (SASL/SCRAM's proof).
     */
    public boolean mayAttempt(String address, String request) {
        if (limiter.retryAfterSeconds(address) > 0) {
            authenticationFailed("too-many-failures", "", address, request);
            return false;
        }
        return true;
    }

    /** A failed attempt verified by the edge (a SCRAM proof that did not match): counted, limited and audited. */
    public void attemptFailed(String reason, String address, String request) {
        attemptFailed(reason, "", address, request);
    }

    private void attemptFailed(String reason, String detail, String address, String request) {
        limiter.failed(address);
        authenticationFailed(reason, detail, address, request);
    }

    /**
     * The principal of a SCRAM user whose proof the edge verified: {@code scram:<user>}, with no scopes of its own,
     * only the grants made to that name (Kafka's ACLs on {@code User:<user>}).
     */
    public Principal scramUser(String user) {
        return new Principal(ScramCredentialStore.principalName(user), Scopes.NONE).withGrants(grants);
    }

    /** The one check for edges other than HTTP: allowed, or the denial counted and audited. */
    public boolean allows(Principal principal, Operation op, Resource resource, String request) {
        Decision d = authorizer.authorize(principal, op, resource);
        if (!d.allowed()) {
            denied(d, request);
        }
        return d.allowed();
    }

    /** The request's principal (anonymous when the filter did not run, which only happens outside /v1). */
    public static Principal principal(RoutingContext ctx) {
        Principal p = ctx == null ? null : ctx.get(Principal.CONTEXT_KEY);
        return p == null ? Principal.ANONYMOUS : p;
    }

    static TierlogException forbidden(Decision d) {
        return new TierlogException(ErrorType.FORBIDDEN, "not allowed to " + d.operation() + " " + d.resource(),
                Map.<String, Object>of("operation", d.operation(), "resource", d.resource()));
    }

    private void denied(Decision d, String request) {
        AUDIT.infof("access denied principal=%s operation=%s resource=%s reason=\"%s\" request=\"%s\"",
                d.principal().name(), d.operation(), d.resource(), d.reason(), request);
        meters.authDenied(d.operation());
    }

    void authenticationFailed(String reason, String detail, String address, String request) {
        AUDIT.infof("authentication failed reason=%s address=%s request=\"%s\" detail=\"%s\"", reason, address,
                request, detail);
        meters.authFailed(reason);
    }

    @PreDestroy
    void close() {
        tokens.close();
        grants.close();
        scram.close();
        delegationTokens.close();
    }
}
