package io.tierlog.client;

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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * JWTs that expire while a producer runs, against the packaged service verifying them with a test issuer's JWKS: a
 * client built with a token supplier that renews the JWT before its {@code exp} keeps producing across several
 * expiries, while a client given one fixed JWT is refused once it expired.
 */
@Tag("slow")
class ExpiringJwtTest {
    static final String ISSUER = "https://issuer.test";
    /** The service allows 30 s of clock skew on {@code exp}: a JWT that expired 27 s ago is good for 3 s more. */
    static final long EXPIRED_AGO_MS = 27_000;
    static final long USABLE_MS = 30_000 - EXPIRED_AGO_MS;

    /** A cache of the current JWT as an application would keep one: renewed when less than 1.5 s of it are left. */
    static final class JwtCache {
        final RsaJsonWebKey key;
        final AtomicInteger minted = new AtomicInteger();
        private String current;
        private long usableUntil;

        JwtCache(RsaJsonWebKey key) {
            this.key = key;
        }

        synchronized String current() {
            long now = System.currentTimeMillis();
            if (current == null || usableUntil - now < 1_500) {
                current = mint(key, now);
                usableUntil = now + USABLE_MS;
                minted.incrementAndGet();
            }
            return current;
        }
    }

    static String mint(RsaJsonWebKey key, long now) {
        JwtClaims c = new JwtClaims();
        c.setIssuer(ISSUER);
        c.setAudience("tierlog");
        c.setSubject("app");
        c.setIssuedAt(NumericDate.fromMilliseconds(now - EXPIRED_AGO_MS - 1_000));
        c.setExpirationTime(NumericDate.fromMilliseconds(now - EXPIRED_AGO_MS));
        c.setClaim("scope", "admin:cluster");
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(c.toJson());
        jws.setKey(key.getPrivateKey());
        jws.setKeyIdHeaderValue(key.getKeyId());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        try {
            return jws.getCompactSerialization();
        } catch (JoseException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aTokenSupplierOutlivesExpiringJwtsWhereAFixedJwtIsRefused() throws Exception {
        RsaJsonWebKey key = RsaJwkGenerator.generateJwk(2048);
        key.setKeyId("k1");
        key.setAlgorithm(AlgorithmIdentifiers.RSA_USING_SHA256);
        byte[] jwks = new JsonWebKeySet(List.of(key)).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY)
                .getBytes(StandardCharsets.UTF_8);
        HttpServer issuer = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        issuer.createContext("/jwks", ex -> {
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, jwks.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(jwks);
            }
        });
        issuer.start();
        try (TestService service = TestService.start("jwt", "-Dtierlog.auth.jwt.issuer=" + ISSUER,
                "-Dtierlog.auth.jwt.jwks-url=http://127.0.0.1:" + issuer.getAddress().getPort() + "/jwks",
                "-Dtierlog.auth.jwt.audience=tierlog", "-Dtierlog.auth.jwt.jwks-min-refresh-interval=0s")) {
            String topic = TestService.uniqueName("jwt");
            service.adminClient().admin().createTopic(topic, 2, null);
            TierlogClient fixed = TierlogClient.builder().url(service.url())
                    .token(mint(key, System.currentTimeMillis())).build();
            assertThat(fixed.admin().describeTopic(topic).name()).as("the fixed JWT works while fresh").isEqualTo(topic);

            JwtCache cache = new JwtCache(key);
            TierlogClient renewing = TierlogClient.builder().url(service.url()).tokenSupplier(cache::current).build();
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * USABLE_MS);
            try (Producer producer = renewing.producer(ProducerConfig.defaults())) {
                for (int i = 0; System.nanoTime() < end; i++) {
                    CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of(topic, null, "v" + i));
                    sent.add(f);
                    f.get(10, TimeUnit.SECONDS); // one at a time: requests all through the JWTs' lives
                }
            }
            assertThat(cache.minted.get()).as("JWTs minted while producing").isGreaterThanOrEqualTo(3);
            assertThat(sent).hasSizeGreaterThan(10).allSatisfy(f -> assertThat(f).isCompleted()
                    .isNotCompletedExceptionally());
            assertThat(renewing.admin().latestOffset(topic, 0) + renewing.admin().latestOffset(topic, 1))
                    .isEqualTo(sent.size());

            assertThatThrownBy(() -> fixed.admin().describeTopic(topic)).as("the fixed JWT, expired by now")
                    .isInstanceOfSatisfying(ProblemException.class, p -> assertThat(p.status()).isEqualTo(401));
        } finally {
            issuer.stop(0);
        }
    }
}
