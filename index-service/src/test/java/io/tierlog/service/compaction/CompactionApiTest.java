package io.tierlog.service.compaction;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;

/** docs/api.md "Compaction and keys" over a real socket: the topic config keys and the latest value of a key. */
@QuarkusTest
class CompactionApiTest {
    @Inject
    TieredStorage tiered;
    @Inject
    io.tierlog.log.topic.TopicStore topicStore;
    @Inject
    io.tierlog.service.read.PartitionReads reads;

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

    static void produce(String topic, String body) {
        given().contentType(ContentType.JSON).body(body).post("/v1/topics/" + topic + "/records").then().statusCode(200);
    }

    @Test
    void theLatestValueOfAKeyByUtf8OrBase64AndTombstonesAndUnknownKeysAre404() {
        String topic = unique("keys");
        given().body("{\"name\":\"" + topic + "\",\"partitions\":3}").post("/v1/topics").then().statusCode(201);
        produce(topic, "{\"records\":[{\"key\":\"user 42\",\"value\":{\"v\":1}},{\"key\":\"user 42\",\"value\":{\"v\":2},"
                + "\"headers\":{\"h\":\"x\"}}]}");
        produce(topic, "{\"records\":[{\"key\":\"\u043a\u043b\u044e\u0447\",\"value\":\"unicode\"},"
                + "{\"key\":\"gone\",\"value\":1},{\"key\":\"gone\",\"value\":null}]}");
        // A key the producer put on a partition of its choosing is found too.
        produce(topic, "{\"records\":[{\"key\":\"placed\",\"partition\":2,\"value\":\"p\"}]}");

        JsonPath latest = given().get("/v1/topics/{t}/keys/{k}", topic, "user 42").then().statusCode(200)
                .contentType("application/json").extract().jsonPath();
        assertThat(latest.getString("topic")).isEqualTo(topic);
        assertThat(latest.getInt("value.v")).isEqualTo(2);
        assertThat(latest.getString("key")).isEqualTo("user 42");
        assertThat(latest.getString("headers.h")).isEqualTo("x");
        int partition = latest.getInt("partition");
        long offset = latest.getLong("offset");
        // The same record a fetch at that offset shows.
        given().get("/v1/topics/" + topic + "/partitions/" + partition + "/records?offset=" + offset + "&maxRecords=1")
                .then().statusCode(200).body("records[0].value.v", equalTo(2));

        String b64 = Base64.getUrlEncoder().encodeToString("user 42".getBytes(StandardCharsets.UTF_8));
        assertThat(b64).endsWith("=");
        for (String k : List.of(b64, b64.replace("=", ""))) {
            given().get("/v1/topics/" + topic + "/keys/" + k + "?keyEncoding=base64").then().statusCode(200)
                    .body("offset", equalTo((int) offset)).body("partition", equalTo(partition));
        }
        given().get("/v1/topics/{t}/keys/{k}", topic, "\u043a\u043b\u044e\u0447").then().statusCode(200)
                .body("value", equalTo("unicode"));
        given().get("/v1/topics/" + topic + "/keys/placed").then().statusCode(200).body("partition", equalTo(2));

        expectProblem(given().get("/v1/topics/" + topic + "/keys/gone"), 404, "unknown-key");
        expectProblem(given().get("/v1/topics/" + topic + "/keys/never"), 404, "unknown-key");
        expectProblem(given().get("/v1/topics/" + unique("nope") + "/keys/k"), 404, "unknown-topic");
        Response bad = given().get("/v1/topics/{t}/keys/{k}?keyEncoding=base64", topic, "%%");
        expectProblem(bad, 400, "bad-request");
        bad.then().body("field", equalTo("key"));
        expectProblem(given().get("/v1/topics/" + topic + "/keys/k?keyEncoding=hex"), 400, "bad-request");

        // An acknowledged produce is reflected at once.
        produce(topic, "{\"records\":[{\"key\":\"user 42\",\"value\":{\"v\":3}}]}");
        given().get("/v1/topics/{t}/keys/{k}", topic, "user 42").then().statusCode(200).body("value.v", equalTo(3));
        produce(topic, "{\"records\":[{\"key\":\"user 42\",\"value\":null}]}");
        expectProblem(given().get("/v1/topics/{t}/keys/{k}", topic, "user 42"), 404, "unknown-key");
    }

    @Test
    void aCompactedTopicServedAsATableKeepsTheLastValueOfEachKeyAtItsOriginalOffset() {
        String topic = unique("tbl");
        given().body("{\"name\":\"" + topic + "\",\"partitions\":1,\"config\":{\"cleanup.policy\":\"compact\","
                + "\"segment.bytes\":1024}}").post("/v1/topics").then().statusCode(201);
        String pad = "x".repeat(100);
        for (int round = 0; round < 20; round++) {
            produce(topic, "{\"records\":[{\"partition\":0,\"key\":\"a\",\"value\":{\"r\":" + round + ",\"p\":\"" + pad
                    + "\"}},{\"partition\":0,\"key\":\"b\",\"value\":{\"r\":" + round + ",\"p\":\"" + pad + "\"}}]}");
        }
        produce(topic, "{\"records\":[{\"partition\":0,\"key\":\"c\",\"value\":1}]}");
        List<Integer> before = offsets(topic);
        assertThat(before).hasSize(41);

        tiered.runTieringPass();
        tiered.runCompactionPass();

        List<Integer> after = offsets(topic);
        assertThat(after.size()).isLessThan(before.size());
        assertThat(before).containsAll(after);
        assertThat(after).isSorted();
        // A fetch at a removed offset answers from the next retained one; the log start does not move.
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0").then().statusCode(200)
                .body("records[0].offset", equalTo(after.get(0))).body("logStartOffset", equalTo(0));
        given().get("/v1/topics/" + topic + "/keys/a").then().statusCode(200).body("value.r", equalTo(19));
        given().get("/v1/topics/" + topic + "/keys/b").then().statusCode(200).body("value.r", equalTo(19));
        given().get("/v1/topics/" + topic + "/keys/c").then().statusCode(200).body("value", equalTo(1));
    }

    @Test
    void coldCompactionMetricsAreExportedAndMoveAfterAPass() {
        Map<String, Double> before = coldCompactionMetrics();
        assertThat(before).containsKeys("tierlog_cold_compaction_passes_total",
                "tierlog_cold_compaction_cleaned_bytes_total", "tierlog_cold_compaction_written_bytes_total",
                "tierlog_cold_compaction_pass_seconds_total", "tierlog_cold_compaction_failures_total",
                "tierlog_cold_compaction_max_dirty_ratio",
                "tierlog_cold_compaction_requests_total{kind=get}", "tierlog_cold_compaction_requests_total{kind=put}",
                "tierlog_cold_compaction_requests_total{kind=list}");
        String topic = unique("coldm");
        given().body("{\"name\":\"" + topic + "\",\"partitions\":1,\"config\":{\"cleanup.policy\":\"compact\","
                + "\"segment.bytes\":1024}}").post("/v1/topics").then().statusCode(201);
        for (int round = 0; round < 20; round++) {
            produce(topic, "{\"records\":[{\"partition\":0,\"key\":\"a\",\"value\":{\"r\":" + round + ",\"p\":\""
                    + "x".repeat(100) + "\"}}]}");
        }
        tiered.runTieringPass();
        tiered.runCompactionPass();

        Map<String, Double> after = coldCompactionMetrics();
        for (String moved : List.of("tierlog_cold_compaction_passes_total",
                "tierlog_cold_compaction_cleaned_bytes_total", "tierlog_cold_compaction_written_bytes_total",
                "tierlog_cold_compaction_replaced_segments_total", "tierlog_cold_compaction_pass_seconds_total",
                "tierlog_cold_compaction_requests_total{kind=get}", "tierlog_cold_compaction_requests_total{kind=put}",
                "tierlog_cold_compaction_requests_total{kind=list}")) {
            assertThat(after.get(moved)).as(moved).isGreaterThan(before.getOrDefault(moved, 0.0));
        }
        assertThat(after.get("tierlog_cold_compaction_failures_total"))
                .isEqualTo(before.get("tierlog_cold_compaction_failures_total"));
        // The new partition's cold tier was all dirty before its first pass.
        assertThat(after.get("tierlog_cold_compaction_max_dirty_ratio")).isEqualTo(1.0);
        given().get("/v1/topics/" + topic + "/keys/a").then().statusCode(200).body("value.r", equalTo(19));
    }

    /** The cold cleaner's meters from /q/metrics, by name and tags ({@code name{k=v}}). */
    private static Map<String, Double> coldCompactionMetrics() {
        String text = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Map<String, Double> out = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^(tierlog_cold_compaction_\\w+)(\\{[^}]*})? (\\S+)$").matcher(text);
        while (m.find()) {
            String tags = m.group(2) == null ? "" : m.group(2).replace("\"", "").replace(",}", "}");
            out.put(m.group(1) + tags, Double.parseDouble(m.group(3)));
        }
        return out;
    }

    private static List<Integer> offsets(String topic) {
        List<Integer> out = new ArrayList<>();
        int next = 0;
        while (true) {
            JsonPath page = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=" + next)
                    .then().statusCode(200).extract().jsonPath();
            List<Integer> got = page.getList("records.offset", Integer.class);
            if (got.isEmpty()) {
                return out;
            }
            out.addAll(got);
            next = page.getInt("nextOffset");
        }
    }

    @Test
    void consumerOffsetsIsACompactedLogThatKeepsEachGroupsLastCommit() {
        assertThat(topicStore.get("__consumer_offsets").config().cleanupPolicy()).isEqualTo("compact");
        String topic = unique("src");
        given().body("{\"name\":\"" + topic + "\",\"partitions\":1}").post("/v1/topics").then().statusCode(201);
        produce(topic, "{\"records\":[{\"partition\":0,\"value\":1}]}");
        String group = unique("g");
        int partitions = topicStore.get("__consumer_offsets").partitions();
        int target = org.apache.kafka.common.utils.Utils.toPositive(org.apache.kafka.common.utils.Utils.murmur2(
                group.getBytes(StandardCharsets.UTF_8))) % partitions;
        io.tierlog.log.TopicPartition offsetsTp = new io.tierlog.log.TopicPartition("__consumer_offsets", target);
        // Enough commits to seal segments of the commit log (128 MiB default segments: roll by making it small).
        topicStore.updateConfig("__consumer_offsets", java.util.Map.of("segment.bytes", 1024));
        try {
            for (int i = 0; i < 40; i++) {
                given().contentType(ContentType.JSON).body("{\"offsets\":[{\"topic\":\"" + topic
                        + "\",\"partition\":0,\"offset\":" + (i % 2) + "}]}")
                        .put("/v1/groups/" + group + "/offsets").then().statusCode(204);
            }
        } finally {
            topicStore.updateConfig("__consumer_offsets", java.util.Map.of("segment.bytes", 128L * 1024 * 1024));
        }
        long before = commitsOf(offsetsTp, group);
        assertThat(before).isGreaterThanOrEqualTo(40);
        tiered.runTieringPass();
        tiered.runCompactionPass();
        long after = commitsOf(offsetsTp, group);
        assertThat(after).as("commits of the group left in the log").isLessThan(before);
        given().get("/v1/groups/" + group + "/offsets").then().statusCode(200).body("offsets[0].offset", equalTo(1));
    }

    private long commitsOf(io.tierlog.log.TopicPartition tp, String group) {
        long n = 0;
        long next = reads.logStartOffset(tp);
        while (true) {
            io.tierlog.service.read.FetchResult r = reads.fetch(tp, next, 1000, 1 << 20);
            if (r.records().isEmpty()) {
                return n;
            }
            n += r.records().stream().filter(rec -> rec.key() != null
                    && new String(rec.key(), StandardCharsets.UTF_8).startsWith(group + "\0")).count();
            next = r.nextOffset();
        }
    }
}
