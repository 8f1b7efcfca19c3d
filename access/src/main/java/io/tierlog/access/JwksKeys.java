package io.tierlog.access;

import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.VerificationJwkSelector;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwx.JsonWebStructure;
import org.jose4j.keys.resolvers.VerificationKeyResolver;
import org.jose4j.lang.JoseException;
import org.jose4j.lang.UnresolvableKeyException;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Key;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * An issuer's signing keys, fetched from its JWKS URL over HTTP(S) and cached. The set is re-fetched when it is
 * older than {@code maxAge} (keys an issuer retired go away) and when a token names a key id the cache does not
 * hold (the issuer rotated), but never more than once per {@code minRefreshInterval}, so a flood of tokens with
 * made-up key ids cannot turn into a flood of requests to the issuer. A failed fetch keeps the previous keys.
 * Thread-safe.
 */
public final class JwksKeys implements VerificationKeyResolver {
    private static final System.Logger LOG = System.getLogger(JwksKeys.class.getName());

    private final URI url;
    private final Clock clock;
    private final Duration maxAge;
    private final Duration minRefreshInterval;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private volatile List<JsonWebKey> keys = List.of();
    private volatile long fetchedAt = Long.MIN_VALUE / 2;
    private volatile long lastAttempt = Long.MIN_VALUE / 2;

    public JwksKeys(URI url, Clock clock, Duration maxAge, Duration minRefreshInterval) {
        this.url = url;
        this.clock = clock;
        this.maxAge = maxAge;
        this.minRefreshInterval = minRefreshInterval;
    }

    @Override
    public Key resolveKey(JsonWebSignature jws, List<JsonWebStructure> nestingContext) throws UnresolvableKeyException {
        long now = clock.millis();
        if (now - fetchedAt > maxAge.toMillis()) {
            refresh(now);
        }
        JsonWebKey key = select(jws);
        if (key == null && refresh(now)) {
            key = select(jws);
        }
        if (key == null) {
            throw new UnresolvableKeyException("no key in the issuer's JWKS matches kid " + jws.getKeyIdHeaderValue()
                    + " and alg " + jws.getAlgorithmHeaderValue());
        }
        return key.getKey();
    }

    private JsonWebKey select(JsonWebSignature jws) throws UnresolvableKeyException {
        try {
            return new VerificationJwkSelector().select(jws, keys);
        } catch (JoseException e) {
            throw new UnresolvableKeyException("cannot select a key: " + e.getMessage(), e);
        }
    }

    /** Fetches the set unless the last attempt was under {@code minRefreshInterval} ago; true when it fetched. */
    private synchronized boolean refresh(long now) {
        if (now - lastAttempt < minRefreshInterval.toMillis()) {
            return false;
        }
        lastAttempt = now;
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5))
                    .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("HTTP " + r.statusCode());
            }
            keys = List.copyOf(new JsonWebKeySet(r.body()).getJsonWebKeys());
            fetchedAt = now;
            return true;
        } catch (IOException | JoseException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot fetch the JWKS from " + url + ": " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
