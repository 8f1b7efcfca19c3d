package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A waiting lease request (waitMs) answers as soon as a record becomes leasable again without any append: when
 * another consumer releases it, when its lease runs out, when its redelivery delay ends. The fallback recheck is set
 * far beyond the wait here, so without those wakeups each request would answer empty after its 30 s.
 */
@QuarkusTest
@TestProfile(ShareTimersProfile.class)
class ShareGroupsLongPollTest {
    @Inject
    ShareGroups shares;

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static JsonPath lease(String group, String topic, String body) {
        return given().contentType(ContentType.JSON).body(body)
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease").then().statusCode(200)
                .extract().jsonPath();
    }

    private static void ack(String group, String topic, String lease, String type) {
        given().contentType(ContentType.JSON).body("{\"acks\":[{\"lease\":\"" + lease + "\",\"type\":\"" + type + "\"}]}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/acks").then().statusCode(200)
                .body("results[0].ok", org.hamcrest.Matchers.equalTo(true));
    }

    private static String oneRecordTopic(String group, String config) {
        String topic = name("wake");
        ApiTest.createTopic(topic, 2, null);
        given().contentType(ContentType.JSON).body(config).put("/v1/share-groups/" + group + "/config").then()
                .statusCode(200);
        ApiTest.produce(topic, "{\"records\":[{\"partition\":1,\"value\":7}]}").then().statusCode(200);
        return topic;
    }

    private CompletableFuture<JsonPath> waitingLease(String group, String topic) throws InterruptedException {
        CompletableFuture<JsonPath> waiting = CompletableFuture.supplyAsync(() ->
                lease(group, topic, "{\"maxRecords\":5,\"waitMs\":30000}"));
        while (shares.waiting(group, topic) == 0 && !waiting.isDone()) {
            Thread.sleep(5); // until the request waits (over HTTP: nothing to latch on)
        }
        return waiting;
    }

    @Test
    void aReleaseWakesAWaitingLease() throws Exception {
        String group = name("released");
        String topic = oneRecordTopic(group, "{\"start\":\"earliest\"}");
        JsonPath first = lease(group, topic, "{\"leaseMs\":600000}");
        CompletableFuture<JsonPath> waiting = waitingLease(group, topic);
        assertThat(waiting).isNotDone();
        ack(group, topic, first.getString("records[0].lease"), "release");
        JsonPath got = waiting.get();
        assertThat(got.getList("records.value", Integer.class)).containsExactly(7);
        assertThat(got.getList("records.deliveryCount", Integer.class)).containsExactly(2);
    }

    @Test
    void anExpiringLeaseWakesAWaitingLease() throws Exception {
        String group = name("expired");
        String topic = oneRecordTopic(group, "{\"start\":\"earliest\"}");
        lease(group, topic, "{\"leaseMs\":5000}");
        CompletableFuture<JsonPath> waiting = waitingLease(group, topic);
        assertThat(waiting).as("the request waits (else it found the record already expired)").isNotDone();
        JsonPath got = waiting.get();
        assertThat(got.getList("records.value", Integer.class)).containsExactly(7);
        assertThat(got.getList("records.deliveryCount", Integer.class)).containsExactly(2);
    }

    @Test
    void theEndOfARedeliveryDelayWakesAWaitingLease() throws Exception {
        String group = name("delayed");
        String topic = oneRecordTopic(group, "{\"start\":\"earliest\",\"redelivery.delay.ms\":5000}");
        JsonPath first = lease(group, topic, "{\"leaseMs\":600000}");
        ack(group, topic, first.getString("records[0].lease"), "release");
        CompletableFuture<JsonPath> waiting = waitingLease(group, topic);
        assertThat(waiting).as("the request waits (else the delay had already ended)").isNotDone();
        JsonPath got = waiting.get();
        assertThat(got.getList("records.value", Integer.class)).containsExactly(7);
        assertThat(got.getList("records.deliveryCount", Integer.class)).containsExactly(2);
    }
}
