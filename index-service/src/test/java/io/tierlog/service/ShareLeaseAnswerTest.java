package io.tierlog.service;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease answer is rendered from the stored batches, not from record objects (issue #24's speed work): each
 * leased record must still be exactly what a JSON fetch answers for it, byte for byte, with {@code lease},
 * {@code partition} and {@code deliveryCount} in front, across partitions, values that are not JSON, odd keys and
 * headers, and tombstones.
 */
@QuarkusTest
class ShareLeaseAnswerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void eachLeasedRecordIsTheFetchedRecordWithTheLeaseFieldsInFront() throws Exception {
        String topic = ApiTest.unique("answer");
        String group = ApiTest.unique("renders");
        ApiTest.createTopic(topic, 2, null);
        // Partition 0: JSON values, keys and headers that need escaping, a null key and a tombstone.
        ApiTest.produce(topic, "{\"records\":["
                + "{\"partition\":0,\"key\":\"k\\\"1\\n\",\"value\":{\"a\":[1,2,{\"b\":\"\u00e9\"}]},"
                + "\"headers\":{\"trace\":\"x\\ty\",\"empty\":\"\"}},"
                + "{\"partition\":0,\"value\":\"  plain text  \"},"
                + "{\"partition\":0,\"key\":\"gone\",\"value\":null},"
                + "{\"partition\":0,\"key\":\"n\",\"value\":12.5e3}]}").then().statusCode(200);
        // Partition 1: bytes that are not JSON (base64 in the answer) and a header value that is not UTF-8.
        ApiTest.produce(topic, "{\"encoding\":\"base64\",\"records\":["
                + "{\"partition\":1,\"key\":\"/w==\",\"value\":\"AAEC/w==\",\"headers\":{\"bin\":\"gA==\"}},"
                + "{\"partition\":1,\"value\":\"e30=\"}]}").then().statusCode(200);
        given().contentType(ContentType.JSON).body("{\"start\":\"earliest\"}")
                .put("/v1/share-groups/" + group + "/config").then().statusCode(200);

        Map<String, String> fetched = new HashMap<>();
        for (int p = 0; p < 2; p++) {
            byte[] body = given().get("/v1/topics/" + topic + "/partitions/" + p + "/records?offset=0").then()
                    .statusCode(200).extract().asByteArray();
            for (String raw : rawRecords(body)) {
                fetched.put(p + "/" + JSON.readTree(raw).get("offset").asLong(), raw);
            }
        }
        assertThat(fetched).hasSize(6);

        byte[] answer = given().contentType(ContentType.JSON).body("{\"maxRecords\":100}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease").then().statusCode(200)
                .contentType(ContentType.JSON).extract().asByteArray();
        List<String> leased = rawRecords(answer);
        assertThat(leased).hasSize(6);
        Set<String> leases = new HashSet<>();
        for (String raw : leased) {
            JsonNode r = JSON.readTree(raw);
            String key = r.get("partition").asInt() + "/" + r.get("offset").asLong();
            String lease = r.get("lease").asText();
            assertThat(leases.add(lease)).as("lease strings are unique").isTrue();
            assertThat(raw).as(key).isEqualTo("{\"lease\":\"" + lease + "\",\"partition\":" + r.get("partition").asInt()
                    + ",\"deliveryCount\":1," + fetched.get(key).substring(1));
        }
        JsonNode whole = JSON.readTree(answer);
        List<String> fields = new ArrayList<>();
        whole.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).as("records, then their runs (ADR 0042)").containsExactly("records", "ranges");
        long inRuns = 0;
        for (JsonNode run : whole.get("ranges")) {
            inRuns += run.get("lastOffset").asLong() - run.get("firstOffset").asLong() + 1;
        }
        assertThat(inRuns).as("the runs hold every record once").isEqualTo(6);
    }

    /** The raw text of each element of a body's {@code records} array, as the service wrote it. */
    private static List<String> rawRecords(byte[] body) throws Exception {
        List<String> out = new ArrayList<>();
        try (JsonParser p = JSON.getFactory().createParser(body)) {
            while (p.nextToken() != null) {
                if (p.currentToken() == JsonToken.FIELD_NAME && p.currentName().equals("records")
                        && p.getParsingContext().getParent().inRoot()) {
                    p.nextToken();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        int from = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        int to = (int) p.currentLocation().getByteOffset();
                        out.add(new String(body, from, to - from, StandardCharsets.UTF_8));
                    }
                }
            }
        }
        return out;
    }
}
