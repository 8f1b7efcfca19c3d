package io.tierlog.service;

import java.util.Set;
import java.time.Duration;
import jakarta.inject.Inject;
import io.tierlog.testkit.ManualClock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-principal byte-rate quotas over HTTP (here the principal is the client address, 127.0.0.1): the request that
 * takes a client over its quota goes through, the next is 429 {@code quota-exceeded} with {@code Retry-After} and
 * appends or returns nothing, and the same request after {@code Retry-After} goes through.
 */
@QuarkusTest
@TestProfile(QuotaApiTest.SmallQuotas.class)
public class QuotaApiTest {
    public static final int RATE = 20_000;

    /** The service's clock (ManualServiceClock): the quotas' buckets refill when the test moves it. */
    @Inject
    ManualClock clock;

    public static class SmallQuotas implements QuarkusTestProfile {
        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(ManualServiceClock.class);
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            String dir = "target/quota-test-" + UUID.randomUUID();
            return Map.of("tierlog.data-dir", dir + "/hot", "tierlog.index-dir", dir + "/index",
                    "tierlog.cold.filesystem.dir", dir + "/cold",
                    "tierlog.quota.produce-bytes-per-second", String.valueOf(RATE),
                    "tierlog.quota.fetch-bytes-per-second", String.valueOf(RATE));
        }
    }

    @Test
    void overTheProduceAndFetchQuotasIs429UntilRetryAfter() {
        String topic = "quota-" + UUID.randomUUID().toString().substring(0, 8);
        ApiTest.createTopic(topic, 1, null);
        // 50 kB: admitted (a request is never cut for its size), and 1.5 s of debt at 20 kB/s.
        String big = "{\"records\":[{\"partition\":0,\"value\":\"" + "x".repeat(50_000) + "\"}]}";
        assertThat(ApiTest.produce(topic, big).statusCode()).isEqualTo(200);

        Response refused = ApiTest.produce(topic, big);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(refused.jsonPath().getString("type")).isEqualTo("quota-exceeded");
        long retryAfter = Long.parseLong(refused.header("Retry-After"));
        assertThat(retryAfter).isBetween(1L, 3L);
        assertThat(latest(topic)).as("the refused request appended nothing").isEqualTo(1);

        clock.advance(Duration.ofSeconds(retryAfter)); // the contract under test: a retry after Retry-After goes through
        assertThat(ApiTest.produce(topic, big).statusCode()).isEqualTo(200);
        assertThat(latest(topic)).isEqualTo(2);

        // Fetch: the 100 kB answer is sent whole; the next fetch waits for it.
        String fetch = "/v1/topics/" + topic + "/partitions/0/records?offset=0";
        Response first = given().get(fetch);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.jsonPath().getList("records")).hasSize(2);
        Response overFetch = given().get(fetch);
        assertThat(overFetch.statusCode()).isEqualTo(429);
        assertThat(overFetch.jsonPath().getString("type")).isEqualTo("quota-exceeded");
        assertThat(overFetch.jsonPath().getString("quota")).isEqualTo("fetch");
        long fetchRetry = Long.parseLong(overFetch.header("Retry-After"));
        clock.advance(Duration.ofSeconds(fetchRetry));
        assertThat(given().get(fetch).statusCode()).isEqualTo(200);
    }

    private static long latest(String topic) {
        return given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=latest").then().statusCode(200)
                .extract().jsonPath().getLong("offset");
    }
}
