package io.tierlog.service.groups;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.tierlog.service.TokenModeProfile;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

/**
 * In {@code token} mode, committing or resetting a group's offsets needs, besides {@code commit} on the group, read
 * access ({@code fetch}) on every topic the body names: a token for one group and one topic cannot move the group's
 * offsets on another topic. The refusal is 403 {@code forbidden} naming the topic, and nothing changes.
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class GroupOffsetsTopicAccessTest {
    static final String BOOTSTRAP = TokenModeProfile.BOOTSTRAP;

    static RequestSpecification as(String token) {
        return given().header("Authorization", "Bearer " + token).contentType("application/json");
    }

    static String mint(String scopes) {
        return as(BOOTSTRAP).body("{\"name\":\"t-" + UUID.randomUUID() + "\",\"scopes\":\"" + scopes + "\"}")
                .post("/v1/tokens").then().statusCode(201).extract().path("token");
    }

    static void expectForbiddenTopic(Response r, String topic) {
        r.then().statusCode(403).contentType("application/problem+json").body("type", equalTo("forbidden"))
                .body("operation", equalTo("fetch")).body("resource", equalTo("topic:" + topic));
    }

    static String commitBody(String... topics) {
        StringBuilder b = new StringBuilder("{\"offsets\":[");
        for (int i = 0; i < topics.length; i++) {
            b.append(i == 0 ? "" : ",").append("{\"topic\":\"").append(topics[i]).append("\",\"partition\":0,\"offset\":1}");
        }
        return b.append("]}").toString();
    }

    @Test
    void commitAndResetNeedFetchOnEveryTopicInTheBody() {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String mine = "mine-" + suffix;
        String other = "other-" + suffix;
        String group = "g-" + suffix;
        for (String t : new String[]{mine, other}) {
            as(BOOTSTRAP).body("{\"name\":\"" + t + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
            as(BOOTSTRAP).body("{\"records\":[{\"value\":1},{\"value\":2}]}").post("/v1/topics/" + t + "/records")
                    .then().statusCode(200);
        }
        String path = "/v1/groups/" + group + "/offsets";
        as(BOOTSTRAP).body(commitBody(other)).put(path).then().statusCode(204);
        String token = mint("commit:group:" + group + " read:group:" + group + " fetch:topic:" + mine);

        as(token).body(commitBody(mine)).put(path).then().statusCode(204);
        // one topic the token may not read, alone or beside one it may: 403 naming it, nothing committed
        expectForbiddenTopic(as(token).body(commitBody(mine, other).replace("\"offset\":1", "\"offset\":2")).put(path),
                other);
        expectForbiddenTopic(as(token).body(commitBody(other).replace("\"offset\":1", "\"offset\":0")).put(path),
                other);
        as(token).get(path).then().statusCode(200).body("offsets.size()", equalTo(2))
                .body("offsets.find { it.topic == '" + mine + "' }.offset", equalTo(1))
                .body("offsets.find { it.topic == '" + other + "' }.offset", equalTo(1));

        // reset likewise, and an unknown topic it may not read is 403, not 404 (which would say it does not exist)
        expectForbiddenTopic(as(token).body("{\"topics\":[\"" + mine + "\",\"" + other + "\"],\"to\":\"latest\"}")
                .post(path + "/reset"), other);
        expectForbiddenTopic(as(token).body("{\"topics\":[\"nope-" + suffix + "\"],\"to\":\"latest\"}")
                .post(path + "/reset"), "nope-" + suffix);
        as(token).get(path).then().statusCode(200)
                .body("offsets.find { it.topic == '" + mine + "' }.offset", equalTo(1))
                .body("offsets.find { it.topic == '" + other + "' }.offset", equalTo(1));
        as(token).body("{\"topics\":[\"" + mine + "\"],\"to\":\"latest\"}").post(path + "/reset").then()
                .statusCode(200).body("offsets.find { it.topic == '" + mine + "' }.offset", equalTo(2));

        // with fetch on the other topic too, the same commit goes through
        String both = mint("commit:group:" + group + " fetch:topic:" + mine + " fetch:topic:" + other);
        as(both).body(commitBody(mine, other).replace("\"offset\":1", "\"offset\":0")).put(path).then().statusCode(204);
        as(BOOTSTRAP).get(path).then().statusCode(200)
                .body("offsets.find { it.topic == '" + other + "' }.offset", equalTo(0));
    }
}
