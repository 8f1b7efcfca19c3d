package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under {@code fsync=always} every acknowledged produce waited for an fsync, and the service's metrics say so:
 * one {@code tierlog_produce_durable_wait_seconds} observation per append, and at least one
 * {@code tierlog_log_fsync_seconds} observation (group commit may cover several appends with one force).
 */
@QuarkusTest
@TestProfile(ManualServiceClock.Profile.class)
class DurabilityMetricsTest {
    @Test
    void everyAcknowledgedAppendWaitedForAnFsyncAndTheMetricsCountIt() {
        String topic = "durable-" + UUID.randomUUID().toString().substring(0, 8);
        ApiTest.createTopic(topic, 1, null);
        double waitsBefore = count("tierlog_produce_durable_wait_seconds_count");
        double forcesBefore = count("tierlog_log_fsync_seconds_count");
        for (int i = 0; i < 3; i++) {
            ApiTest.produce(topic, "{\"records\":[{\"value\":" + i + "}]}").then().statusCode(200);
        }
        assertThat(count("tierlog_produce_durable_wait_seconds_count") - waitsBefore).isEqualTo(3.0);
        assertThat(count("tierlog_log_fsync_seconds_count") - forcesBefore).isBetween(1.0, 3.0);
    }

    private static double count(String series) {
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Matcher m = Pattern.compile("(?m)^" + series + "(?:\\{[^}]*})? ([0-9.eE+-]+)$").matcher(metrics);
        assertThat(m.find()).as(series + " in /q/metrics").isTrue();
        return Double.parseDouble(m.group(1));
    }
}
