package io.tierlog.access;

import org.jose4j.jwa.AlgorithmConstraints;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.MalformedClaimException;
import org.jose4j.jwt.NumericDate;
import org.jose4j.jwt.consumer.ErrorCodes;
import org.jose4j.jwt.consumer.InvalidJwtException;
import org.jose4j.jwt.consumer.JwtConsumer;
import org.jose4j.jwt.consumer.JwtConsumerBuilder;
import org.jose4j.keys.resolvers.VerificationKeyResolver;

import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * Verifies a JWT from an OIDC issuer (Cognito in AWS) with jose4j: signature against the issuer's keys
 * ({@link JwksKeys}), only asymmetric algorithms (RS*, PS*, ES*; so {@code alg: none} and HMAC signed with a
 * public key are refused before any key is looked at), {@code iss} exactly, {@code exp} required and {@code exp}/
 * {@code nbf} with {@value #SKEW_SECONDS} s of skew, and the audience when one is configured: {@code aud} contains
 * it, or, for tokens without {@code aud} (Cognito access tokens), {@code client_id} equals it.
 *
 * <p>Scopes come from the {@code scope} claim (space-separated, OAuth 2) or a {@code scp} array; an issuer's own
 * resource-server prefix ({@code https://api.example.com/produce:topic:orders}, as Cognito writes custom scopes)
 * is dropped up to the last {@code /}; entries that are not Tierlog scopes grant nothing. Thread-safe.
 */
public final class JwtVerifier {
    static final int SKEW_SECONDS = 30;
    private static final AlgorithmConstraints ASYMMETRIC_ONLY = new AlgorithmConstraints(
            AlgorithmConstraints.ConstraintType.PERMIT,
            AlgorithmIdentifiers.RSA_USING_SHA256, AlgorithmIdentifiers.RSA_USING_SHA384,
            AlgorithmIdentifiers.RSA_USING_SHA512, AlgorithmIdentifiers.RSA_PSS_USING_SHA256,
            AlgorithmIdentifiers.RSA_PSS_USING_SHA384, AlgorithmIdentifiers.RSA_PSS_USING_SHA512,
            AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256, AlgorithmIdentifiers.ECDSA_USING_P384_CURVE_AND_SHA384,
            AlgorithmIdentifiers.ECDSA_USING_P521_CURVE_AND_SHA512);

    private final String issuer;
    private final Optional<String> audience;
    private final VerificationKeyResolver keys;
    private final Clock clock;

    /** The outcome: a principal, or why the token is refused (with jose4j's reason, for the log only). */
    public record Result(Principal principal, AuthFailure failure, String detail) {
    }

    public JwtVerifier(String issuer, Optional<String> audience, VerificationKeyResolver keys, Clock clock) {
        this.issuer = issuer;
        this.audience = audience;
        this.keys = keys;
        this.clock = clock;
    }

    /** Whether {@code token} has a JWT's shape (three base64url parts); anything else is a Tierlog token. */
    public static boolean looksLikeJwt(String token) {
        int first = token.indexOf('.');
        return first > 0 && token.indexOf('.', first + 1) > first && token.chars().filter(c -> c == '.').count() == 2;
    }

    public Result verify(String token) {
        JwtConsumer consumer = new JwtConsumerBuilder()
                .setRequireExpirationTime()
                .setAllowedClockSkewInSeconds(SKEW_SECONDS)
                .setEvaluationTime(NumericDate.fromMilliseconds(clock.millis()))
                .setExpectedIssuer(true, issuer)
                .setSkipDefaultAudienceValidation()
                .setJwsAlgorithmConstraints(ASYMMETRIC_ONLY)
                .setVerificationKeyResolver(keys)
                .build();
        JwtClaims claims;
        try {
            claims = consumer.processToClaims(token);
        } catch (InvalidJwtException e) {
            AuthFailure f = e.hasErrorCode(ErrorCodes.EXPIRED) ? AuthFailure.EXPIRED_JWT : AuthFailure.INVALID_JWT;
            return new Result(null, f, e.getMessage());
        }
        try {
            if (audience.isPresent() && !audienceMatches(claims, audience.get())) {
                return new Result(null, AuthFailure.INVALID_JWT, "audience is not " + audience.get());
            }
            String subject = claims.getSubject();
            return new Result(new Principal("jwt:" + (subject == null ? "?" : subject), scopes(claims)), null, null);
        } catch (MalformedClaimException e) {
            return new Result(null, AuthFailure.INVALID_JWT, e.getMessage());
        }
    }

    private static boolean audienceMatches(JwtClaims claims, String expected) throws MalformedClaimException {
        if (claims.hasAudience()) {
            return claims.getAudience().contains(expected);
        }
        return expected.equals(claims.getClaimValue("client_id"));
    }

    private static Scopes scopes(JwtClaims claims) throws MalformedClaimException {
        StringBuilder all = new StringBuilder();
        if (claims.hasClaim("scope")) {
            all.append(claims.getStringClaimValue("scope"));
        }
        if (claims.isClaimValueStringList("scp")) {
            List<String> scp = claims.getStringListClaimValue("scp");
            all.append(' ').append(String.join(" ", scp));
        }
        return Scopes.fromOAuthScope(all.toString());
    }
}
