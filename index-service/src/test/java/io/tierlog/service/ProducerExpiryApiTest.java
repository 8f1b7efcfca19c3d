package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.tierlog.testkit.ManualClock;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tierlog.producer-id-expiration} reaches the partition writers: a retry within it is answered as a
 * duplicate, and once the producer has been idle for it the same request is a first request again. The service
 * runs on a {@link ManualClock}, so "idle for it" is exact and no test waits for it.
 */
@QuarkusTest
@TestProfile(ManualServiceClock.Profile.class)
class ProducerExpiryApiTest {
    private static final Duration EXPIRATION = ManualServiceClock.Profile.PRODUCER_ID_EXPIRATION;

    @Inject
    ManualClock clock;

    @Test
    void aRetryIsADuplicateUntilTheProducerHasBeenIdleForTheExpiration() {
        String topic = "expiry-" + UUID.randomUUID().toString().substring(0, 8);
        ApiTest.createTopic(topic, 1, null);
        String body = "{\"records\":[{\"partition\":0,\"value\":1}],"
                + "\"producer\":{\"id\":\"lambda-7\",\"epoch\":0,\"sequence\":0}}";
        JsonPath first = produce(topic, body);
        assertThat(first.getBoolean("duplicate")).isFalse();
        assertThat(first.getLong("offsets[0].offset")).isZero();

        clock.advance(EXPIRATION.minusMillis(1));
        JsonPath retry = produce(topic, body);
        assertThat(retry.getBoolean("duplicate")).as("a retry just inside the expiration").isTrue();
        assertThat(retry.getLong("offsets[0].offset")).isZero();

        clock.advance(EXPIRATION.plusMillis(1));
        JsonPath again = produce(topic, body);
        assertThat(again.getBoolean("duplicate")).as("appended again once the producer was idle").isFalse();
        assertThat(again.getLong("offsets[0].offset")).isEqualTo(1);
    }

    private static JsonPath produce(String topic, String body) {
        return ApiTest.produce(topic, body).then().statusCode(200).extract().jsonPath();
    }
}
