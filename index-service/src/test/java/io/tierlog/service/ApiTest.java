package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.tierlog.log.HotLog;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.groups.CommittedOffset;
import io.tierlog.service.groups.GroupOffsets;
import io.tierlog.service.ops.LogGauges;
import jakarta.inject.Inject;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;

/** Every endpoint of api.md over a real socket: success paths and each 4xx with its problem type and fields. */
@QuarkusTest
class ApiTest {
    @Inject
    TierlogConfig config;
    @Inject
    LogGauges gauges;
    @Inject
    GroupOffsets groupOffsets;

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void createTopic(String name, int partitions, String configJson) {
        given().body("{\"name\":\"" + name + "\",\"partitions\":" + partitions
                        + (configJson == null ? "" : ",\"config\":" + configJson) + "}")
                .post("/v1/topics").then().statusCode(201);
    }

    static Response produce(String topic, String body) {
        return given().contentType(ContentType.JSON).body(body).post("/v1/topics/" + topic + "/records");
    }

    static void expectProblem(Response r, int status, String type) {
        r.then().statusCode(status).contentType("application/problem+json").body("type", equalTo(type))
                .body("status", equalTo(status)).body("title", not(equalTo(null))).body("detail", not(equalTo(null)));
    }

    @Test
    void topicLifecycle() {
        String name = unique("life");
        given().body("{\"name\":\"" + name + "\",\"partitions\":3,\"config\":{\"retention.ms\":60000,\"local.retention.ms\":30000}}")
                .post("/v1/topics").then().statusCode(201)
                .body("name", equalTo(name)).body("partitions", equalTo(3))
                .body("config.'retention.ms'", equalTo(60000))
                .body("partitionStates.size()", equalTo(3))
                .body("partitionStates[2].highWatermark", equalTo(0))
                .body("partitionStates[0].segments.cold", equalTo(0));
        expectProblem(given().body("{\"name\":\"" + name + "\",\"partitions\":1}").post("/v1/topics"), 409, "topic-exists");

        given().get("/v1/topics").then().statusCode(200)
                .body("topics.name", hasItem(name))
                .body("topics.name", not(hasItem("__consumer_offsets")));

        produce(name, "{\"records\":[{\"partition\":1,\"value\":1},{\"partition\":1,\"value\":2}]}").then().statusCode(200);
        given().get("/v1/topics/" + name).then().statusCode(200)
                .body("partitionStates[1].highWatermark", equalTo(2))
                .body("partitionStates[1].logStartOffset", equalTo(0))
                .body("partitionStates[1].hotStartOffset", equalTo(0))
                .body("partitionStates[1].segments.hot", equalTo(1))
                .body("partitionStates[1].coldBytes", equalTo(0))
                .body("partitionStates[1].hotBytes", not(equalTo(0)));

        given().body("{\"retention.ms\": 120000, \"segment.bytes\": \"1048576\"}").patch("/v1/topics/" + name + "/config")
                .then().statusCode(200).body("'retention.ms'", equalTo(120000)).body("'segment.bytes'", equalTo(1048576));
        expectProblem(given().body("{\"retention.mss\": 1}").patch("/v1/topics/" + name + "/config"), 400, "invalid-config");
        expectProblem(given().body("{\"segment.bytes\": \"big\"}").patch("/v1/topics/" + name + "/config"), 400, "invalid-config");
        expectProblem(given().body("{\"local.retention.ms\": 999999999}").patch("/v1/topics/" + name + "/config"), 400,
                "invalid-config");
        given().get("/v1/topics/" + name).then().body("config.'retention.ms'", equalTo(120000));

        given().delete("/v1/topics/" + name).then().statusCode(204);
        expectProblem(given().get("/v1/topics/" + name), 404, "unknown-topic");
        assertThat(config.dataDir().resolve(name + "-1")).doesNotExist();
        expectProblem(given().delete("/v1/topics/" + name), 404, "unknown-topic");
        // The name is free again, and the new topic starts empty.
        createTopic(name, 2, null);
        given().get("/v1/topics/" + name).then().body("partitionStates[1].highWatermark", equalTo(0));
    }

    @Test
    void settingOnlyRetentionMsIsEnoughAndLocalRetentionIsDescribedAsMinusTwo() {
        // Kafka's local.retention.* default -2 ("same as the total"): one hour in all means one hour hot too,
        // where a one-day hot default used to refuse it (local may not exceed the total).
        String name = unique("hour");
        given().body("{\"name\":\"" + name + "\",\"partitions\":1,\"config\":{\"retention.ms\":3600000}}")
                .post("/v1/topics").then().statusCode(201)
                .body("config.'retention.ms'", equalTo(3600000))
                .body("config.'local.retention.ms'", equalTo(-2))
                .body("config.'local.retention.bytes'", equalTo(-2));
        given().body("{\"retention.ms\": 60000, \"retention.bytes\": 1000000}").patch("/v1/topics/" + name + "/config")
                .then().statusCode(200).body("'retention.ms'", equalTo(60000)).body("'local.retention.ms'", equalTo(-2));
        given().body("{\"local.retention.ms\": 30000}").patch("/v1/topics/" + name + "/config")
                .then().statusCode(200).body("'local.retention.ms'", equalTo(30000));
        given().body("{\"local.retention.ms\": -2}").patch("/v1/topics/" + name + "/config")
                .then().statusCode(200).body("'local.retention.ms'", equalTo(-2));
        expectProblem(given().body("{\"local.retention.bytes\": -3}").patch("/v1/topics/" + name + "/config"), 400,
                "invalid-config");
        given().get("/v1/topics/" + name).then().body("config.'local.retention.ms'", equalTo(-2))
                .body("config.'local.retention.bytes'", equalTo(-2));
    }

    @Test
    void createRejectsBadInputAndChangesNothing() {
        expectProblem(given().body("{\"name\":\"..\",\"partitions\":1}").post("/v1/topics"), 400, "invalid-topic");
        expectProblem(given().body("{\"name\":\".\",\"partitions\":1}").post("/v1/topics"), 400, "invalid-topic");
        expectProblem(given().body("{\"name\":\"../etc\",\"partitions\":1}").post("/v1/topics"), 400, "invalid-topic");
        expectProblem(given().body("{\"name\":\"a b\",\"partitions\":1}").post("/v1/topics"), 400, "invalid-topic");
        expectProblem(given().body("{\"name\":\"" + "x".repeat(250) + "\",\"partitions\":1}").post("/v1/topics"), 400,
                "invalid-topic");
        expectProblem(given().body("{\"name\":\"__mine\",\"partitions\":1}").post("/v1/topics"), 400, "invalid-topic");
        String name = unique("bad");
        given().body("{\"name\":\"" + name + "\",\"partitions\":0}").post("/v1/topics").then().statusCode(400)
                .body("type", equalTo("bad-request")).body("field", equalTo("partitions"));
        given().body("{\"name\":\"" + name + "\",\"partitions\":1025}").post("/v1/topics").then().statusCode(400);
        given().body("{\"name\":\"" + name + "\",\"partitions\":\"3\"}").post("/v1/topics").then().statusCode(400)
                .body("field", equalTo("partitions")).body("detail", containsString("partitions"));
        given().body("{\"name\":\"" + name + "\",\"partitions\":1,\"config\":{\"nope\":1}}").post("/v1/topics")
                .then().statusCode(400).body("type", equalTo("invalid-config")).body("key", equalTo("nope"));
        given().body("{\"name\":\"" + name + "\",").post("/v1/topics").then().statusCode(400)
                .body("type", equalTo("bad-request")).body("field", equalTo("body"));
        given().body("{\"name\":\"" + name + "\",\"partitions\":1,\"colour\":1}").post("/v1/topics").then()
                .statusCode(400).body("field", equalTo("colour"));
        expectProblem(given().get("/v1/topics/" + name), 404, "unknown-topic");
        expectProblem(given().get("/v1/topics/a%20b"), 400, "invalid-topic");
        expectProblem(given().get("/v1/no/such/path"), 403, "forbidden");
        // a method outside the route table needs admin:cluster like an unknown path (405 for admins)
        expectProblem(given().put("/v1/topics"), 403, "forbidden");
    }

    @Test
    void produceAndFetchWithEncodings() {
        String topic = unique("pf");
        createTopic(topic, 4, null);
        String raw = Base64.getEncoder().encodeToString(new byte[]{(byte) 0xff, 0, 1});
        produce(topic, "{\"records\":[{\"partition\":2,\"key\":\"k\",\"value\":{\"a\":[1,2]},\"headers\":{\"trace\":\"t1\"},"
                + "\"timestamp\":1000},{\"partition\":2,\"value\":null,\"timestamp\":2000}]}")
                .then().statusCode(200).body("offsets.partition", equalTo(List.of(2, 2)))
                .body("offsets.offset", equalTo(List.of(0, 1)));
        produce(topic, "{\"encoding\":\"base64\",\"records\":[{\"partition\":2,\"value\":\"" + raw + "\",\"timestamp\":3000}]}")
                .then().statusCode(200).body("offsets[0].offset", equalTo(2));

        given().get("/v1/topics/" + topic + "/partitions/2/records?offset=0").then().statusCode(200)
                .body("topic", equalTo(topic)).body("partition", equalTo(2))
                .body("records.offset", equalTo(List.of(0, 1, 2)))
                .body("records[0].key", equalTo("k"))
                .body("records[0].value.a", equalTo(List.of(1, 2)))
                .body("records[0].headers.trace", equalTo("t1"))
                .body("records[0].timestamp", equalTo(1000))
                .body("records[1].value", equalTo(null))
                .body("records[2].value", equalTo(raw))
                .body("records[2].valueEncoding", equalTo("base64"))
                .body("nextOffset", equalTo(3)).body("highWatermark", equalTo(3)).body("logStartOffset", equalTo(0));

        given().get("/v1/topics/" + topic + "/partitions/2/records?offset=0&encoding=base64").then().statusCode(200)
                .body("records[0].key", equalTo(b64("k")))
                .body("records[0].value", equalTo(b64("{\"a\":[1,2]}")))
                .body("records[0].headers.trace", equalTo(b64("t1")));

        given().get("/v1/topics/" + topic + "/partitions/2/records?offset=1&maxRecords=1").then().statusCode(200)
                .body("records.offset", equalTo(List.of(1))).body("nextOffset", equalTo(2));
        given().get("/v1/topics/" + topic + "/partitions/2/records?offset=0&maxBytes=1").then().statusCode(200)
                .body("records.size()", equalTo(1));
        given().get("/v1/topics/" + topic + "/partitions/2/records?offset=3").then().statusCode(200)
                .body("records.size()", equalTo(0)).body("nextOffset", equalTo(3));
    }

    @Test
    void keyedRecordsLandWhereKafkasPartitionerPutsThem() {
        String topic = unique("keys");
        createTopic(topic, 7, null);
        for (int i = 0; i < 40; i++) {
            String key = "user-" + i;
            int expected = BuiltInPartitioner.partitionForKey(key.getBytes(StandardCharsets.UTF_8), 7);
            produce(topic, "{\"records\":[{\"key\":\"" + key + "\",\"value\":" + i + "}]}").then().statusCode(200)
                    .body("offsets[0].partition", equalTo(expected));
        }
    }

    @Test
    void produceRejectsBadRequestsAndAppendsNothing() {
        String topic = unique("pe");
        createTopic(topic, 2, "{\"max.message.bytes\": 100}");
        expectProblem(produce("nope-" + topic, "{\"records\":[{\"value\":1}]}"), 404, "unknown-topic");
        expectProblem(produce(topic, "{\"records\":[{\"partition\":2,\"value\":1}]}"), 404, "unknown-partition");
        produce(topic, "{\"records\":[{\"partition\":\"x\",\"value\":1}]}").then().statusCode(400)
                .body("type", equalTo("bad-request")).body("field", equalTo("records[0].partition"));
        produce(topic, "{\"records\":[{\"value\":1}").then().statusCode(400).body("type", equalTo("bad-request"));
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":0,\"value\":\"" + "x".repeat(200) + "\"}]}")
                .then().statusCode(413).body("type", equalTo("record-too-large")).body("field", equalTo("records[1]"));
        byte[] oversize = new byte[8 * 1024 * 1024 + 1];
        java.util.Arrays.fill(oversize, (byte) ' ');
        expectProblem(given().body(oversize).post("/v1/topics/" + topic + "/records"), 413, "request-too-large");
        // Clients normalise a literal "..", so send it encoded: whatever the routing, it never reaches the disk.
        Response dots = given().urlEncodingEnabled(false).body("{\"records\":[{\"value\":1}]}")
                .post("/v1/topics/%2E%2E/records");
        // 403: a path outside the API's route table needs admin:cluster, in none mode too (docs/security.md)
        assertThat(dots.statusCode()).isIn(400, 403, 404);
        assertThat(dots.contentType()).startsWith("application/problem+json");
        given().get("/v1/topics/" + topic).then().body("partitionStates[0].highWatermark", equalTo(0))
                .body("partitionStates[1].highWatermark", equalTo(0));

        String producer = "\"producer\":{\"id\":\"p-1\",\"epoch\":0,\"sequence\":0}";
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":1}]," + producer + "}").then().statusCode(200)
                .body("duplicate", equalTo(false));
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":1}]," + producer + "}").then().statusCode(200)
                .body("duplicate", equalTo(true)).body("offsets[0].offset", equalTo(0));
        expectProblem(produce(topic, "{\"records\":[{\"partition\":0,\"value\":1}],"
                + "\"producer\":{\"id\":\"p-1\",\"epoch\":0,\"sequence\":5}}"), 409, "out-of-order-sequence");
    }

    @Test
    void fetchRejectsOutOfRangeOnBothSidesWithBounds() throws Exception {
        String topic = unique("range");
        createTopic(topic, 1, "{\"segment.bytes\": 1024}");
        String big = "x".repeat(900);
        for (int i = 0; i < 3; i++) {
            produce(topic, "{\"records\":[{\"value\":\"" + big + "\"}]}").then().statusCode(200);
        }
        HotLog hotLog = new HotLog(config.dataDir());
        TopicPartition tp = new TopicPartition(topic, 0);
        assertThat(hotLog.segmentBases(tp)).containsExactly(0L, 1L, 2L);
        // What hot retention does: the oldest segment goes. Unless the tierer uploaded it first (then the cold
        // tier serves it and the log still starts at 0), the log now starts at 1.
        hotLog.evictBelow(tp, 1);
        String base = "/v1/topics/" + topic + "/partitions/0/records";
        int logStart = given().get("/v1/topics/" + topic).then().extract().path("partitionStates[0].logStartOffset");
        if (logStart == 1) {
            given().get(base + "?offset=0").then().statusCode(416).contentType("application/problem+json")
                    .body("type", equalTo("offset-out-of-range")).body("logStartOffset", equalTo(1))
                    .body("highWatermark", equalTo(3));
        } else {
            assertThat(logStart).isZero();
            given().get(base + "?offset=0").then().statusCode(200).body("records[0].offset", equalTo(0));
        }
        given().get(base + "?offset=4").then().statusCode(416)
                .body("type", equalTo("offset-out-of-range")).body("logStartOffset", equalTo(logStart))
                .body("highWatermark", equalTo(3));
        given().get(base + "?offset=1").then().statusCode(200).body("records[0].offset", equalTo(1));
        given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=earliest").then().body("offset", equalTo(logStart));

        // A negative offset is outside the bounds like any other: 416 with both of them, on every fetch form.
        for (String negative : List.of("-1", String.valueOf(Long.MIN_VALUE))) {
            given().get(base + "?offset=" + negative).then().statusCode(416).contentType("application/problem+json")
                    .body("type", equalTo("offset-out-of-range")).body("logStartOffset", equalTo(logStart))
                    .body("highWatermark", equalTo(3));
            given().get(base + "?offset=" + negative + "&waitMs=1000").then().statusCode(416)
                    .body("logStartOffset", equalTo(logStart)).body("highWatermark", equalTo(3));
            given().accept("application/vnd.tierlog.record-batches").get(base + "?offset=" + negative).then()
                    .statusCode(416).body("type", equalTo("offset-out-of-range")).body("highWatermark", equalTo(3));
        }
        expectProblem(given().get(base), 400, "bad-request");
        given().get(base + "?offset=abc").then().statusCode(400).body("field", equalTo("offset"));
        given().get(base + "?offset=1&maxRecords=10001").then().statusCode(400).body("field", equalTo("maxRecords"));
        given().get(base + "?offset=1&waitMs=30001").then().statusCode(400).body("field", equalTo("waitMs"));
        given().get(base + "?offset=1&encoding=xml").then().statusCode(400).body("field", equalTo("encoding"));
        expectProblem(given().get("/v1/topics/" + topic + "/partitions/1/records?offset=0"), 404, "unknown-partition");
        expectProblem(given().get("/v1/topics/" + topic + "/partitions/x/records?offset=0"), 404, "unknown-partition");
        expectProblem(given().get("/v1/topics/no-" + topic + "/partitions/0/records?offset=0"), 404, "unknown-topic");
    }

    @Test
    void offsetsByTimestampAndEdges() {
        String topic = unique("ts");
        createTopic(topic, 1, null);
        produce(topic, "{\"records\":[{\"value\":0,\"timestamp\":1000},{\"value\":1,\"timestamp\":2000},"
                + "{\"value\":2,\"timestamp\":3000}]}").then().statusCode(200);
        String base = "/v1/topics/" + topic + "/partitions/0/offsets";
        // Kafka's ListOffsets: the found record's own timestamp, not the one asked for.
        given().get(base + "?timestamp=1500").then().statusCode(200).body("offset", equalTo(1)).body("timestamp", equalTo(2000));
        given().get(base + "?timestamp=0").then().body("offset", equalTo(0)).body("timestamp", equalTo(1000));
        given().get(base + "?timestamp=3000").then().body("offset", equalTo(2)).body("timestamp", equalTo(3000));
        // None at or after T: the high watermark, and -1 for the timestamp.
        given().get(base + "?timestamp=3001").then().body("offset", equalTo(3)).body("timestamp", equalTo(-1));
        // earliest / latest are offsets only: no timestamp member at all.
        given().get(base + "?at=earliest").then().body("offset", equalTo(0)).body("$", not(hasKey("timestamp")));
        given().get(base + "?at=latest").then().body("offset", equalTo(3)).body("$", not(hasKey("timestamp")));
        given().get(base + "?at=middle").then().statusCode(400).body("field", equalTo("at"));
        given().get(base).then().statusCode(400).body("type", equalTo("bad-request"));
        given().get(base + "?timestamp=x").then().statusCode(400).body("field", equalTo("timestamp"));
    }

    @Test
    void longPollAnsweredByAnInProcessProduceAndAtTheDeadline() throws Exception {
        String topic = unique("lp");
        createTopic(topic, 1, null);
        String url = "/v1/topics/" + topic + "/partitions/0/records?offset=0&waitMs=20000";
        long start = System.nanoTime();
        CompletableFuture<Response> poll = CompletableFuture.supplyAsync(() -> given().get(url));
        awaitWaiters();
        produce(topic, "{\"records\":[{\"value\":\"hello\"}]}").then().statusCode(200);
        Response r = poll.get(15, TimeUnit.SECONDS);
        r.then().statusCode(200).body("records[0].value", equalTo("hello")).body("highWatermark", equalTo(1));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(20000);

        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=1&waitMs=200").then().statusCode(200)
                .body("records.size()", equalTo(0)).body("nextOffset", equalTo(1));
    }

    @Inject
    io.tierlog.service.read.AppendWatcher watcher;

    private void awaitWaiters() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (watcher.watchedPartitions() == 0) {
            assertThat(System.nanoTime()).as("a long-poll registered").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void consumerGroups() {
        String topic = unique("grp");
        String group = unique("g");
        createTopic(topic, 2, null);
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":1},{\"partition\":0,\"value\":2},"
                + "{\"partition\":0,\"value\":3},{\"partition\":1,\"value\":4}]}").then().statusCode(200);
        String offsets = "/v1/groups/" + group + "/offsets";
        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":1},"
                + "{\"topic\":\"" + topic + "\",\"partition\":1,\"offset\":1}]}").put(offsets).then().statusCode(204);
        given().get(offsets).then().statusCode(200).body("group", equalTo(group))
                .body("offsets.offset", equalTo(List.of(1, 1))).body("offsets.partition", equalTo(List.of(0, 1)));
        given().get("/v1/groups/" + group + "/lag").then().statusCode(200).body("totalLag", equalTo(2))
                .body("partitions[0].committedOffset", equalTo(1)).body("partitions[0].highWatermark", equalTo(3))
                .body("partitions[0].lag", equalTo(2)).body("partitions[1].lag", equalTo(0));
        given().get("/v1/groups").then().statusCode(200).body("groups.group", hasItem(group));

        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":3}]}").put(offsets)
                .then().statusCode(204);
        given().get("/v1/groups/" + group + "/lag").then().body("totalLag", equalTo(0));

        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":4}]}").put(offsets)
                .then().statusCode(416).body("type", equalTo("offset-out-of-range")).body("highWatermark", equalTo(3))
                .body("logStartOffset", equalTo(0));
        expectProblem(given().body("{\"offsets\":[{\"topic\":\"no-" + topic + "\",\"partition\":0,\"offset\":0}]}")
                .put(offsets), 404, "unknown-topic");
        expectProblem(given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":9,\"offset\":0}]}")
                .put(offsets), 404, "unknown-partition");
        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":\"1\"}]}").put(offsets)
                .then().statusCode(400).body("field", equalTo("offsets[0].offset"));
        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":-1}]}").put(offsets)
                .then().statusCode(400).body("type", equalTo("bad-request"));
        given().body("{\"offsets\":").put(offsets).then().statusCode(400).body("field", equalTo("body"));
        expectProblem(given().body("{\"offsets\":[]}").put("/v1/groups/a%20b/offsets"), 400, "invalid-group");
        expectProblem(given().get("/v1/groups/..%20/offsets"), 400, "invalid-group");
        // Nothing of the rejected commits was applied.
        given().get(offsets).then().body("offsets.offset", equalTo(List.of(3, 1)));
    }

    @Test
    void operationsEndpoints() {
        String topic = unique("ops");
        String group = unique("og");
        createTopic(topic, 1, null);
        produce(topic, "{\"records\":[{\"value\":1},{\"value\":2}]}").then().statusCode(200);
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then().statusCode(200);
        given().body("{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":0}]}")
                .put("/v1/groups/" + group + "/offsets").then().statusCode(204);
        gauges.refresh();
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertThat(metrics).contains("tierlog_produce_requests_total", "tierlog_produce_bytes_total",
                "tierlog_fetch_records_total", "tierlog_fetch_latency_seconds_bucket",
                "tierlog_produce_latency_seconds_bucket", "tierlog_log_fsync_seconds_bucket",
                "tierlog_produce_durable_wait_seconds_bucket",
                "tierlog_partition_high_watermark{partition=\"0\",topic=\"" + topic + "\"} 2.0",
                "tierlog_group_lag{group=\"" + group + "\",partition=\"0\",topic=\"" + topic + "\"} 2.0",
                "tierlog_group_total_lag{group=\"" + group + "\"} 2.0");
        given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.find { it.name == 'tierlog-storage' }.data.dataDirWritable", equalTo(true))
                .body("checks.find { it.name == 'tierlog-storage' }.data.indexOpen", equalTo(true))
                .body("checks.find { it.name == 'tierlog-listeners' }.status", equalTo("UP"));
        given().get("/q/openapi").then().statusCode(200).body(containsString("/v1/topics/{topic}/records"));
        given().get("/q/swagger-ui/").then().statusCode(200);
    }

    @Test
    void groupLagsTakeThePartitionEndsTheMetricsRefreshAlreadyReadInsteadOfReadingThemAgain() {
        String topic = unique("lagends");
        String group = unique("lg");
        createTopic(topic, 1, null);
        produce(topic, "{\"records\":[{\"value\":1},{\"value\":2}]}").then().statusCode(200);
        groupOffsets.commit(group, List.of(new CommittedOffset(topic, 0, 1)));
        TopicPartition tp = new TopicPartition(topic, 0);

        assertThat(groupOffsets.lags().get(group)).singleElement()
                .satisfies(l -> assertThat(l.highWatermark()).isEqualTo(2))
                .satisfies(l -> assertThat(l.lag()).isEqualTo(1));
        // An end the caller passes is used as is (it stands for one read a moment ago; 7 shows it was not re-read).
        assertThat(groupOffsets.lags(Map.of(tp, 7L)).get(group)).singleElement()
                .satisfies(l -> assertThat(l.highWatermark()).isEqualTo(7))
                .satisfies(l -> assertThat(l.lag()).isEqualTo(6));
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

}
