package io.tierlog.service.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged application ({@code target/quarkus-app/quarkus-run.jar}) run as a process: stop it, delete
 * {@code tierlog.index-dir}, start it again, and every read answers exactly as before (the index is derived;
 * committed group offsets are durable in {@code __consumer_offsets} on the hot volume). Run by failsafe after
 * {@code package}.
 */
class IndexLossIT {
    @TempDir
    Path work;
    private PackagedService app;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void stop() throws Exception {
        if (app != null && app.process().isAlive()) {
            app.process().destroy();
            app.process().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void sameAnswersAfterTheIndexDirectoryIsDeleted() throws Exception {
        Path index = work.resolve("index");
        start(index, "run1");
        assertThat(send("POST", "/v1/topics", "{\"name\":\"orders\",\"partitions\":2,\"config\":{\"segment.bytes\":4096}}")
                .statusCode()).isEqualTo(201);
        for (int batch = 0; batch < 20; batch++) {
            StringBuilder body = new StringBuilder("{\"records\":[");
            for (int i = 0; i < 25; i++) {
                int n = batch * 25 + i;
                body.append(i == 0 ? "" : ",").append("{\"key\":\"user-").append(n % 13).append("\",\"value\":{\"n\":")
                        .append(n).append(",\"pad\":\"").append("p".repeat(40)).append("\"},\"timestamp\":")
                        .append(1_000_000 + n * 10L).append("}");
            }
            assertThat(send("POST", "/v1/topics/orders/records", body.append("]}").toString()).statusCode()).isEqualTo(200);
        }
        assertThat(send("PUT", "/v1/groups/billing/offsets",
                "{\"offsets\":[{\"topic\":\"orders\",\"partition\":0,\"offset\":17}]}").statusCode()).isEqualTo(204);
        Map<String, String> before = answers();
        assertThat(before.get("/v1/topics/orders/partitions/0/records?offset=100&maxRecords=50")).contains("\"offset\":100");
        assertThat(Files.list(index).findAny()).isPresent();

        stop();
        PackagedService.deleteTree(index);
        start(index, "run2");
        Map<String, String> after = answers();
        assertThat(after).isEqualTo(before);
        assertThat(index).isDirectory();
    }

    private Map<String, String> answers() throws Exception {
        List<String> paths = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            String base = "/v1/topics/orders/partitions/" + p;
            for (int offset : new int[]{0, 1, 57, 100, 199}) {
                paths.add(base + "/records?offset=" + offset + "&maxRecords=50");
            }
            paths.add(base + "/offsets?at=earliest");
            paths.add(base + "/offsets?at=latest");
            paths.add(base + "/offsets?timestamp=1002000");
            paths.add(base + "/offsets?timestamp=1004321");
        }
        paths.add("/v1/groups/billing/offsets");
        paths.add("/v1/groups/billing/lag");
        Map<String, String> out = new LinkedHashMap<>();
        for (String path : paths) {
            HttpResponse<String> r = send("GET", path, null);
            // lagMs is "now minus the first unconsumed record's timestamp": it grows between the two runs by design
            out.put(path, r.statusCode() + " " + r.body().replaceAll("\"lagMs\":\\d+", "\"lagMs\":<now-dependent>"));
        }
        return out;
    }

    private void start(Path index, String name) throws Exception {
        app = PackagedService.start(work.resolve(name), work.resolve("hot"), "-Dtierlog.index-dir=" + index,
                "-Dtierlog.cold.filesystem.dir=" + work.resolve("cold"));
        app.awaitReady(Duration.ofSeconds(120));
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        return app.send(http, method, path, body);
    }
}
