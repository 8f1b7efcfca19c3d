package io.tierlog.bench.cold;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.bench.compare.Payload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Fills a one-partition topic over the service's HTTP API and waits until its sealed segments are in S3 and gone
 * from the hot volume. Used from one thread.
 */
final class TopicFiller {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final URI base;

    TopicFiller(URI base) {
        this.base = base;
    }

    /**
     * Creates {@code topic} with one partition, segments of {@code segmentBytes} and a hot retention of zero (both
     * {@code local.retention.ms} and {@code local.retention.bytes}), so every sealed segment is evicted from the hot
     * volume as soon as its upload is committed. Only the active segment stays hot.
     */
    void create(String topic, long segmentBytes) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("name", topic).put("partitions", 1);
        body.putObject("config").put("segment.bytes", segmentBytes).put("local.retention.ms", 0)
                .put("local.retention.bytes", 0);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/v1/topics"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException("create topic " + topic + " answered " + r.statusCode() + ": " + r.body());
        }
    }

    /**
     * Produces {@code records} values of the payload, {@code batch} per synchronous request ({@code encoding=json},
     * unkeyed; the topic has one partition). Returns the number of records.
     */
    long produce(String topic, long records, int batch, Payload payload) throws Exception {
        URI uri = base.resolve("/v1/topics/" + topic + "/records");
        for (long sent = 0; sent < records; ) {
            int n = (int) Math.min(batch, records - sent);
            StringBuilder sb = new StringBuilder(n * (payload.valueBytes() + 12) + 48);
            sb.append("{\"encoding\":\"json\",\"records\":[");
            for (int i = 0; i < n; i++) {
                sb.append(i == 0 ? "" : ",").append("{\"value\":").append(payload.jsonText(sent + i)).append('}');
            }
            sb.append("]}");
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(sb.toString().getBytes(StandardCharsets.US_ASCII)))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("produce to " + topic + " answered " + r.statusCode() + ": " + r.body());
            }
            sent += n;
        }
        return records;
    }

    /** Partition 0's state from {@code GET /v1/topics/{t}}. */
    JsonNode state(String topic) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("describe " + topic + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body()).path("partitionStates").path(0);
    }

    /**
     * Polls partition 0's state until everything but the active segment is cold: at most one hot segment, at least
     * one cold one, and the hot tier starting where the cold one ends ({@code hotStartOffset > 0}), or everything
     * cold ({@code hotStartOffset == highWatermark}). Returns that state.
     */
    JsonNode awaitCold(String topic, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode s;
        while (true) {
            s = state(topic);
            long hotStart = s.path("hotStartOffset").asLong();
            boolean sealedAreCold = s.path("segments").path("hot").asInt() <= 1
                    && s.path("segments").path("cold").asInt() > 0 && hotStart > 0;
            if (sealedAreCold || (hotStart > 0 && hotStart == s.path("highWatermark").asLong())) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("sealed segments of " + topic + " not tiered and evicted within "
                        + timeout + "; state " + s);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
    }
}
