package io.tierlog.ingest.function;

import com.fasterxml.jackson.databind.JsonNode;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.Events.Response;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi.Outcome;
import io.tierlog.ingest.function.harness.RecordBatchBodies;
import io.tierlog.ingest.function.harness.RecordBatchBodies.Producer;
import io.tierlog.ingest.function.harness.RicFunctionProcess;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The artifact run exactly as Lambda's Java runtime runs it: unpacked into a task root, started by the real
 * aws-lambda-java-runtime-interface-client (2.10.1) with the handler string, talking to a loopback Runtime API
 * (next / response / error). One process serves every test in order, like one warm execution environment.
 */
class RuntimeInterfaceClientIT {
    static final Path WORK = Path.of("target", "it", "ric").toAbsolutePath();
    static final Path DATA = WORK.resolve("data");
    static LoopbackRuntimeApi runtimeApi;
    static RicFunctionProcess function;

    @BeforeAll
    static void start() throws Exception {
        ArtifactFreshClassLoaderIT.deleteRecursively(WORK);
        Path data = Files.createDirectories(DATA);
        new TopicStore(data, Clock.systemUTC()).create("orders", 2, TopicConfig.DEFAULTS);
        Path taskRoot = RicFunctionProcess.unpack(ArtifactFreshClassLoaderIT.JAR.toAbsolutePath(), WORK.resolve("task"));
        runtimeApi = new LoopbackRuntimeApi();
        function = RicFunctionProcess.start(taskRoot, runtimeApi.address(), Map.of(
                "TIERLOG_DATA_DIR", data.toString(), "TIERLOG_MAX_REQUEST_BYTES", "4096", "TIERLOG_FSYNC", "always"),
                WORK.resolve("function.log"));
    }

    @AfterAll
    static void stop() {
        if (function != null) {
            function.close();
        }
        if (runtimeApi != null) {
            runtimeApi.close();
        }
    }

    @Test
    void servesProduceRequestsAndErrorsThroughTheRuntimeApi() throws Exception {
        Response json = invoke("produce-json.json", "ric-json");
        assertThat(json.status()).as(log()).isEqualTo(200);
        assertThat(json.body().get("offsets")).hasSize(3);

        Response b64 = invoke("produce-base64-body.json", "ric-b64");
        assertThat(b64.status()).isEqualTo(200);

        byte[] batch = RecordBatchBodies.batch(Producer.NONE, 1732867200000L, null, "b0", "b1");
        Response batches = invokeJson(Events.recordBatches("orders", 0, batch, "ric-api-batches"), "ric-batches");
        assertThat(batches.status()).as("%s%n%s", batches.body(), log()).isEqualTo(200);
        assertThat(batches.body().get("offsets")).hasSize(2);
        long base = batches.body().get("offsets").get(0).get("offset").asLong();
        List<LogRecord> stored = new HotLog(DATA).reader(new TopicPartition("orders", 0)).read(base, null, 2, 1 << 20)
                .records();
        assertThat(stored).extracting(rec -> new String(rec.value(), StandardCharsets.UTF_8)).containsExactly("b0", "b1");

        long[] endsBeforeBadBatch = {end(0), end(1)};
        Response badBatch = invoke("bad-record-batches-body.json", "ric-bad-batches");
        assertThat(badBatch.status()).isEqualTo(400);
        assertThat(badBatch.body().get("field").asText()).isEqualTo("body");
        assertThat(new long[]{end(0), end(1)}).isEqualTo(endsBeforeBadBatch);

        Response first = invoke("produce-producer-seq0.json", "ric-p1");
        Response retry = invoke("produce-producer-seq0.json", "ric-p2");
        assertThat(retry.body().get("duplicate").asBoolean()).isTrue();
        assertThat(retry.body().get("offsets")).isEqualTo(first.body().get("offsets"));

        List<String> types = new ArrayList<>();
        for (String e : List.of("bad-json.json", "not-found-path.json", "method-not-allowed.json",
                "request-too-large-base64.json", "unknown-topic.json", "unsupported-media-type.json")) {
            Response r = invoke(e, "ric-" + e);
            assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
            types.add(r.status() + " " + r.body().get("type").asText());
        }
        assertThat(types).containsExactly("400 bad-request", "404 not-found", "405 method-not-allowed",
                "413 request-too-large", "404 unknown-topic", "415 unsupported-media-type");
        assertThat(runtimeApi.initError()).isNotDone();
        assertThat(function.isAlive()).isTrue();
    }

    @Test
    void logsAreJsonLinesCarryingTheLambdaRequestId() throws Exception {
        invoke("unknown-topic.json", "ric-log-check");

        JsonNode line = null;
        for (String l : log().split("\n")) {
            if (l.startsWith("{") && l.contains("\"ric-log-check\"")) {
                line = Events.JSON.readTree(l);
            }
        }
        assertThat(line).as(log()).isNotNull();
        assertThat(line.get("requestId").asText()).isEqualTo("ric-log-check");
        assertThat(line.get("apiRequestId").asText()).isEqualTo("Jj0unknown=");
        assertThat(line.get("level").asText()).isEqualTo("INFO");
        assertThat(line.get("type").asText()).isEqualTo("unknown-topic");
    }

    private static Response invoke(String event, String requestId) throws Exception {
        return invokeJson(Events.load(event), requestId);
    }

    private static Response invokeJson(String eventJson, String requestId) throws Exception {
        Outcome o = runtimeApi.invoke(eventJson, requestId).get(60, TimeUnit.SECONDS);
        assertThat(o.error()).as("runtime reported an error: %s%n%s", o.body(), log()).isFalse();
        return Events.response(o.body());
    }

    private static long end(int partition) {
        return new HotLog(DATA).reader(new TopicPartition("orders", partition)).end(null).offset();
    }

    private static String log() {
        try {
            return function.logText();
        } catch (java.io.IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
