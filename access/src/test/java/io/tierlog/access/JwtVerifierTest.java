package io.tierlog.access;

import io.tierlog.testkit.ManualClock;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.keys.HmacKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class JwtVerifierTest {
    final ManualClock clock = new ManualClock(1_800_000_000_000L);
    JwksServer issuer;
    RsaJsonWebKey k1;
    JwtVerifier verifier;

    @BeforeEach
    void start() throws Exception {
        issuer = new JwksServer();
        k1 = JwksServer.newKey("k1");
        issuer.serve(k1);
        verifier = new JwtVerifier(JwksServer.ISSUER, Optional.of("tierlog"),
                new JwksKeys(issuer.url(), clock, Duration.ofMinutes(10), Duration.ofSeconds(10)), clock);
    }

    @AfterEach
    void stop() {
        issuer.close();
    }

    JwtClaims claims() {
        return JwksServer.claims(clock.millis(), "openid produce:topic:orders fetch:topic:orders");
    }

    @Test
    void aValidTokenGivesItsSubjectAndScopes() throws Exception {
        JwtVerifier.Result r = verifier.verify(JwksServer.sign(claims(), k1));
        assertThat(r.failure()).isNull();
        assertThat(r.principal().name()).isEqualTo("jwt:alice");
        assertThat(r.principal().scopes().toString()).isEqualTo("produce:topic:orders fetch:topic:orders");
    }

    @Test
    void expiredAndNotYetValidAreRefusedBeyondTheSkew() throws Exception {
        JwtClaims c = claims();
        c.setIssuedAt(NumericDate.fromMilliseconds(clock.millis() - 600_000));
        c.setExpirationTime(NumericDate.fromMilliseconds(clock.millis() - 20_000));
        assertThat(verifier.verify(JwksServer.sign(c, k1)).detail()).as("within skew").isNull();
        c.setExpirationTime(NumericDate.fromMilliseconds(clock.millis() - 31_000));
        assertThat(verifier.verify(JwksServer.sign(c, k1)).failure()).isEqualTo(AuthFailure.EXPIRED_JWT);
        JwtClaims n = claims();
        n.setNotBefore(NumericDate.fromMilliseconds(clock.millis() + 60_000));
        assertThat(verifier.verify(JwksServer.sign(n, k1)).failure()).isEqualTo(AuthFailure.INVALID_JWT);
        JwtClaims noExp = claims();
        noExp.unsetClaim("exp");
        assertThat(verifier.verify(JwksServer.sign(noExp, k1)).failure()).isEqualTo(AuthFailure.INVALID_JWT);
    }

    @Test
    void wrongIssuerOrAudienceIsRefused() throws Exception {
        JwtClaims iss = claims();
        iss.setIssuer("https://evil.test");
        assertThat(verifier.verify(JwksServer.sign(iss, k1)).failure()).isEqualTo(AuthFailure.INVALID_JWT);
        JwtClaims aud = claims();
        aud.setAudience("someone-else");
        assertThat(verifier.verify(JwksServer.sign(aud, k1)).failure()).isEqualTo(AuthFailure.INVALID_JWT);
        JwtClaims cognito = claims();
        cognito.unsetClaim("aud");
        cognito.setClaim("client_id", "tierlog");
        assertThat(verifier.verify(JwksServer.sign(cognito, k1)).failure()).as("Cognito access token").isNull();
    }

    @Test
    void anUnknownKidIsFetchedOnceThenAfterTheRateLimitAgain() throws Exception {
        assertThat(verifier.verify(JwksServer.sign(claims(), k1)).failure()).isNull();
        RsaJsonWebKey k2 = JwksServer.newKey("k2");
        String withK2 = JwksServer.sign(claims(), k2);
        clock.advance(Duration.ofSeconds(11));
        int before = issuer.requests();
        // not yet published: one refresh, still unknown; more tokens within the interval fetch nothing more
        assertThat(verifier.verify(withK2).failure()).isEqualTo(AuthFailure.INVALID_JWT);
        assertThat(verifier.verify(withK2).failure()).isEqualTo(AuthFailure.INVALID_JWT);
        assertThat(issuer.requests()).isEqualTo(before + 1);
        issuer.serve(k1, k2);
        clock.advance(Duration.ofSeconds(11));
        assertThat(verifier.verify(JwksServer.sign(claims(), k2)).failure()).as("rotated").isNull();
    }

    @Test
    void algNoneIsRefused() throws Exception {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims().toJson());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.NONE);
        jws.setAlgorithmConstraints(org.jose4j.jwa.AlgorithmConstraints.NO_CONSTRAINTS);
        String none = jws.getCompactSerialization();
        assertThat(verifier.verify(none).failure()).isEqualTo(AuthFailure.INVALID_JWT);
    }

    @Test
    void hmacSignedWithThePublicKeyIsRefused() throws Exception {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims().toJson());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.HMAC_SHA256);
        jws.setKeyIdHeaderValue("k1");
        jws.setKey(new HmacKey(k1.getPublicKey().getEncoded()));
        jws.setDoKeyValidation(false);
        assertThat(verifier.verify(jws.getCompactSerialization()).failure()).isEqualTo(AuthFailure.INVALID_JWT);
    }

    @Test
    void aTamperedPayloadIsRefused() throws Exception {
        String[] parts = JwksServer.sign(claims(), k1).split("\\.");
        JwtClaims more = claims();
        more.setClaim("scope", "admin:cluster");
        parts[1] = Base64.getUrlEncoder().withoutPadding()
                .encodeToString(more.toJson().getBytes(StandardCharsets.UTF_8));
        assertThat(verifier.verify(String.join(".", parts)).failure()).isEqualTo(AuthFailure.INVALID_JWT);
    }

    @Test
    void cognitoStyleScopesDropTheResourceServerPrefix() throws Exception {
        JwtClaims c = claims();
        c.setClaim("scope", "https://tierlog.example/fetch:topic:orders aws.cognito.signin.user.admin");
        assertThat(verifier.verify(JwksServer.sign(c, k1)).principal().scopes().toString())
                .isEqualTo("fetch:topic:orders");
    }
}
