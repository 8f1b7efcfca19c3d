package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.tierlog.ingest.Partitioner;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.testkit.ManualClock;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Share groups over HTTP (api.md, "Share groups"): workers, redelivery, dead letters, lease expiry, bad input. The
 * service runs on a {@link ManualClock}, so a lease runs out when the test moves the clock, not after a wait.
 */
@QuarkusTest
@TestProfile(ManualServiceClock.Profile.class)
class ShareGroupsApiTest {
    @Inject
    ManualClock clock;
    @Inject
    TierlogConfig config;

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static Response post(String path, String body) {
        return given().contentType(ContentType.JSON).body(body).post(path);
    }

    private static JsonPath lease(String group, String topic, String body) {
        return post("/v1/share-groups/" + group + "/topics/" + topic + "/lease", body).then().statusCode(200)
                .extract().jsonPath();
    }

    private static JsonPath ack(String group, String topic, String lease, String type) {
        return post("/v1/share-groups/" + group + "/topics/" + topic + "/acks",
                "{\"acks\":[{\"lease\":\"" + lease + "\",\"type\":\"" + type + "\"}]}").then().statusCode(200)
                .extract().jsonPath();
    }

    private static void configure(String group, String body) {
        given().contentType(ContentType.JSON).body(body).put("/v1/share-groups/" + group + "/config").then()
                .statusCode(200);
    }

    @Test
    void aWorkerPoolDrainsATopicAcceptingEveryRecordOnce() throws Exception {
        String topic = name("jobs");
        String group = name("workers");
        ApiTest.createTopic(topic, 3, null);
        StringBuilder records = new StringBuilder("{\"records\":[");
        for (int i = 0; i < 60; i++) {
            records.append(i == 0 ? "" : ",").append("{\"key\":\"k").append(i).append("\",\"value\":{\"job\":")
                    .append(i).append("}}");
        }
        ApiTest.produce(topic, records.append("]}").toString()).then().statusCode(200);
        configure(group, "{\"start\":\"earliest\"}");

        Map<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
        Map<Integer, Boolean> jobs = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < 6; w++) {
            workers.add(pool.submit(() -> {
                int idle = 0;
                while (idle < 2) {
                    List<Map<String, Object>> got = lease(group, topic, "{\"maxRecords\":4,\"leaseMs\":60000}")
                            .getList("records");
                    idle = got.isEmpty() ? idle + 1 : 0;
                    for (Map<String, Object> r : got) {
                        assertThat(r.get("deliveryCount")).isEqualTo(1);
                        JsonPath answer = ack(group, topic, (String) r.get("lease"), "accept");
                        assertThat(answer.getBoolean("results[0].ok")).isTrue();
                        accepted.computeIfAbsent(r.get("partition") + "@" + r.get("offset"), k -> new AtomicInteger())
                                .incrementAndGet();
                        @SuppressWarnings("unchecked")
                        Map<String, Object> value = (Map<String, Object>) r.get("value");
                        jobs.put((Integer) value.get("job"), true);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : workers) {
            f.get();
        }
        pool.shutdown();
        assertThat(accepted).hasSize(60);
        assertThat(accepted.values()).allMatch(n -> n.get() == 1);
        assertThat(jobs).hasSize(60);

        JsonPath d = given().get("/v1/share-groups/" + group).then().statusCode(200).extract().jsonPath();
        assertThat(d.getString("group")).isEqualTo(group);
        assertThat(d.getString("config.start")).isEqualTo("earliest");
        assertThat(d.getList("topics[0].partitions.lag", Integer.class)).containsOnly(0);
        assertThat(d.getList("topics[0].partitions.leased", Integer.class)).containsOnly(0);
        assertThat(d.getList("topics[0].partitions.startOffset", Integer.class).stream().mapToInt(i -> i).sum())
                .isEqualTo(60);
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertThat(metrics).contains("tierlog_share_leased_total", "tierlog_share_records_available",
                "tierlog_share_dead_lettered_total", "tierlog_share_redeliveries_total",
                "tierlog_share_oldest_record_age_milliseconds");
    }

    @Test
    void releasedRecordsComeBackAndRejectedOnesLandInTheDeadLetterTopicWithHeaders() {
        String topic = name("orders");
        String dlq = name("orders.dlq");
        String group = name("billing");
        ApiTest.createTopic(topic, 1, null);
        ApiTest.createTopic(dlq, 3, null);
        configure(group, "{\"start\":\"earliest\",\"max.delivery.attempts\":2,\"dead.letter.topic\":\"" + dlq + "\"}");
        ApiTest.produce(topic, "{\"records\":[{\"key\":\"order-1\",\"value\":{\"n\":1},\"headers\":{\"trace\":\"abc\"}},"
                + "{\"key\":\"order-2\",\"value\":{\"n\":2}}]}").then().statusCode(200);

        JsonPath first = lease(group, topic, "{\"maxRecords\":1}");
        assertThat(first.getInt("records[0].offset")).isZero();
        assertThat(ack(group, topic, first.getString("records[0].lease"), "release").getBoolean("results[0].ok"))
                .isTrue();
        JsonPath again = lease(group, topic, "{\"maxRecords\":1}");
        assertThat(again.getInt("records[0].offset")).as("released, so delivered again").isZero();
        assertThat(again.getInt("records[0].deliveryCount")).isEqualTo(2);
        assertThat(again.getString("records[0].headers.trace")).isEqualTo("abc");
        // Released at the delivery limit: treated as rejected.
        ack(group, topic, again.getString("records[0].lease"), "release");

        JsonPath second = lease(group, topic, "{\"maxRecords\":10}");
        assertThat(second.getList("records.offset", Integer.class)).containsExactly(1);
        ack(group, topic, second.getString("records[0].lease"), "reject");
        assertThat(lease(group, topic, "{\"maxRecords\":10}").getList("records")).isEmpty();

        int p1 = Partitioner.forKey("order-1".getBytes(StandardCharsets.UTF_8), 3);
        int p2 = Partitioner.forKey("order-2".getBytes(StandardCharsets.UTF_8), 3);
        JsonPath dl1 = fetch(dlq, p1);
        JsonPath dl2 = fetch(dlq, p2);
        int i1 = dl1.getList("records.key").indexOf("order-1");
        int i2 = dl2.getList("records.key").indexOf("order-2");
        assertThat(i1).as("order-1 in the dead-letter partition its key picks").isGreaterThanOrEqualTo(0);
        assertThat(i2).isGreaterThanOrEqualTo(0);
        String r1 = "records[" + i1 + "].";
        assertThat(dl1.getInt(r1 + "value.n")).isEqualTo(1);
        assertThat(dl1.getString(r1 + "headers.trace")).isEqualTo("abc");
        assertThat(dl1.getString(r1 + "headers.'tierlog.dlq.topic'")).isEqualTo(topic);
        assertThat(dl1.getString(r1 + "headers.'tierlog.dlq.partition'")).isEqualTo("0");
        assertThat(dl1.getString(r1 + "headers.'tierlog.dlq.offset'")).isEqualTo("0");
        assertThat(dl1.getString(r1 + "headers.'tierlog.dlq.reason'")).isEqualTo("max-delivery-attempts");
        assertThat(dl1.getString(r1 + "headers.'tierlog.dlq.delivery-count'")).isEqualTo("2");
        String r2 = "records[" + i2 + "].";
        assertThat(dl2.getString(r2 + "headers.'tierlog.dlq.reason'")).isEqualTo("rejected");
        assertThat(dl2.getString(r2 + "headers.'tierlog.dlq.offset'")).isEqualTo("1");
        assertThat(dl2.getString(r2 + "headers.'tierlog.dlq.delivery-count'")).isEqualTo("1");
        int total = 0;
        for (int p = 0; p < 3; p++) {
            total += fetch(dlq, p).getList("records").size();
        }
        assertThat(total).as("each dead letter once").isEqualTo(2);

        JsonPath d = given().get("/v1/share-groups/" + group).then().statusCode(200).extract().jsonPath();
        assertThat(d.getInt("topics[0].partitions[0].startOffset")).isEqualTo(2);
        assertThat(d.getInt("topics[0].partitions[0].lag")).isZero();
    }

    private static JsonPath fetch(String topic, int partition) {
        return given().get("/v1/topics/" + topic + "/partitions/" + partition + "/records?offset=0").then()
                .statusCode(200).extract().jsonPath();
    }

    @Test
    void anExpiredLeaseIsHandedToAnotherConsumerAndItsAckAnswersLeaseExpired() throws Exception {
        String topic = name("expiry");
        String group = name("slow");
        ApiTest.createTopic(topic, 1, null);
        configure(group, "{\"start\":\"earliest\"}");
        ApiTest.produce(topic, "{\"records\":[{\"value\":\"work\"}]}").then().statusCode(200);

        JsonPath slow = lease(group, topic, "{\"maxRecords\":1,\"leaseMs\":300}");
        String staleLease = slow.getString("records[0].lease");
        // Nothing is available until the slow consumer's lease, and the clock-skew grace after it, has run out on
        // the service's clock: this long-poll answers once the test has moved the clock past both.
        CompletableFuture<JsonPath> waiting = CompletableFuture.supplyAsync(
                () -> lease(group, topic, "{\"maxRecords\":1,\"leaseMs\":60000,\"waitMs\":20000}"));
        clock.advance(Duration.ofMillis(300).plus(config.groups().maxClockSkew()).plusMillis(1));
        JsonPath other = waiting.get(30, TimeUnit.SECONDS);
        assertThat(other.getInt("records[0].offset")).isZero();
        assertThat(other.getInt("records[0].deliveryCount")).isEqualTo(2);

        JsonPath stale = ack(group, topic, staleLease, "accept");
        assertThat(stale.getString("results[0].lease")).isEqualTo(staleLease);
        assertThat(stale.getBoolean("results[0].ok")).isFalse();
        assertThat(stale.getString("results[0].error")).isEqualTo("lease-expired");
        assertThat(given().get("/v1/share-groups/" + group).then().extract().jsonPath()
                .getInt("topics[0].partitions[0].leased")).as("the stale ack changed nothing").isEqualTo(1);
        assertThat(ack(group, topic, other.getString("records[0].lease"), "renew").getBoolean("results[0].ok")).isTrue();
        assertThat(ack(group, topic, other.getString("records[0].lease"), "accept").getBoolean("results[0].ok")).isTrue();
    }

    @Test
    void aLeaseCallThatNamesNoLeaseGetsTheGroupsLeaseMs() throws Exception {
        String topic = name("grouplease");
        String group = name("grouplease");
        ApiTest.createTopic(topic, 1, null);
        configure(group, "{\"start\":\"earliest\",\"lease.ms\":5000}");
        given().get("/v1/share-groups/" + group).then().statusCode(200)
                .body("config.'lease.ms'", org.hamcrest.Matchers.equalTo(5000));
        ApiTest.produce(topic, "{\"records\":[{\"value\":\"work\"}]}").then().statusCode(200);

        assertThat(lease(group, topic, "{\"maxRecords\":1}").getInt("records[0].deliveryCount")).isEqualTo(1);
        Duration grace = config.groups().maxClockSkew();
        clock.advance(Duration.ofMillis(4999).plus(grace));
        assertThat(lease(group, topic, "{\"maxRecords\":1}").getList("records")).as("the group's 5 s not over")
                .isEmpty();
        clock.advance(Duration.ofMillis(1));
        assertThat(lease(group, topic, "{\"maxRecords\":1,\"leaseMs\":60000}").getInt("records[0].deliveryCount"))
                .as("expired after the group's lease, not the 30 s default").isEqualTo(2);

        ApiTest.expectProblem(given().contentType(ContentType.JSON).body("{\"lease.ms\":999}")
                .put("/v1/share-groups/" + group + "/config"), 400, "invalid-config");
    }

    @Test
    void aLongPollAnswersWhenARecordIsProduced() throws Exception {
        String topic = name("tail");
        String group = name("tailers");
        ApiTest.createTopic(topic, 2, null);
        configure(group, "{\"start\":\"latest\"}");
        lease(group, topic, "{}"); // fixes the start at the (empty) end
        var waiting = java.util.concurrent.CompletableFuture.supplyAsync(() ->
                lease(group, topic, "{\"maxRecords\":5,\"waitMs\":20000}"));
        ApiTest.produce(topic, "{\"records\":[{\"value\":1}]}").then().statusCode(200);
        assertThat(waiting.get().getList("records.value", Integer.class)).containsExactly(1);
    }

    @Test
    void badInputIsA4xxNamingTheField() {
        String topic = name("bad");
        ApiTest.createTopic(topic, 1, null);
        ApiTest.expectProblem(post("/v1/share-groups/g/topics/nope-" + topic + "/lease", "{}"), 404, "unknown-topic");
        Response r = post("/v1/share-groups/g/topics/" + topic + "/lease", "{\"maxRecords\":\"many\"}");
        ApiTest.expectProblem(r, 400, "bad-request");
        assertThat(r.jsonPath().getString("field")).isEqualTo("maxRecords");
        r = post("/v1/share-groups/g/topics/" + topic + "/lease", "{\"waitMs\":30001}");
        assertThat(r.jsonPath().getString("field")).isEqualTo("waitMs");
        r = post("/v1/share-groups/g/topics/" + topic + "/acks", "{\"acks\":[{\"lease\":\"x\",\"type\":\"maybe\"}]}");
        ApiTest.expectProblem(r, 400, "bad-request");
        assertThat(r.jsonPath().getString("field")).isEqualTo("acks[0].type");
        r = post("/v1/share-groups/g/topics/" + topic + "/acks", "{\"acks\":[{\"lease\":\"forged\",\"type\":\"accept\"}]}");
        ApiTest.expectProblem(r, 400, "bad-request");
        assertThat(r.jsonPath().getString("field")).isEqualTo("acks[0].lease");
        r = given().contentType(ContentType.JSON).body("{\"max.delivery.attempts\":0}").put("/v1/share-groups/g/config");
        ApiTest.expectProblem(r, 400, "invalid-config");
        assertThat(r.jsonPath().getString("field")).isEqualTo("max.delivery.attempts");
        r = given().contentType(ContentType.JSON).body("{\"dead.letter.topic\":\"missing-" + topic + "\"}")
                .put("/v1/share-groups/g/config");
        ApiTest.expectProblem(r, 400, "invalid-config");
        ApiTest.expectProblem(given().get("/v1/share-groups/never-" + topic), 404, "unknown-group");
        ApiTest.expectProblem(post("/v1/share-groups/bad%20group/topics/" + topic + "/lease", "{}"), 400, "invalid-group");

        String group = name("gone");
        configure(group, "{}");
        given().get("/v1/share-groups/" + group).then().statusCode(200);
        given().delete("/v1/share-groups/" + group).then().statusCode(204);
        ApiTest.expectProblem(given().get("/v1/share-groups/" + group), 404, "unknown-group");
    }
}
