package io.tierlog.service;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.tiering.TieredStorage;
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
import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cold tier over HTTP, on the embedded filesystem store: records tiered and evicted from the hot volume are
 * fetched, streamed and looked up by timestamp exactly as before, a replay from offset 0 crosses cold → hot →
 * live with no gap or duplicate, and DELETE removes the topic's objects. Passes are triggered directly (they are
 * serialized with the scheduler's) so the test does not wait for intervals.
 */
@QuarkusTest
class ColdTierHttpTest {
    @Inject
    TieredStorage tiered;
    @Inject
    ObjectStore coldStore;
    @TestHTTPResource("/")
    URI base;

    @Test
    void replayFromZeroCrossesColdHotAndLiveOverHttp() throws Exception {
        String topic = createTieringTopic("cold");
        String pad = "x".repeat(150);
        // Recent timestamps: the default retention.ms (7 days) would otherwise delete the cold segments at once.
        long t0 = System.currentTimeMillis() - 60_000;
        for (int req = 0; req < 60; req++) {
            StringBuilder body = new StringBuilder("{\"records\":[");
            for (int i = 0; i < 5; i++) {
                body.append(i == 0 ? "" : ",").append("{\"partition\":0,\"timestamp\":").append(t0 + req)
                        .append(",\"value\":{\"n\":").append(req * 5 + i).append(",\"pad\":\"").append(pad).append("\"}}");
            }
            given().contentType(ContentType.JSON).body(body.append("]}").toString())
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        }
        List<String> expected = fetchAll(topic, 0, 1000);
        assertThat(expected).hasSize(300);

        var tiering = tiered.runTieringPass();
        var retention = tiered.runRetentionPass();

        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).as("%s %s %s", tiering, retention,
                state.prettify()).isGreaterThan(3);
        assertThat(state.getLong("partitionStates[0].coldBytes")).isGreaterThan(0);
        assertThat(state.getInt("partitionStates[0].segments.hot")).isEqualTo(1);
        long hotStart = state.getLong("partitionStates[0].hotStartOffset");
        assertThat(hotStart).isGreaterThan(200);
        assertThat(state.getLong("partitionStates[0].logStartOffset")).isZero();
        assertThat(state.getLong("partitionStates[0].highWatermark")).isEqualTo(300);

        // Fetch: same records, in small steps so many reads end at a segment or tier boundary.
        assertThat(fetchAll(topic, 0, 7)).isEqualTo(expected);
        assertThat(fetchAll(topic, 123, 1000)).isEqualTo(expected.subList(123, 300));
        // Offset by timestamp finds a cold record; earliest is the log start.
        given().get("/v1/topics/" + topic + "/partitions/0/offsets?timestamp=" + (t0 + 10))
                .then().statusCode(200).body("offset", org.hamcrest.Matchers.equalTo(50));
        given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=earliest")
                .then().statusCode(200).body("offset", org.hamcrest.Matchers.equalTo(0));

        // Stream: replay from 0 through cold and hot, then a live append arrives on the same connection.
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=0"))
                .header("Accept", "text/event-stream").build();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        List<Long> ids = new ArrayList<>();
        List<String> values = new ArrayList<>();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String line;
            boolean liveSent = false;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith("id:")) {
                    ids.add(Long.parseLong(line.substring(3).trim()));
                } else if (line.startsWith("data:")) {
                    values.add(JsonPath.from(line.substring(5).trim()).getString("value.n"));
                    if (ids.size() == 300 && !liveSent) {
                        liveSent = true;
                        given().contentType(ContentType.JSON).body("{\"records\":[{\"partition\":0,\"value\":{\"n\":300}}]}")
                                .post("/v1/topics/" + topic + "/records").then().statusCode(200);
                    }
                    if (ids.size() == 301) {
                        break;
                    }
                }
            }
        }
        for (int i = 0; i < ids.size(); i++) {
            assertThat(ids.get(i)).isEqualTo(i);
            assertThat(values.get(i)).isEqualTo(String.valueOf(i));
        }
        assertThat(ids).hasSize(301);

        // DELETE removes the topic's objects from the cold tier too.
        assertThat(coldStore.listAll(topic + "/").count()).isGreaterThan(0);
        given().delete("/v1/topics/" + topic).then().statusCode(204);
        assertThat(coldStore.listAll(topic + "/").count()).isZero();
    }

    /**
     * Creates a one-partition topic named {@code prefix-<random>} whose segments roll every 4 KiB and leave the hot
     * tier as soon as they are tiered ({@code local.retention.bytes=0}), so a tiering and a retention pass make all
     * but the active segment cold. Returns its name.
     */
    static String createTieringTopic(String prefix) {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON)
                .body("{\"name\":\"" + topic + "\",\"partitions\":1,\"config\":{\"segment.bytes\":4096,"
                        + "\"local.retention.bytes\":0}}")
                .post("/v1/topics").then().statusCode(201);
        return topic;
    }

    /** Fetches from {@code from} to the high watermark; returns each record's value.n. */
    static List<String> fetchAll(String topic, long from, int maxRecords) {
        List<String> out = new ArrayList<>();
        long next = from;
        while (true) {
            JsonPath page = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=" + next
                    + "&maxRecords=" + maxRecords).then().statusCode(200).extract().jsonPath();
            List<Map<String, Object>> records = page.getList("records");
            // From the parsed list: a JsonPath expression per field costs milliseconds (Groovy) per record.
            for (int i = 0; i < records.size(); i++) {
                assertThat(((Number) records.get(i).get("offset")).longValue()).isEqualTo(next + i);
                out.add(String.valueOf(((Map<?, ?>) records.get(i).get("value")).get("n")));
            }
            next = page.getLong("nextOffset");
            if (next >= page.getLong("highWatermark")) {
                return out;
            }
        }
    }
}
