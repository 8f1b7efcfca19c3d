package io.tierlog.service.compaction;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

/** docs/api.md "Compaction and keys" over a real socket: the topic config keys and the latest value of a key. */
@QuarkusTest
class CompactionApiTest {

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void expectProblem(Response r, int status, String type) {
        r.then().statusCode(status).contentType("application/problem+json").body("type", equalTo(type))
                .body("status", equalTo(status)).body("title", not(equalTo(null))).body("detail", not(equalTo(null)));
    }

    @Test
    void compactionConfigIsCreatedDescribedPatchedAndValidated() {
        String name = unique("table");
        given().body("{\"name\":\"" + name + "\",\"partitions\":1,\"config\":{\"cleanup.policy\":\"compact\"}}")
                .post("/v1/topics").then().statusCode(201)
                .body("config.'cleanup.policy'", equalTo("compact"))
                .body("config.'delete.retention.ms'", equalTo(86400000))
                .body("config.'min.compaction.lag.ms'", equalTo(0))
                .body("config.'min.cleanable.dirty.ratio'", equalTo(0.5f));
        given().body("{\"cleanup.policy\": \"delete,compact\", \"delete.retention.ms\": 1000,"
                        + " \"min.compaction.lag.ms\": \"60000\", \"min.cleanable.dirty.ratio\": 0.1}")
                .patch("/v1/topics/" + name + "/config").then().statusCode(200)
                .body("'cleanup.policy'", equalTo("compact,delete"))
                .body("'delete.retention.ms'", equalTo(1000))
                .body("'min.compaction.lag.ms'", equalTo(60000))
                .body("'min.cleanable.dirty.ratio'", equalTo(0.1f));

        Response badPolicy = given().body("{\"cleanup.policy\": \"shred\"}").patch("/v1/topics/" + name + "/config");
        expectProblem(badPolicy, 400, "invalid-config");
        badPolicy.then().body("key", equalTo("cleanup.policy"));
        expectProblem(given().body("{\"min.cleanable.dirty.ratio\": 1.5}").patch("/v1/topics/" + name + "/config"),
                400, "invalid-config");
        expectProblem(given().body("{\"delete.retention.ms\": -1}").patch("/v1/topics/" + name + "/config"),
                400, "invalid-config");
        expectProblem(given().body("{\"min.compaction.lag.ms\": \"soon\"}").patch("/v1/topics/" + name + "/config"),
                400, "invalid-config");
        // Nothing of a refused change was applied.
        given().get("/v1/topics/" + name).then().statusCode(200)
                .body("config.'cleanup.policy'", equalTo("compact,delete"))
                .body("config.'min.cleanable.dirty.ratio'", equalTo(0.1f))
                .body("config.'delete.retention.ms'", equalTo(1000));
    }
}
