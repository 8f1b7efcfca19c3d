package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.tierlog.access.JwksServer;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.RsaJsonWebKey;

import java.util.Map;
import java.util.UUID;

/**
 * The service in {@code token} mode with a bootstrap token, trusting JWTs from a local issuer: the one profile of
 * every in-process test of scopes, SASL and JWTs, so that Quarkus builds and starts it once for all of them.
 */
public class TokenModeProfile implements QuarkusTestProfile {
    public static final String BOOTSTRAP = "tierlog_token-mode-" + UUID.randomUUID().toString().replace("-", "");
    /** The issuer's signing key, as JSON with its private half: a system property, seen by every class loader. */
    public static final String JWT_KEY_PROPERTY = "token-mode-profile.jwt-key";
    private static String jwksUrl;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("tierlog.auth.mode", "token", "tierlog.auth.bootstrap-token", BOOTSTRAP,
                "tierlog.auth.max-failures-per-minute", "1000", "tierlog.auth.jwt.issuer", JwksServer.ISSUER,
                "tierlog.auth.jwt.jwks-url", jwksUrl(), "tierlog.auth.jwt.audience", "tierlog",
                "tierlog.auth.jwt.jwks-min-refresh-interval", "0s");
    }

    private static synchronized String jwksUrl() {
        if (jwksUrl == null) {
            try {
                JwksServer issuer = new JwksServer(); // runs until the JVM ends, as the service under test
                RsaJsonWebKey key = JwksServer.newKey("k1");
                issuer.serve(key);
                System.setProperty(JWT_KEY_PROPERTY, key.toJson(JsonWebKey.OutputControlLevel.INCLUDE_PRIVATE));
                jwksUrl = issuer.url().toString();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return jwksUrl;
    }
}
