package io.tierlog.service;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.tierlog.testkit.S3ProxyServer;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * The cold tier with {@code tierlog.cold.store=s3}: quarkus-amazon-s3's client against an in-process S3Proxy.
 * While S3 is down, a read of cold data answers 503 {@code cold-tier-unavailable}; once it is back the same read
 * returns every record.
 */
@QuarkusTest
@TestProfile(S3ColdTierHttpTest.S3Profile.class)
class S3ColdTierHttpTest {
    static S3ProxyServer server;

    public static class S3Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String dir = "target/s3-cold-test-" + UUID.randomUUID();
            return Map.of("tierlog.data-dir", dir + "/hot", "tierlog.index-dir", dir + "/index",
                    "tierlog.tiering.enabled", "false");
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(S3ProxyResource.class));
        }
    }

    public static class S3ProxyResource implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            server = S3ProxyServer.started();
            server.createBucket("tierlog-test");
            return Map.of("tierlog.cold.store", "s3",
                    "tierlog.cold.s3.bucket", "tierlog-test",
                    "tierlog.cold.s3.prefix", "cluster-1",
                    "quarkus.s3.endpoint-override", server.endpoint().toString(),
                    "quarkus.s3.path-style-access", "true",
                    "quarkus.s3.aws.region", S3ProxyServer.REGION,
                    "quarkus.s3.aws.credentials.type", "static",
                    "quarkus.s3.aws.credentials.static-provider.access-key-id", S3ProxyServer.ACCESS_KEY,
                    "quarkus.s3.aws.credentials.static-provider.secret-access-key", S3ProxyServer.SECRET_KEY);
        }

        @Override
        public void stop() {
            server.close();
        }
    }

    @Inject
    TieredStorage tiered;

    @Test
    void coldReadsAnswer503WhileS3IsDownAndRecoverWhenItReturns() {
        String topic = ColdTierHttpTest.createTieringTopic("s3cold");
        String pad = "y".repeat(200);
        for (int req = 0; req < 15; req++) {
            StringBuilder records = new StringBuilder();
            for (int i = 0; i < 20; i++) {
                records.append(i == 0 ? "" : ",").append("{\"partition\":0,\"value\":{\"n\":").append(req * 20 + i)
                        .append(",\"pad\":\"").append(pad).append("\"}}");
            }
            given().contentType(ContentType.JSON).body("{\"records\":[" + records + "]}")
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        }
        List<String> expected = ColdTierHttpTest.fetchAll(topic, 0, 1000);
        tiered.runTieringPass();
        // About 60 uploads: sent aws-chunked, 5-10% of them were stored, seen failed and sent again.
        assertThat(server.keysStoredAgain()).as("uploads sent twice by quarkus-amazon-s3's client").isZero();
        tiered.runRetentionPass();
        given().get("/v1/topics/" + topic).then().statusCode(200)
                .body("partitionStates[0].logStartOffset", equalTo(0));
        assertThat(given().get("/v1/topics/" + topic).then().extract().jsonPath()
                .getInt("partitionStates[0].hotStartOffset")).isGreaterThan(10);

        server.stop();
        try {
            given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then()
                    .statusCode(503).contentType("application/problem+json")
                    .body("type", equalTo("cold-tier-unavailable"));
            // The hot tier keeps serving.
            given().get("/v1/topics/" + topic + "/partitions/0/records?offset=299").then().statusCode(200)
                    .body("records[0].offset", equalTo(299));
        } finally {
            server.start();
        }
        assertThat(ColdTierHttpTest.fetchAll(topic, 0, 50)).isEqualTo(expected);
    }
}
