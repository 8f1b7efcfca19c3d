package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.List;

import static io.restassured.RestAssured.given;
import static io.tierlog.service.ApiTest.createTopic;
import static io.tierlog.service.ApiTest.expectProblem;
import static io.tierlog.service.ApiTest.produce;
import static io.tierlog.service.ApiTest.unique;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

/**
 * Issue 19, defects 1, 3 and 9 over HTTP: bodies nested too deeply, records without a value, header values that are
 * not UTF-8, the producer id named in a problem, and idempotent requests spanning partitions.
 */
@QuarkusTest
class RequestBodyDefectsApiTest {
    private static final int DEPTH = 1_000;

    private static String nested() {
        return "[".repeat(DEPTH) + "]".repeat(DEPTH);
    }

    @Test
    void jsonNestedAThousandLevelsDeepIsABadRequestOnProduceTopicCreateAndGroupCommit() {
        String topic = unique("deep");
        createTopic(topic, 1, null);

        Response produce = produce(topic, "{\"records\":[{\"partition\":0,\"value\":" + nested() + "}]}");
        expectProblem(produce, 400, "bad-request");
        produce.then().body("detail", containsString("500 levels")).body("field", equalTo("body"));

        Response create = given().contentType(ContentType.JSON)
                .body("{\"name\":\"" + unique("deep") + "\",\"partitions\":1,\"config\":" + nested() + "}")
                .post("/v1/topics");
        expectProblem(create, 400, "bad-request");
        create.then().body("detail", containsString("500 levels"));

        Response commit = given().contentType(ContentType.JSON).body("{\"offsets\":" + nested() + "}")
                .put("/v1/groups/" + unique("g") + "/offsets");
        expectProblem(commit, 400, "bad-request");
        commit.then().body("detail", containsString("500 levels"));

        given().get("/v1/topics/" + topic).then().body("partitionStates[0].highWatermark", equalTo(0));
    }

    @Test
    void aRecordWithoutValueIsABadRequestNamingItAndAnExplicitNullIsATombstone() {
        String topic = unique("noval");
        createTopic(topic, 1, null);
        Response r = produce(topic, "{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":0,\"key\":\"k\"}]}");
        expectProblem(r, 400, "bad-request");
        r.then().body("field", equalTo("records[1].value")).body("detail", containsString("records[1].value"));
        given().get("/v1/topics/" + topic).then().body("partitionStates[0].highWatermark", equalTo(0));

        produce(topic, "{\"records\":[{\"partition\":0,\"key\":\"k\",\"value\":null}]}").then().statusCode(200);
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then().statusCode(200)
                .body("records[0].value", equalTo(null));
    }

    @Test
    void aHeaderValueThatIsNotUtf8IsBase64WithAMarkerOnTheRecord() {
        String topic = unique("hdr");
        createTopic(topic, 1, null);
        String bad = Base64.getEncoder().encodeToString(new byte[]{(byte) 0xff, 1});
        String ok = Base64.getEncoder().encodeToString("fine".getBytes());
        produce(topic, "{\"encoding\":\"base64\",\"records\":[{\"partition\":0,\"value\":\"" + ok + "\","
                + "\"headers\":{\"a\":\"" + ok + "\",\"b\":\"" + bad + "\"}},"
                + "{\"partition\":0,\"value\":\"" + ok + "\",\"headers\":{\"a\":\"" + ok + "\"}}]}").then().statusCode(200);

        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then().statusCode(200)
                .body("records[0].headersEncoding", equalTo("base64"))
                .body("records[0].headers.a", equalTo(ok))
                .body("records[0].headers.b", equalTo(bad))
                .body("records[1].headers.a", equalTo("fine"))
                .body("records[1]", not(org.hamcrest.Matchers.hasKey("headersEncoding")));
    }

    @Test
    void idempotentRequestsSpanningPartitionsUseOneSequencePerPartitionAndNameTheClientsProducerId() {
        String topic = unique("multi");
        createTopic(topic, 2, null);
        String first = "{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":1,\"value\":2},"
                + "{\"partition\":0,\"value\":3}],\"producer\":{\"id\":\"checkout-7\",\"epoch\":0,"
                + "\"sequences\":{\"0\":0,\"1\":0}}}";
        produce(topic, first).then().statusCode(200).body("duplicate", equalTo(false))
                .body("offsets.partition", equalTo(List.of(0, 1, 0))).body("offsets.offset", equalTo(List.of(0, 0, 1)));
        produce(topic, first).then().statusCode(200).body("duplicate", equalTo(true))
                .body("offsets.offset", equalTo(List.of(0, 0, 1)));

        // Partition 0 only: two records took sequences 0 and 1.
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":4}],"
                + "\"producer\":{\"id\":\"checkout-7\",\"epoch\":0,\"sequence\":2}}").then().statusCode(200)
                .body("offsets[0].offset", equalTo(2));

        Response gap = produce(topic, "{\"records\":[{\"partition\":0,\"value\":5},{\"partition\":1,\"value\":6}],"
                + "\"producer\":{\"id\":\"checkout-7\",\"epoch\":0,\"sequences\":{\"0\":3,\"1\":7}}}");
        expectProblem(gap, 409, "out-of-order-sequence");
        gap.then().body("detail", containsString("'checkout-7'")).body("partition", equalTo(1))
                .body("expectedSequence", equalTo(1));

        Response one = produce(topic, "{\"records\":[{\"partition\":0,\"value\":5},{\"partition\":1,\"value\":6}],"
                + "\"producer\":{\"id\":\"checkout-7\",\"epoch\":0,\"sequence\":3}}");
        expectProblem(one, 400, "bad-request");
        one.then().body("field", equalTo("producer.sequences"));

        produce(topic, "{\"records\":[{\"partition\":0,\"value\":5},{\"partition\":1,\"value\":6}],"
                + "\"producer\":{\"id\":\"checkout-7\",\"epoch\":0,\"sequences\":{\"0\":3,\"1\":1}}}")
                .then().statusCode(200).body("offsets.offset", equalTo(List.of(3, 1)));
        given().get("/v1/topics/" + topic).then().body("partitionStates[0].highWatermark", equalTo(4))
                .body("partitionStates[1].highWatermark", equalTo(2));
    }
}
