package io.tierlog.service;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.tierlog.service.read.AppendWatcher;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * Reads of a deleted topic: fetch, long-poll and offset lookups answer 404 {@code unknown-topic} at once, and the
 * long-polls and streams already waiting on it end as soon as it is deleted, not at their timeout. Every wait here
 * is bounded well below the 30 s long-poll, so a reader left waiting out its timeout fails the test.
 */
@QuarkusTest
class DeletedTopicReadsTest {
    private static final String BATCHES = "application/vnd.tierlog.record-batches";

    @Inject
    AppendWatcher watcher;
    @TestHTTPResource("/")
    URI base;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void readsOfADeletedTopicAnswerUnknownTopicAtOnce() {
        String topic = ApiTest.unique("gone");
        ApiTest.createTopic(topic, 1, null);
        ApiTest.produce(topic, "{\"records\":[{\"value\":1},{\"value\":2}]}").then().statusCode(200);
        given().delete("/v1/topics/" + topic).then().statusCode(204);

        String records = "/v1/topics/" + topic + "/partitions/0/records";
        for (String offset : List.of("0", "2", "5")) {
            ApiTest.expectProblem(given().get(records + "?offset=" + offset), 404, "unknown-topic");
            ApiTest.expectProblem(given().get(records + "?offset=" + offset + "&waitMs=30000"), 404, "unknown-topic");
            ApiTest.expectProblem(given().accept(BATCHES).get(records + "?offset=" + offset + "&waitMs=30000"), 404,
                    "unknown-topic");
        }
        ApiTest.expectProblem(given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=latest"), 404,
                "unknown-topic");
        ApiTest.expectProblem(given().get("/v1/topics/" + topic + "/partitions/0/stream?offset=0"), 404,
                "unknown-topic");
    }

    @Test
    void waitingLongPollsAndStreamsEndWhenTheirTopicIsDeleted() throws Exception {
        String topic = ApiTest.unique("gone-wait");
        ApiTest.createTopic(topic, 1, null);
        ApiTest.produce(topic, "{\"records\":[{\"value\":1}]}").then().statusCode(200);
        String partition = "/v1/topics/" + topic + "/partitions/0";

        int watchedBefore = watcher.watchedPartitions();
        CompletableFuture<HttpResponse<String>> jsonPoll = http.sendAsync(
                HttpRequest.newBuilder(base.resolve(partition + "/records?offset=1&waitMs=30000")).build(),
                HttpResponse.BodyHandlers.ofString());
        CompletableFuture<HttpResponse<String>> batchPoll = http.sendAsync(
                HttpRequest.newBuilder(base.resolve(partition + "/records?offset=1&waitMs=30000"))
                        .header("Accept", BATCHES).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(base.resolve(partition + "/stream?offset=1"))
                .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        CompletableFuture<List<String>> streamLines = CompletableFuture.supplyAsync(() -> readAll(stream.body()));

        // The readers are waiting on the partition (the watcher holds it) before the delete.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (watcher.watchedPartitions() <= watchedBefore && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertThat(watcher.watchedPartitions()).isGreaterThan(watchedBefore);
        assertThat(jsonPoll).isNotDone();

        given().delete("/v1/topics/" + topic).then().statusCode(204);

        for (CompletableFuture<HttpResponse<String>> poll : List.of(jsonPoll, batchPoll)) {
            HttpResponse<String> answer = poll.get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(404);
            assertThat(JsonPath.from(answer.body()).getString("type")).isEqualTo("unknown-topic");
        }
        List<String> lines = streamLines.get(10, TimeUnit.SECONDS);
        assertThat(lines).contains("event: error");
        String error = lines.get(lines.indexOf("event: error") + 1);
        assertThat(error).startsWith("data: ");
        assertThat(JsonPath.from(error.substring(6)).getString("type")).isEqualTo("unknown-topic");
        given().get(partition + "/records?offset=0").then().statusCode(404).body("type", equalTo("unknown-topic"));
    }

    /** Every line until the server ends the stream. */
    private static List<String> readAll(InputStream body) {
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lines.add(line);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return lines;
    }
}
