package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * A share group started at {@code earliest} on a topic whose history is only in S3 (tiered to an in-process S3Proxy,
 * then evicted from the hot tier): it leases every record, cold ones included, and accepts them; the group ends with
 * nothing left.
 */
@QuarkusTest
@TestProfile(S3ColdTierHttpTest.S3Profile.class)
class ShareGroupsColdTierTest {
    @Inject
    TieredStorage tiered;

    @Test
    void aShareGroupFromEarliestLeasesAndAcceptsRecordsThatAreOnlyInS3() {
        String topic = ColdTierHttpTest.createTieringTopic("sharecold");
        String pad = "z".repeat(200);
        for (int n = 0; n < 30; n++) {
            given().contentType(ContentType.JSON)
                    .body("{\"records\":[{\"partition\":0,\"value\":{\"n\":" + n + ",\"pad\":\"" + pad + "\"}}]}")
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        }
        tiered.runTieringPass();
        tiered.runRetentionPass();
        JsonPath t = given().get("/v1/topics/" + topic).then().statusCode(200)
                .body("partitionStates[0].logStartOffset", equalTo(0)).extract().jsonPath();
        int hotStart = t.getInt("partitionStates[0].hotStartOffset");
        assertThat(hotStart).as("most of the history is only in S3").isGreaterThan(10);

        given().contentType(ContentType.JSON).body("{\"start\":\"earliest\"}")
                .put("/v1/share-groups/cold-workers/config").then().statusCode(200);
        List<Integer> values = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        for (int round = 0; round < 10 && offsets.size() < 30; round++) {
            JsonPath leased = given().contentType(ContentType.JSON).body("{\"maxRecords\":7,\"leaseMs\":60000}")
                    .post("/v1/share-groups/cold-workers/topics/" + topic + "/lease").then().statusCode(200)
                    .extract().jsonPath();
            List<Map<String, Object>> records = leased.getList("records");
            StringBuilder acks = new StringBuilder("{\"acks\":[");
            for (int i = 0; i < records.size(); i++) {
                offsets.add(leased.getInt("records[" + i + "].offset"));
                values.add(leased.getInt("records[" + i + "].value.n"));
                acks.append(i == 0 ? "" : ",").append("{\"lease\":\"").append(leased.getString("records[" + i
                        + "].lease")).append("\",\"type\":\"accept\"}");
            }
            if (!records.isEmpty()) {
                given().contentType(ContentType.JSON).body(acks.append("]}").toString())
                        .post("/v1/share-groups/cold-workers/topics/" + topic + "/acks").then().statusCode(200)
                        .body("results.ok", org.hamcrest.Matchers.everyItem(equalTo(true)));
            }
        }
        List<Integer> all = new ArrayList<>();
        for (int n = 0; n < 30; n++) {
            all.add(n);
        }
        assertThat(offsets).as("every offset leased once, cold ones (below %d) first", hotStart)
                .containsExactlyElementsOf(all);
        assertThat(values).containsExactlyElementsOf(all);
        given().get("/v1/share-groups/cold-workers").then().statusCode(200)
                .body("topics[0].partitions[0].startOffset", equalTo(30))
                .body("topics[0].partitions[0].lag", equalTo(0))
                .body("topics[0].partitions[0].leased", equalTo(0));
    }
}
