package io.tierlog.access;

import com.sun.net.httpserver.HttpServer;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.lang.JoseException;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test OIDC issuer: RSA keys, a JWKS served by the JDK's HTTP server on 127.0.0.1, and JWT minting. Tests rotate
 * the served set with {@link #serve}. Public so that the index-service's tests can use it from this test-jar.
 */
public final class JwksServer implements AutoCloseable {
    public static final String ISSUER = "https://issuer.test";
    private final HttpServer server;
    private volatile String jwks = "{\"keys\":[]}";
    private final AtomicInteger requests = new AtomicInteger();

    public JwksServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/jwks", ex -> {
            requests.incrementAndGet();
            byte[] b = jwks.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        server.start();
    }

    public static RsaJsonWebKey newKey(String kid) throws JoseException {
        RsaJsonWebKey k = RsaJwkGenerator.generateJwk(2048);
        k.setKeyId(kid);
        k.setAlgorithm(AlgorithmIdentifiers.RSA_USING_SHA256);
        return k;
    }

    /** Serves exactly these keys' public halves from now on. */
    public void serve(JsonWebKey... keys) {
        jwks = new JsonWebKeySet(List.of(keys)).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks");
    }

    public int requests() {
        return requests.get();
    }

    /** Claims a test tweaks: issuer, audience "tierlog", subject, scope, exp 10 min after {@code nowMillis}. */
    public static JwtClaims claims(long nowMillis, String scope) {
        JwtClaims c = new JwtClaims();
        c.setIssuer(ISSUER);
        c.setAudience("tierlog");
        c.setSubject("alice");
        c.setIssuedAt(NumericDate.fromMilliseconds(nowMillis));
        c.setExpirationTime(NumericDate.fromMilliseconds(nowMillis + 600_000));
        c.setClaim("scope", scope);
        return c;
    }

    public static String sign(JwtClaims claims, RsaJsonWebKey key) throws JoseException {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(key.getPrivateKey());
        jws.setKeyIdHeaderValue(key.getKeyId());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        return jws.getCompactSerialization();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
