package io.tierlog.service.groups;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.tierlog.service.TokenModeProfile;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static io.tierlog.service.groups.GroupOffsetsTopicAccessTest.BOOTSTRAP;
import static io.tierlog.service.groups.GroupOffsetsTopicAccessTest.as;
import static io.tierlog.service.groups.GroupOffsetsTopicAccessTest.mint;
import static org.hamcrest.Matchers.equalTo;

/**
 * The binary lease answer ({@code Accept: application/vnd.tierlog.leased-batches}) is authorized exactly as the JSON
 * one: {@code read} on the group and {@code fetch} on the topic, a missing one 403 {@code forbidden} as
 * problem+json, and nothing leased (a later lease with both scopes gets every record).
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class ShareLeaseBatchesAccessTest {
    private static final String TYPE = "application/vnd.tierlog.leased-batches";

    @Test
    void theBinaryLeaseNeedsTheScopesOfTheJsonLease() {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String topic = "leased-" + suffix;
        String group = "s-" + suffix;
        as(BOOTSTRAP).body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
        as(BOOTSTRAP).body("{\"records\":[{\"value\":1},{\"value\":2}]}").post("/v1/topics/" + topic + "/records")
                .then().statusCode(200);
        as(BOOTSTRAP).body("{\"start\":\"earliest\"}").put("/v1/share-groups/" + group + "/config").then()
                .statusCode(200);
        String path = "/v1/share-groups/" + group + "/topics/" + topic + "/lease";

        String noGroup = mint("fetch:topic:" + topic);
        String noTopic = mint("read:group:" + group);
        for (String accept : new String[] {TYPE, "application/vnd.tierlog.leased-ranges", "application/json"}) {
            expectForbidden(as(noGroup).accept(accept).body("{}").post(path), "group:" + group);
            expectForbidden(as(noTopic).accept(accept).body("{}").post(path), "topic:" + topic);
            as(BOOTSTRAP.substring(0, 20) + "-wrong").accept(accept).body("{}").post(path).then().statusCode(401)
                    .contentType("application/problem+json");
        }

        String both = mint("read:group:" + group + " fetch:topic:" + topic);
        byte[] answer = as(both).accept(TYPE).body("{}").post(path).then().statusCode(200).contentType(TYPE)
                .extract().asByteArray();
        // One partition, two records: nothing was leased by the refused calls.
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(answer);
        org.assertj.core.api.Assertions.assertThat(in.getInt()).isEqualTo(1);
        org.assertj.core.api.Assertions.assertThat(in.getInt()).isZero();
        org.assertj.core.api.Assertions.assertThat(in.getInt()).isEqualTo(2);
    }

    private static void expectForbidden(Response r, String resource) {
        r.then().statusCode(403).contentType("application/problem+json").body("type", equalTo("forbidden"))
                .body("resource", equalTo(resource));
    }
}
