package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.tierlog.log.Names;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * A topic name of the longest legal length (249 characters, Kafka's limit) works everywhere a name is used: hot
 * directories and topic metadata (whose temporary file once pushed the name past the 255-byte file-name limit and
 * answered 500), cold object keys, the index, group offsets. And a 5xx never names a path.
 */
@QuarkusTest
class LongTopicNameHttpTest {
    @Inject
    TieredStorage tiered;
    @Inject
    ObjectStore coldStore;
    @Inject
    TierlogConfig config;

    static String longName(String prefix) {
        String head = prefix + "-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        return head + "n".repeat(Names.MAX_LENGTH - head.length());
    }

    @Test
    void topicAndGroupOf249CharactersLiveThroughCreateProduceTieringFetchDescribeAndDelete() {
        String topic = longName("long");
        String group = longName("group");
        assertThat(topic).hasSize(249);
        given().contentType(ContentType.JSON)
                .body("{\"name\":\"" + topic + "\",\"partitions\":1,\"config\":{\"segment.bytes\":4096,"
                        + "\"local.retention.bytes\":0}}")
                .post("/v1/topics").then().statusCode(201).body("name", equalTo(topic));

        String pad = "x".repeat(150);
        long t0 = System.currentTimeMillis() - 60_000;
        for (int req = 0; req < 60; req++) {
            StringBuilder body = new StringBuilder("{\"records\":[");
            for (int i = 0; i < 5; i++) {
                body.append(i == 0 ? "" : ",").append("{\"timestamp\":").append(t0 + req * 10L)
                        .append(",\"value\":{\"n\":").append(req * 5 + i).append(",\"pad\":\"").append(pad).append("\"}}");
            }
            given().contentType(ContentType.JSON).body(body.append("]}").toString())
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        }
        List<String> expected = ColdTierHttpTest.fetchAll(topic, 0, 1000);
        assertThat(expected).hasSize(300);

        var tiering = tiered.runTieringPass();
        var retention = tiered.runRetentionPass();
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).as("%s %s", tiering, retention).isGreaterThan(3);
        assertThat(state.getLong("partitionStates[0].hotStartOffset")).isGreaterThan(200);
        assertThat(coldStore.listAll(topic + "/").count()).isGreaterThan(0);

        // Cold and hot reads, and a timestamp lookup answered from a cold segment with the record's own timestamp.
        assertThat(ColdTierHttpTest.fetchAll(topic, 0, 7)).isEqualTo(expected);
        given().get("/v1/topics/" + topic + "/partitions/0/offsets?timestamp=" + (t0 + 95)).then().statusCode(200)
                .body("offset", equalTo(50)).body("timestamp", equalTo(t0 + 100));

        given().contentType(ContentType.JSON)
                .body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":120}]}")
                .put("/v1/groups/" + group + "/offsets").then().statusCode(204);
        given().get("/v1/groups/" + group + "/offsets").then().statusCode(200)
                .body("offsets[0].topic", equalTo(topic)).body("offsets[0].offset", equalTo(120));
        given().contentType(ContentType.JSON).body("{\"retention.ms\":86400000}")
                .patch("/v1/topics/" + topic + "/config").then().statusCode(200);

        given().delete("/v1/topics/" + topic).then().statusCode(204);
        given().get("/v1/topics/" + topic).then().statusCode(404).body("type", equalTo("unknown-topic"));
        assertThat(coldStore.listAll(topic + "/").count()).isZero();
        assertThat(config.dataDir().resolve(topic + "-0")).doesNotExist();
    }

    @Test
    void aForcedStorageFailureAnswers500WithoutAnyPath() throws Exception {
        String topic = ApiTest.unique("blocked");
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}")
                .post("/v1/topics").then().statusCode(201);
        // A regular file where the partition's directory belongs: the writer cannot open the partition.
        Path blocker = config.dataDir().resolve(topic + "-0");
        Files.write(blocker, new byte[]{1});
        try {
            Response r = given().contentType(ContentType.JSON).body("{\"records\":[{\"value\":1}]}")
                    .post("/v1/topics/" + topic + "/records");
            r.then().statusCode(500).contentType("application/problem+json").body("type", equalTo("internal-error"));
            String detail = r.jsonPath().getString("detail");
            assertThat(detail).isNotBlank().doesNotContain("/").doesNotContain("\\")
                    .doesNotContain(config.dataDir().getFileName().toString() + "/")
                    .doesNotContain(config.dataDir().toAbsolutePath().toString());
            assertThat(r.asString()).doesNotContain(config.dataDir().toString()).doesNotContain("at io.tierlog");
        } finally {
            Files.delete(blocker);
        }
        given().delete("/v1/topics/" + topic).then().statusCode(204);
    }
}
