package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.testkit.TmpfsMount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The packaged service with its hot volume on a real 8 MiB tmpfs (skipped where this machine cannot mount one):
 * <ol>
 *   <li>filled past {@code tierlog.hot.max-used-ratio} (0.90 by default): produce answers 503 {@code hot-tier-full}
 *       with {@code Retry-After}, readiness stays 200 and its {@code tierlog-hot-tier} check names the reason,
 *       fetch still answers; space freed, produce is accepted again by itself;</li>
 *   <li>restarted with the ratio check off ({@code 1.0}) and the volume filled to the last byte: the append fails
 *       with ENOSPC and is answered 503 {@code hot-tier-full} (it was a 500), nothing of it is kept; space freed,
 *       produce goes on;</li>
 *   <li>every acknowledged record is read back, at its offset, after each restart.</li>
 * </ol>
 */
class HotTierFullIT {
    private static final long VOLUME_BYTES = 8L * 1024 * 1024;
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path work = Path.of("target", "it", "hot-tier-full").toAbsolutePath();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private TmpfsMount mount;
    private PackagedService app;
    private final List<String> acked = new ArrayList<>();

    @BeforeEach
    void mountSmallVolume() throws IOException {
        PackagedService.deleteTree(work);
        Files.createDirectories(work);
        mount = TmpfsMount.tryMount(work.resolve("volume"), VOLUME_BYTES).orElse(null);
        assumeTrue(mount != null, "cannot mount a tmpfs here (needs Linux and root)");
    }

    @AfterEach
    void stopAndUnmount() throws Exception {
        if (app != null && app.process().isAlive()) {
            app.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        if (mount != null) {
            mount.close();
        }
    }

    @Test
    @Timeout(600)
    void fullVolumeAnswers503AndRecoversLosingNothingAcknowledged() throws Exception {
        Path hot = mount.dir().resolve("hot");
        Path filler = mount.dir().resolve("filler");
        app = start(hot);
        assertThat(send("POST", "/v1/topics", "{\"name\":\"t\",\"partitions\":1,\"config\":{\"segment.bytes\":1048576}}")
                .statusCode()).isEqualTo(201);

        // 1. Past the used ratio.
        fill(filler, 2L * 1024 * 1024);
        HttpResponse<String> refused = produceUntilRefused();
        // The volume is sampled once a second, and a fast producer may fill it to the last byte in between: that
        // append fails (ENOSPC, reason no-space), is truncated, and the next sample refuses on the ratio.
        for (int i = 0; i < 10 && JSON.readTree(refused.body()).get("reason").asText().equals("no-space"); i++) {
            Thread.sleep(1000L * Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()));
            refused = produce(acked.size());
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
        }
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        JsonNode problem = JSON.readTree(refused.body());
        assertThat(problem.get("type").asText()).isEqualTo("hot-tier-full");
        assertThat(problem.get("reason").asText()).isEqualTo("used-ratio");
        assertThat(refused.body()).doesNotContain(hot.toString());
        HttpResponse<String> ready = send("GET", "/q/health/ready", null);
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        JsonNode check = check(ready, "tierlog-hot-tier");
        assertThat(check.get("data").get("produceAccepted").asBoolean()).isFalse();
        assertThat(check.get("data").get("reason").asText()).isEqualTo("used-ratio");
        assertThat(send("GET", "/v1/topics/t/partitions/0/records?offset=0&maxRecords=1", null).statusCode())
                .isEqualTo(200);
        HttpResponse<String> metrics = send("GET", "/q/metrics", null);
        assertThat(metrics.body()).contains("tierlog_produce_rejected_total{reason=\"used-ratio\"}")
                .contains("tierlog_hot_tier_full 1.0");

        Files.delete(filler);
        produceAfterRecovery();
        assertThat(check(send("GET", "/q/health/ready", null), "tierlog-hot-tier").get("data").get("produceAccepted")
                .asBoolean()).isTrue();
        assertAllAckedReadBack();

        // 2. Restart with the ratio check off; fill the volume to the last byte: a real ENOSPC on the append.
        restart(hot, "-Dtierlog.hot.max-used-ratio=1.0");
        assertAllAckedReadBack();
        fill(filler, VOLUME_BYTES);
        HttpResponse<String> noSpace = produce(acked.size());
        assertThat(noSpace.statusCode()).as(noSpace.body()).isEqualTo(503);
        assertThat(JSON.readTree(noSpace.body()).get("reason").asText()).isEqualTo("no-space");
        assertThat(noSpace.headers().firstValue("Retry-After")).isPresent();
        assertThat(send("GET", "/q/health/ready", null).statusCode()).isEqualTo(200);
        Files.delete(filler);
        produceAfterRecovery();

        // 3. Nothing acknowledged is lost across a restart; nothing refused was kept.
        restart(hot);
        assertAllAckedReadBack();
        assertThat(Files.readString(app.log())).doesNotContain(" ERROR ");
    }

    private PackagedService start(Path hot, String... properties) throws Exception {
        PackagedService s = PackagedService.start(work, hot, properties);
        s.awaitReady(STARTUP);
        return s;
    }

    private void restart(Path hot, String... properties) throws Exception {
        app.process().destroy();
        assertThat(app.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(app.log())).as("backpressure is no ERROR: " + app.log()).doesNotContain(" ERROR ");
        Files.move(app.log(), work.resolve("service-" + System.nanoTime() + ".log"));
        app = start(hot, properties);
    }

    /** Produces ~100 KiB records until one is refused; every 200 is remembered as acknowledged. */
    private HttpResponse<String> produceUntilRefused() throws Exception {
        for (int i = 0; i < 200; i++) {
            HttpResponse<String> r = produce(acked.size());
            if (r.statusCode() != 200) {
                assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
                return r;
            }
        }
        throw new AssertionError("never refused");
    }

    /** Produce is refused until the next volume sample (at most a second): retry as Retry-After says. */
    private void produceAfterRecovery() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            HttpResponse<String> r = produce(acked.size());
            if (r.statusCode() == 200) {
                return;
            }
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(System.nanoTime()).as("recovered within 30 s").isLessThan(deadline);
            Thread.sleep(1000L * Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow()));
        }
    }

    private HttpResponse<String> produce(int n) throws Exception {
        String value = n + "-" + "x".repeat(100 * 1024);
        HttpResponse<String> r = send("POST", "/v1/topics/t/records", "{\"records\":[{\"value\":\"" + value + "\"}]}");
        if (r.statusCode() == 200) {
            assertThat(JSON.readTree(r.body()).get("offsets").get(0).get("offset").asLong()).isEqualTo(acked.size());
            acked.add(value);
        }
        return r;
    }

    private void assertAllAckedReadBack() throws Exception {
        List<String> read = new ArrayList<>();
        while (read.size() < acked.size()) {
            HttpResponse<String> r = send("GET", "/v1/topics/t/partitions/0/records?offset=" + read.size()
                    + "&maxBytes=8388608", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode records = JSON.readTree(r.body()).get("records");
            assertThat(records.size()).isPositive();
            for (JsonNode rec : records) {
                assertThat(rec.get("offset").asLong()).isEqualTo(read.size());
                read.add(rec.get("value").asText());
            }
        }
        assertThat(read).containsExactlyElementsOf(acked);
        JsonNode end = JSON.readTree(send("GET", "/v1/topics/t/partitions/0/offsets?at=latest", null).body());
        assertThat(end.get("offset").asLong()).as("nothing beyond the acknowledged records").isEqualTo(acked.size());
    }

    private static JsonNode check(HttpResponse<String> health, String name) throws IOException {
        for (JsonNode c : JSON.readTree(health.body()).get("checks")) {
            if (c.get("name").asText().equals(name)) {
                return c;
            }
        }
        throw new AssertionError("no check " + name + " in " + health.body());
    }

    /** Writes zeros until {@code bytes} or until the volume is full, whichever comes first. */
    private static void fill(Path file, long bytes) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long written = 0; written < bytes; written += chunk.length) {
                out.write(chunk);
            }
        } catch (IOException full) {
            if (bytes < VOLUME_BYTES) {
                throw full;
            }
        }
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        return app.send(http, method, path, body);
    }
}
