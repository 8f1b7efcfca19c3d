package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
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
 * The binary lease answer ({@code Accept: application/vnd.tierlog.leased-batches}, docs/api.md "Share groups"): the
 * same lease as the JSON answer, its records' offsets, delivery counts and lease strings in the header, their bytes in
 * the stored batches after it; the lease strings are acknowledged as JSON ones are; bad requests are the JSON
 * problems; and the stretches between leased records are not sent.
 */
@QuarkusTest
class ShareLeaseBatchesTest {
    static final String TYPE = "application/vnd.tierlog.leased-batches";

    /** One leased record as the binary answer gives it. */
    record Leased(int partition, long offset, int deliveryCount, String lease, String value) {
    }

    /** A whole binary answer: the leased records in header order, and the batch bytes sent per partition. */
    record Answer(List<Leased> records, Map<Integer, Integer> batchBytes) {
    }

    static Response lease(String group, String topic, String body) {
        return given().contentType(ContentType.JSON).accept(TYPE).body(body)
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease");
    }

    /** Parses an answer the way a client does: header, then each partition's batches with kafka-clients. */
    static Answer parse(byte[] body) {
        ByteBuffer in = ByteBuffer.wrap(body);
        int sections = in.getInt();
        int[] partitions = new int[sections];
        List<List<Leased>> headers = new ArrayList<>();
        int[] bytes = new int[sections];
        for (int s = 0; s < sections; s++) {
            partitions[s] = in.getInt();
            List<Leased> h = new ArrayList<>();
            for (int i = in.getInt(); i > 0; i--) {
                long offset = in.getLong();
                int deliveryCount = in.getInt();
                byte[] lease = new byte[in.getShort()];
                in.get(lease);
                h.add(new Leased(partitions[s], offset, deliveryCount, new String(lease, StandardCharsets.US_ASCII),
                        null));
            }
            headers.add(h);
            bytes[s] = in.getInt();
        }
        List<Leased> out = new ArrayList<>();
        Map<Integer, Integer> batchBytes = new LinkedHashMap<>();
        for (int s = 0; s < sections; s++) {
            Map<Long, String> values = new LinkedHashMap<>();
            ByteBuffer batches = ByteBuffer.wrap(body, in.position(), bytes[s]).slice();
            for (RecordBatch b : MemoryRecords.readableRecords(batches).batches()) {
                b.ensureValid();
                for (Record r : b) {
                    values.put(r.offset(), new String(Utils.toArray(r.value()), StandardCharsets.UTF_8));
                }
            }
            for (Leased h : headers.get(s)) {
                assertThat(values).as("batches hold leased offset " + h.offset()).containsKey(h.offset());
                out.add(new Leased(h.partition(), h.offset(), h.deliveryCount(), h.lease(), values.get(h.offset())));
            }
            batchBytes.put(partitions[s], bytes[s]);
            in.position(in.position() + bytes[s]);
        }
        assertThat(in.remaining()).as("nothing after the batches").isZero();
        return new Answer(out, batchBytes);
    }

    static void ack(String group, String topic, String lease, String type) {
        given().contentType(ContentType.JSON).body("{\"acks\":[{\"lease\":\"" + lease + "\",\"type\":\"" + type + "\"}]}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/acks").then().statusCode(200)
                .body("results[0].ok", org.hamcrest.Matchers.equalTo(true));
    }

    @Test
    void leasesAsTheJsonAnswerDoesWithTheStoredBatchesAndAcksItsLeaseStrings() {
        String topic = ApiTest.unique("batches");
        String group = ApiTest.unique("binary");
        ApiTest.createTopic(topic, 2, null);
        ApiTest.produce(topic, "{\"records\":[{\"partition\":0,\"value\":\"a\"},{\"partition\":0,\"value\":\"b\"},"
                + "{\"partition\":0,\"value\":\"c\"}]}").then().statusCode(200);
        ApiTest.produce(topic, "{\"records\":[{\"partition\":1,\"value\":{\"n\":1}}]}").then().statusCode(200);
        given().contentType(ContentType.JSON).body("{\"start\":\"earliest\"}")
                .put("/v1/share-groups/" + group + "/config").then().statusCode(200);

        byte[] body = lease(group, topic, "{\"maxRecords\":3}").then().statusCode(200).contentType(TYPE).extract()
                .asByteArray();
        Answer first = parse(body);
        assertThat(first.records()).hasSize(3);
        assertThat(first.records()).allSatisfy(r -> assertThat(r.deliveryCount()).isEqualTo(1));
        byte[] rest = lease(group, topic, "{\"maxRecords\":100}").then().statusCode(200).extract().asByteArray();
        Answer second = parse(rest);
        List<Leased> all = new ArrayList<>(first.records());
        all.addAll(second.records());
        assertThat(all).extracting(r -> r.partition() + "/" + r.offset() + "=" + r.value())
                .containsExactlyInAnyOrder("0/0=\"a\"", "0/1=\"b\"", "0/2=\"c\"", "1/0={\"n\":1}");
        // Everything is leased: the next lease has nothing, in either form.
        assertThat(parse(lease(group, topic, "{}").then().statusCode(200).extract().asByteArray()).records()).isEmpty();
        given().contentType(ContentType.JSON).body("{}").post("/v1/share-groups/" + group + "/topics/" + topic + "/lease")
                .then().statusCode(200).contentType(ContentType.JSON).body("records.size()", org.hamcrest.Matchers.is(0));

        // The lease strings are those of the JSON answer: a JSON ack takes them, and a release brings the record back.
        Leased b = all.stream().filter(r -> r.value().equals("\"b\"")).findFirst().orElseThrow();
        ack(group, topic, b.lease(), "release");
        all.stream().filter(r -> r != b).forEach(r -> ack(group, topic, r.lease(), "accept"));
        Answer again = parse(lease(group, topic, "{}").then().statusCode(200).extract().asByteArray());
        assertThat(again.records()).extracting(Leased::offset, Leased::deliveryCount, Leased::value)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, 2, "\"b\""));
    }

    @Test
    void onlyBatchesHoldingLeasedRecordsAreSent() {
        String topic = ApiTest.unique("sparse");
        String group = ApiTest.unique("binary");
        ApiTest.createTopic(topic, 1, null);
        String big = "x".repeat(1000);
        for (int i = 0; i < 3; i++) { // three stored batches of one record each
            ApiTest.produce(topic, "{\"records\":[{\"value\":\"" + big + i + "\"}]}").then().statusCode(200);
        }
        given().contentType(ContentType.JSON).body("{\"start\":\"earliest\"}")
                .put("/v1/share-groups/" + group + "/config").then().statusCode(200);
        Answer all = parse(lease(group, topic, "{}").then().statusCode(200).extract().asByteArray());
        assertThat(all.records()).extracting(Leased::offset).containsExactly(0L, 1L, 2L);
        int threeBatches = all.batchBytes().get(0);
        ack(group, topic, all.records().get(0).lease(), "release");
        ack(group, topic, all.records().get(2).lease(), "release");
        Answer two = parse(lease(group, topic, "{}").then().statusCode(200).extract().asByteArray());
        assertThat(two.records()).extracting(Leased::offset).containsExactly(0L, 2L);
        assertThat(two.batchBytes().get(0)).as("the batch of offset 1 (leased to no one now) is left out")
                .isLessThan(threeBatches).isGreaterThan(threeBatches / 2);
    }

    @Test
    void badRequestsAreTheJsonProblemsNamingTheField() {
        String topic = ApiTest.unique("badbin");
        ApiTest.createTopic(topic, 1, null);
        Response r = lease("g", topic, "{\"maxRecords\":0}");
        ApiTest.expectProblem(r, 400, "bad-request");
        assertThat(r.jsonPath().getString("field")).isEqualTo("maxRecords");
        r = lease("g", topic, "{\"leaseMs\":\"soon\"}");
        ApiTest.expectProblem(r, 400, "bad-request");
        assertThat(r.jsonPath().getString("field")).isEqualTo("leaseMs");
        ApiTest.expectProblem(lease("g", "nope-" + topic, "{}"), 404, "unknown-topic");
    }
}
