package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.access.JwksServer;
import io.tierlog.access.Scopes;
import io.tierlog.access.Secrets;
import io.tierlog.access.TokenStore;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.topic.TopicConfig;
import org.jose4j.jwk.RsaJsonWebKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The function's identity and access check through its handler, with API Gateway v2 event JSON (the sample
 * {@code produce-json.json}, deserialized by Lambda's own event serializer): the index-service's matrix for the
 * produce route, with and without API Gateway's JWT authorizer context, tokens minted on the same hot volume by
 * another process's {@link TokenStore}, the bootstrap token and JWTs against a JWKS served in this JVM.
 */
class FunctionAccessTest {
    static final String BODY = "{\"records\":[{\"value\":1}]}";
    static final String BOOTSTRAP = "tierlog_bootstrap-function";

    @TempDir
    Path data;
    JwksServer issuer;
    RsaJsonWebKey key;
    TokenStore otherInstance;
    ProduceFunction function;

    @BeforeEach
    void start() throws Exception {
        issuer = new JwksServer();
        key = JwksServer.newKey("k1");
        issuer.serve(key);
        Path bootstrap = data.resolve("bootstrap");
        Files.writeString(bootstrap, "\n " + BOOTSTRAP + " \n");
        IngestService ingest = new IngestService(new IngestConfig(data.resolve("hot"), FsyncPolicy.NEVER,
                Duration.ofSeconds(1), 1 << 20), Clock.systemUTC(), 0);
        ingest.topics().create("orders", 1, TopicConfig.DEFAULTS);
        ingest.topics().create("__consumer_offsets", 1, TopicConfig.DEFAULTS);
        Map<String, String> env = new HashMap<>(Map.of("TIERLOG_DATA_DIR", data.resolve("hot").toString(),
                "TIERLOG_AUTH_MODE", "token", "TIERLOG_AUTH_BOOTSTRAP_TOKEN_FILE", bootstrap.toString(),
                "TIERLOG_AUTH_JWT_ISSUER", JwksServer.ISSUER, "TIERLOG_AUTH_JWT_JWKS_URL", issuer.url().toString(),
                "TIERLOG_AUTH_JWT_AUDIENCE", "tierlog", "TIERLOG_AUTH_MAX_FAILURES_PER_MINUTE", "1000"));
        function = new ProduceFunction(ingest, env);
        otherInstance = new TokenStore(TokenStore.directoryIn(data.resolve("hot")), Clock.systemUTC(),
                new Secrets(new SecureRandom()));
    }

    @AfterEach
    void stop() {
        function.close();
        issuer.close();
    }

    String mint(String scopes, Long expiresAt) {
        return otherInstance.mint("t", Scopes.parse(scopes), expiresAt).secret();
    }

    @Test
    void theSameMatrixAsTheServiceWithoutAnAuthorizerContext() throws Exception {
        TokenStore.Minted revoked = otherInstance.mint("r", Scopes.parse("produce:topic:orders"), null);
        otherInstance.revoke(revoked.record().id());
        // tokens minted elsewhere are seen within a second; these exist before the function's first request
        String wrongScope = mint("fetch:topic:orders", null);
        String prefix = mint("produce:topic:ord*", null);
        String everyTopic = mint("produce:topic:*", null);
        Map<String, String> unauthorized = new LinkedHashMap<>();
        unauthorized.put("no header", null);
        unauthorized.put("malformed", "Token abc");
        unauthorized.put("unknown", "Bearer tierlog_" + "B".repeat(43));
        unauthorized.put("expired", "Bearer " + mint("produce:topic:orders", System.currentTimeMillis() - 1000));
        unauthorized.put("revoked", "Bearer " + revoked.secret());
        for (var e : unauthorized.entrySet()) {
            APIGatewayV2HTTPResponse r = handle("orders", e.getValue(), null);
            assertThat(r.getStatusCode()).as(e.getKey()).isEqualTo(401);
            assertThat(r.getHeaders()).as(e.getKey()).containsEntry("WWW-Authenticate", "Bearer realm=\"tierlog\"");
            assertThat(r.getBody()).contains("\"type\":\"unauthorized\"");
        }
        APIGatewayV2HTTPResponse wrong = handle("orders", "Bearer " + wrongScope, null);
        assertThat(wrong.getStatusCode()).isEqualTo(403);
        assertThat(wrong.getBody()).contains("\"operation\":\"produce\"").contains("\"resource\":\"topic:orders\"");
        assertThat(handle("orders", "Bearer " + prefix, null).getStatusCode())
                .isEqualTo(200);
        assertThat(handle("orders", "Bearer " + BOOTSTRAP, null).getStatusCode()).isEqualTo(200);
        assertThat(handle("__consumer_offsets", "Bearer " + everyTopic, null).getStatusCode())
                .isEqualTo(403);

        long now = System.currentTimeMillis();
        String jwt = JwksServer.sign(JwksServer.claims(now, "produce:topic:orders"), key);
        assertThat(handle("orders", "Bearer " + jwt, null).getStatusCode()).isEqualTo(200);
        var wrongIssuer = JwksServer.claims(now, "produce:topic:orders");
        wrongIssuer.setIssuer("https://evil.test");
        assertThat(handle("orders", "Bearer " + JwksServer.sign(wrongIssuer, key), null).getStatusCode())
                .isEqualTo(401);
    }

    @Test
    void behindTheJwtAuthorizerTheVerifiedClaimsDecide() throws Exception {
        assertThat(handle("orders", null, Map.of("sub", "alice", "scope",
                "https://tierlog.example/produce:topic:orders openid")).getStatusCode()).isEqualTo(200);
        APIGatewayV2HTTPResponse r = handle("orders", null, Map.of("sub", "bob", "scope", "fetch:topic:orders"));
        assertThat(r.getStatusCode()).isEqualTo(403);
        assertThat(handle("orders", null, Map.of("sub", "eve")).getStatusCode()).as("no scope").isEqualTo(403);
    }

    @Test
    void aTokenMintedOrRevokedElsewhereIsSeenWithinTwoSeconds() throws Exception {
        assertThat(handle("orders", "Bearer " + BOOTSTRAP, null).getStatusCode()).isEqualTo(200);
        TokenStore.Minted m = otherInstance.mint("late", Scopes.parse("produce:topic:orders"), null);
        long start = System.nanoTime();
        while (handle("orders", "Bearer " + m.secret(), null).getStatusCode() != 200) {
            assertThat(System.nanoTime() - start).isLessThan(2_000_000_000L);
            Thread.sleep(50); // the function re-reads the tokens when its view is a second old
        }
        otherInstance.revoke(m.record().id());
        start = System.nanoTime();
        while (handle("orders", "Bearer " + m.secret(), null).getStatusCode() != 401) {
            assertThat(System.nanoTime() - start).isLessThan(2_000_000_000L);
            Thread.sleep(50);
        }
    }

    /** The sample event aimed at {@code topic}, with an Authorization header and authorizer claims when given. */
    APIGatewayV2HTTPResponse handle(String topic, String authorization, Map<String, String> claims) throws Exception {
        ObjectNode e = (ObjectNode) Events.JSON.readTree(Events.produce(topic, BODY, "req"));
        if (authorization != null) {
            ((ObjectNode) e.get("headers")).put("authorization", authorization);
        }
        if (claims != null) {
            ObjectNode jwt = ((ObjectNode) e.get("requestContext")).putObject("authorizer").putObject("jwt");
            JsonNode c = Events.JSON.valueToTree(claims);
            jwt.set("claims", c);
            jwt.putArray("scopes");
        }
        APIGatewayV2HTTPEvent event = LambdaEventSerializers.serializerFor(APIGatewayV2HTTPEvent.class,
                getClass().getClassLoader()).fromJson(Events.JSON.writeValueAsString(e));
        return function.handle(event, "req");
    }
}
