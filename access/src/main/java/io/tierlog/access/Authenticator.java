package io.tierlog.access;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Turns an {@code Authorization} header into a principal: {@code Bearer <token>}, where the token is the bootstrap
 * admin token, a token from the {@link TokenStore}, or (when an issuer is configured) a JWT; token and JWT principals
 * carry the {@link GrantStore}'s grants to their names. Every refusal carries its {@link AuthFailure} for the audit
 * log; clients see one 401 for all of them. Thread-safe.
 */
public final class Authenticator {
    /** RFC 6750's token68 after {@code Bearer} and one space (the scheme is case-insensitive). */
    private static final Pattern BEARER = Pattern.compile("(?i)bearer ([A-Za-z0-9._~+/-]+=*)");

    private final TokenStore tokens;
    private final GrantStore grants;
    private final Optional<JwtVerifier> jwt;
    private final byte[] bootstrapHash;

    /** The outcome: a principal, or the failure and a detail for the log (never the secret). */
    public record Result(Principal principal, AuthFailure failure, String detail) {
        public boolean ok() {
            return principal != null;
        }
    }

    /**
     * @param bootstrapToken the bootstrap admin token, if any ({@link #readBootstrapToken})
     */
    public Authenticator(TokenStore tokens, GrantStore grants, Optional<JwtVerifier> jwt,
                         Optional<String> bootstrapToken) {
        this.tokens = tokens;
        this.grants = grants;
        this.jwt = jwt;
        this.bootstrapHash = bootstrapToken.map(Secrets::sha256).orElse(null);
    }

    /**
     * The bootstrap token in {@code file}, surrounding whitespace ignored. Throws when the file cannot be read or
     * holds no token (a service told to use a bootstrap token must not start without one).
     */
    public static String readBootstrapToken(Path file) {
        try {
            String token = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (token.isEmpty() || !BEARER.matcher("Bearer " + token).matches()) {
                throw new IllegalArgumentException("the bootstrap token file holds no token (or one with characters a "
                        + "bearer token cannot carry)");
            }
            return token;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the bootstrap token file", e);
        }
    }

    public Result authenticate(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return new Result(null, AuthFailure.MISSING, "no Authorization header");
        }
        var m = BEARER.matcher(authorization.strip());
        if (!m.matches()) {
            return new Result(null, AuthFailure.MALFORMED, "Authorization is not 'Bearer <token>'");
        }
        return authenticateToken(m.group(1));
    }

    /** The same for a bare token (SASL/PLAIN passwords, later). */
    public Result authenticateToken(String token) {
        if (JwtVerifier.looksLikeJwt(token)) {
            if (jwt.isEmpty()) {
                return new Result(null, AuthFailure.INVALID_JWT, "a JWT, but no issuer is configured");
            }
            JwtVerifier.Result r = jwt.get().verify(token);
            return new Result(r.principal() == null ? null : r.principal().withGrants(grants), r.failure(),
                    r.detail());
        }
        byte[] hash = Secrets.sha256(token);
        if (bootstrapHash != null && Secrets.same(bootstrapHash, hash)) {
            return new Result(new Principal("bootstrap", Scopes.of(Scope.ADMIN)), null, null);
        }
        TokenStore.Lookup l = tokens.find(token);
        return l.record() != null ? new Result(l.record().principal().withGrants(grants), null, null)
                : new Result(null, l.failure(), "token " + l.failure().reason());
    }
}
