package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Range leases over HTTP (ADR 0042, docs/api.md "Share groups"): the JSON answer's {@code ranges}, range acks (whole,
 * narrowed, all or nothing), a bad narrowing as a 400 problem naming the field with nothing changed, and the
 * {@code application/vnd.tierlog.leased-ranges} answer parsed back.
 */
@QuarkusTest
class ShareRangeLeasesTest {
    static final String RANGES = "application/vnd.tierlog.leased-ranges";

    /** One run of the binary answer, with the values of its records as the batches hold them. */
    record Run(int partition, long firstOffset, int records, int deliveryCount, String lease, List<String> values) {
    }

    static String setUp(String topic, int partitions) {
        String group = ApiTest.unique("ranges");
        ApiTest.createTopic(topic, partitions, null);
        given().contentType(ContentType.JSON).body("{\"start\":\"earliest\"}")
                .put("/v1/share-groups/" + group + "/config").then().statusCode(200);
        return group;
    }

    static Response acks(String group, String topic, String body) {
        return given().contentType(ContentType.JSON).body(body)
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/acks");
    }

    static JsonPath leaseJson(String group, String topic, String body) {
        return given().contentType(ContentType.JSON).body(body)
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease").then().statusCode(200)
                .contentType(ContentType.JSON).extract().jsonPath();
    }

    static String entry(String lease, String type, String narrowing) {
        return "{\"lease\":\"" + lease + "\",\"type\":\"" + type + "\"" + narrowing + "}";
    }

    @Test
    void theJsonAnswerNamesItsRecordsAsRangesAndOneRangeAckTakesThemAll() {
        String topic = ApiTest.unique("rjson");
        String group = setUp(topic, 2);
        ApiTest.produce(topic, "{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":0,\"value\":2},"
                + "{\"partition\":0,\"value\":3},{\"partition\":1,\"value\":4}]}").then().statusCode(200);
        JsonPath got = leaseJson(group, topic, "{\"maxRecords\":100}");
        assertThat(got.getList("records")).hasSize(4);
        List<Map<String, Object>> ranges = got.getList("ranges");
        assertThat(ranges).extracting(r -> r.get("partition") + ":" + r.get("firstOffset") + ".." + r.get("lastOffset")
                + "#" + r.get("deliveryCount")).containsExactlyInAnyOrder("0:0..2#1", "1:0..0#1");
        StringBuilder body = new StringBuilder("{\"acks\":[");
        for (int i = 0; i < ranges.size(); i++) {
            body.append(i > 0 ? "," : "").append(entry((String) ranges.get(i).get("lease"), "accept", ""));
        }
        JsonPath results = acks(group, topic, body.append("]}").toString()).then().statusCode(200).extract().jsonPath();
        assertThat(results.getList("results.ok")).containsExactly(true, true);
        assertThat(results.getList("results.lease")).containsExactlyElementsOf(
                ranges.stream().map(r -> r.get("lease")).toList());
        // Every record was taken by the range acks: their per-record leases are spent.
        for (String lease : got.<String>getList("records.lease")) {
            acks(group, topic, "{\"acks\":[" + entry(lease, "accept", "") + "]}").then().statusCode(200)
                    .body("results[0].ok", org.hamcrest.Matchers.equalTo(false))
                    .body("results[0].error", org.hamcrest.Matchers.equalTo("lease-expired"));
        }
    }

    @Test
    void aNarrowedRangeAckEchoesItsOffsetsAndABadNarrowingChangesNothing() {
        String topic = ApiTest.unique("rnarrow");
        String group = setUp(topic, 1);
        ApiTest.produce(topic, "{\"records\":[{\"value\":1},{\"value\":2},{\"value\":3},{\"value\":4}]}")
                .then().statusCode(200);
        JsonPath got = leaseJson(group, topic, "{}");
        String range = got.getString("ranges[0].lease");
        List<String> perRecord = got.getList("records.lease");

        for (String[] bad : new String[][] {
                {",\"firstOffset\":4", "acks[1].firstOffset"},
                {",\"lastOffset\":9", "acks[1].lastOffset"},
                {",\"firstOffset\":2,\"lastOffset\":1", "acks[1].lastOffset"},
                {",\"firstOffset\":\"one\"", "acks[1].firstOffset"},
                {",\"lastOffset\":1.5", "acks[1].lastOffset"}}) {
            Response r = acks(group, topic, "{\"acks\":[" + entry(perRecord.get(0), "accept", "") + ","
                    + entry(range, "accept", bad[0]) + "]}");
            ApiTest.expectProblem(r, 400, "bad-request");
            assertThat(r.jsonPath().getString("field")).as(bad[0]).isEqualTo(bad[1]);
        }
        // Nothing of those requests was applied: offset 0 is still leased under its own lease.
        JsonPath narrowed = acks(group, topic, "{\"acks\":[" + entry(range, "accept", ",\"firstOffset\":1,\"lastOffset\":2")
                + "," + entry(perRecord.get(0), "accept", "") + "," + entry(range, "release", ",\"firstOffset\":2")
                + "]}").then().statusCode(200).extract().jsonPath();
        assertThat(narrowed.getList("results.ok")).containsExactly(true, true, false);
        assertThat(narrowed.getLong("results[0].firstOffset")).isEqualTo(1);
        assertThat(narrowed.getLong("results[0].lastOffset")).isEqualTo(2);
        assertThat(narrowed.getString("results[2].error")).as("2 was accepted: all or nothing").isEqualTo("lease-expired");
        assertThat(narrowed.getLong("results[2].firstOffset")).isEqualTo(2);
        assertThat(narrowed.getMap("results[2]")).doesNotContainKey("lastOffset");
        assertThat(narrowed.getMap("results[1]")).doesNotContainKeys("firstOffset", "lastOffset");
        acks(group, topic, "{\"acks\":[" + entry(range, "accept", ",\"firstOffset\":3") + "]}").then().statusCode(200)
                .body("results[0].ok", org.hamcrest.Matchers.equalTo(true));
        assertThat(leaseJson(group, topic, "{}").getList("records")).as("all four accepted").isEmpty();
    }

    @Test
    void theLeasedRangesAnswerNamesRunsAndTheBatchesHoldThem() {
        String topic = ApiTest.unique("rbin");
        String group = setUp(topic, 1);
        ApiTest.produce(topic, "{\"records\":[{\"value\":\"a\"},{\"value\":\"b\"},{\"value\":\"c\"}]}").then()
                .statusCode(200);
        List<Run> first = leaseRanges(group, topic);
        assertThat(first).containsExactly(new Run(0, 0, 3, 1, first.get(0).lease(), List.of("\"a\"", "\"b\"", "\"c\"")));
        acks(group, topic, "{\"acks\":[" + entry(first.get(0).lease(), "release", ",\"firstOffset\":1,\"lastOffset\":1")
                + "]}").then().statusCode(200).body("results[0].ok", org.hamcrest.Matchers.equalTo(true));
        ApiTest.produce(topic, "{\"records\":[{\"value\":\"d\"}]}").then().statusCode(200);
        List<Run> second = leaseRanges(group, topic);
        assertThat(second).extracting(r -> r.firstOffset() + "x" + r.records() + "#" + r.deliveryCount() + r.values())
                .containsExactly("1x1#2[\"b\"]", "3x1#1[\"d\"]");
        // Range leases of the binary answer are acked as any range lease.
        JsonPath results = acks(group, topic, "{\"acks\":[" + entry(second.get(0).lease(), "accept", "") + ","
                + entry(second.get(1).lease(), "accept", "") + "," + entry(first.get(0).lease(), "accept", "")
                + "]}").then().statusCode(200).extract().jsonPath();
        assertThat(results.getList("results.ok")).containsExactly(true, true, false);
        acks(group, topic, "{\"acks\":[" + entry(first.get(0).lease(), "accept", ",\"lastOffset\":0") + ","
                + entry(first.get(0).lease(), "accept", ",\"firstOffset\":2") + "]}").then().statusCode(200)
                .body("results.ok", org.hamcrest.Matchers.contains(true, true));
        assertThat(leaseRanges(group, topic)).isEmpty();
        // Bad requests are the JSON problems, as for leased-batches.
        Response bad = given().contentType(ContentType.JSON).accept(RANGES).body("{\"maxRecords\":0}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease");
        ApiTest.expectProblem(bad, 400, "bad-request");
        assertThat(bad.jsonPath().getString("field")).isEqualTo("maxRecords");
    }

    /** Leases with Accept leased-ranges and parses the answer as a client does: header of runs, then batches. */
    static List<Run> leaseRanges(String group, String topic) {
        byte[] body = given().contentType(ContentType.JSON).accept(RANGES).body("{}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease").then().statusCode(200)
                .contentType(RANGES).extract().asByteArray();
        ByteBuffer in = ByteBuffer.wrap(body);
        int sections = in.getInt();
        List<List<Run>> headers = new ArrayList<>();
        int[] bytes = new int[sections];
        for (int s = 0; s < sections; s++) {
            int partition = in.getInt();
            List<Run> h = new ArrayList<>();
            for (int i = in.getInt(); i > 0; i--) {
                long firstOffset = in.getLong();
                int records = in.getInt();
                int deliveryCount = in.getInt();
                byte[] lease = new byte[in.getShort()];
                in.get(lease);
                h.add(new Run(partition, firstOffset, records, deliveryCount, new String(lease, StandardCharsets.US_ASCII),
                        null));
            }
            headers.add(h);
            bytes[s] = in.getInt();
        }
        List<Run> out = new ArrayList<>();
        for (int s = 0; s < sections; s++) {
            Map<Long, String> values = new LinkedHashMap<>();
            for (RecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(body, in.position(), bytes[s]).slice())
                    .batches()) {
                b.ensureValid();
                for (Record r : b) {
                    values.put(r.offset(), new String(Utils.toArray(r.value()), StandardCharsets.UTF_8));
                }
            }
            for (Run h : headers.get(s)) {
                List<String> vs = new ArrayList<>();
                for (long o = h.firstOffset(); o < h.firstOffset() + h.records(); o++) {
                    assertThat(values).as("batches hold leased offset " + o).containsKey(o);
                    vs.add(values.get(o));
                }
                out.add(new Run(h.partition(), h.firstOffset(), h.records(), h.deliveryCount(), h.lease(), vs));
            }
            in.position(in.position() + bytes[s]);
        }
        assertThat(in.remaining()).as("nothing after the batches").isZero();
        return out;
    }
}
