package io.tierlog.service;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tierlog.producer-id-expiration} reaches the partition writers: a retry within it is answered as a
 * duplicate, and once the producer has been idle for it the same request is a first request again.
 */
@QuarkusTest
@TestProfile(ProducerExpiryApiTest.ShortExpiration.class)
class ProducerExpiryApiTest {
    private static final Duration EXPIRATION = Duration.ofSeconds(3);

    public static class ShortExpiration implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String dir = "target/producer-expiry-test-" + UUID.randomUUID();
            return Map.of("tierlog.data-dir", dir + "/hot", "tierlog.index-dir", dir + "/index",
                    "tierlog.cold.filesystem.dir", dir + "/cold",
                    "tierlog.producer-id-expiration", EXPIRATION.toSeconds() + "s");
        }
    }

    @Test
    void aRetryIsADuplicateUntilTheProducerHasBeenIdleForTheExpiration() throws InterruptedException {
        // The retry must come within the expiration of the first append for the duplicate check to mean anything;
        // on a loaded machine a first request can take longer than that, so such an attempt is repeated.
        String topic = null;
        String body = null;
        long sent = 0;
        for (int attempt = 0; attempt < 3 && topic == null; attempt++) {
            String t = "expiry-" + UUID.randomUUID().toString().substring(0, 8);
            ApiTest.createTopic(t, 1, null);
            String b = "{\"records\":[{\"partition\":0,\"value\":1}],"
                    + "\"producer\":{\"id\":\"lambda-7\",\"epoch\":0,\"sequence\":0}}";
            long s = System.nanoTime();
            JsonPath first = produce(t, b);
            assertThat(first.getBoolean("duplicate")).isFalse();
            assertThat(first.getLong("offsets[0].offset")).isZero();
            JsonPath retry = produce(t, b);
            long took = System.nanoTime() - s;
            if (took < EXPIRATION.toNanos()) {
                assertThat(retry.getBoolean("duplicate")).as("retry answered %d ms after the first was sent",
                        took / 1_000_000).isTrue();
                topic = t;
                body = b;
                sent = s;
            }
        }
        assertThat(topic).as("a first request and its retry answered within %s", EXPIRATION).isNotNull();

        // Retry until the service has forgotten the producer (a retry before that changes nothing).
        long deadline = sent + Duration.ofSeconds(30).toNanos();
        JsonPath again = produce(topic, body);
        while (again.getBoolean("duplicate") && System.nanoTime() < deadline) {
            Thread.sleep(200);
            again = produce(topic, body);
        }
        assertThat(again.getBoolean("duplicate")).as("appended again after the expiration").isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - sent)).isGreaterThanOrEqualTo(EXPIRATION);
        assertThat(again.getLong("offsets[0].offset")).isEqualTo(1);
    }

    private static JsonPath produce(String topic, String body) {
        return ApiTest.produce(topic, body).then().statusCode(200).extract().jsonPath();
    }
}
