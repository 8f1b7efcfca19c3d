package io.tierlog.ingest.function;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.RecordBatchBodies;
import io.tierlog.ingest.function.harness.RecordBatchBodies.Producer;
import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binary produce path of {@link ProduceFunction} on a real {@link IngestService} over real segment files in a
 * temporary directory: events built in code (the artifact tests use event JSON), bodies built by kafka-clients.
 */
class ProduceFunctionBatchesTest {
    private static final String BATCHES = "application/vnd.tierlog.record-batches";
    private static final long T0 = 1_732_867_200_000L;

    @TempDir
    Path data;
    private ProduceFunction function;

    @BeforeEach
    void start() {
        IngestService ingest = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 4096),
                Clock.fixed(Instant.ofEpochMilli(T0 + 60_000), ZoneOffset.UTC), 0);
        ingest.topics().create("orders", 2, TopicConfig.DEFAULTS);
        function = new ProduceFunction(ingest);
    }

    @AfterEach
    void stop() {
        function.close();
    }

    @Test
    void appendsTheBatchToTheNamedPartitionAndAnswersTheJsonProduceAnswer() throws Exception {
        byte[] batch = RecordBatchBodies.batch(Producer.NONE, T0, "user-42", "a", "b", "c");

        APIGatewayV2HTTPResponse r = function.handle(event(Map.of("content-type", BATCHES), Map.of("partition", "1"),
                Base64.getEncoder().encodeToString(batch), true), "req-1");

        assertThat(r.getStatusCode()).as(r.getBody()).isEqualTo(200);
        assertThat(r.getHeaders()).containsEntry("Content-Type", "application/json");
        assertThat(r.getBody()).isEqualTo("{\"offsets\":[{\"partition\":1,\"offset\":0},{\"partition\":1,\"offset\":1},"
                + "{\"partition\":1,\"offset\":2}],\"duplicate\":false}");
        List<LogRecord> stored = new HotLog(data).reader(new TopicPartition("orders", 1)).read(0, null, 10, 1 << 20).records();
        assertThat(stored).extracting(rec -> new String(rec.value(), StandardCharsets.UTF_8)).containsExactly("a", "b", "c");
        assertThat(stored).extracting(LogRecord::offset).containsExactly(0L, 1L, 2L);
        assertThat(stored).extracting(LogRecord::timestamp).containsExactly(T0, T0 + 1, T0 + 2);
        assertThat(new String(stored.get(0).key(), StandardCharsets.UTF_8)).isEqualTo("user-42");
        assertThat(ends()).containsExactly(0, 3);
    }

    @Test
    void headerNamesAreMatchedInAnyCaseAndTheJsonPathIsUntouched() throws Exception {
        byte[] batch = RecordBatchBodies.batch(Producer.NONE, T0, null, "x");
        APIGatewayV2HTTPResponse binary = function.handle(event(Map.of("Content-Type", BATCHES + "; v=2"),
                Map.of("partition", "0"), Base64.getEncoder().encodeToString(batch), true), "req-1");
        assertThat(binary.getStatusCode()).as(binary.getBody()).isEqualTo(200);

        // A JSON request carrying ?partition= is still routed by its records, as before.
        APIGatewayV2HTTPResponse json = function.handle(event(Map.of("content-type", "application/json"),
                Map.of("partition", "0"), "{\"records\":[{\"value\":\"j\",\"partition\":1}]}", false), "req-2");
        assertThat(json.getStatusCode()).as(json.getBody()).isEqualTo(200);
        assertThat(json.getBody()).isEqualTo("{\"offsets\":[{\"partition\":1,\"offset\":0}],\"duplicate\":false}");
        assertThat(ends()).containsExactly(1, 1);
    }

    @Test
    void aProducerRetryAnswersTheOriginalOffsetsAsADuplicate() throws Exception {
        String body = Base64.getEncoder().encodeToString(
                RecordBatchBodies.batch(new Producer(7L, (short) 0, 0), T0, "k", "one", "two"));
        APIGatewayV2HTTPEvent e = event(Map.of("content-type", BATCHES), Map.of("partition", "0"), body, true);

        JsonNode first = Events.JSON.readTree(function.handle(e, "req-1").getBody());
        JsonNode retry = Events.JSON.readTree(function.handle(e, "req-2").getBody());

        assertThat(first.get("duplicate").asBoolean()).isFalse();
        assertThat(retry.get("duplicate").asBoolean()).isTrue();
        assertThat(retry.get("offsets")).isEqualTo(first.get("offsets"));
        assertThat(ends()).containsExactly(2, 0);
    }

    @Test
    void everyBadBinaryRequestIsProblemJsonNamingItsFieldAndChangesNothing() throws Exception {
        byte[] batch = RecordBatchBodies.batch(Producer.NONE, T0, null, "v1", "v2");
        String good = Base64.getEncoder().encodeToString(batch);
        Map<String, String> batches = Map.of("content-type", BATCHES);
        record Case(String name, APIGatewayV2HTTPEvent event, int status, String type, String field) {
        }
        List<Case> cases = List.of(
                new Case("no query", event(batches, null, good, true), 400, "bad-request", "partition"),
                new Case("no partition", event(batches, Map.of("p", "1"), good, true), 400, "bad-request", "partition"),
                new Case("bad partition", event(batches, Map.of("partition", "x"), good, true), 400, "bad-request", "partition"),
                new Case("unknown partition", event(batches, Map.of("partition", "2"), good, true), 404, "unknown-partition", null),
                new Case("stale CRC", event(batches, Map.of("partition", "0"),
                        Base64.getEncoder().encodeToString(RecordBatchBodies.withStaleCrc(batch)), true), 400, "bad-request", "body"),
                new Case("truncated", event(batches, Map.of("partition", "0"),
                        Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(batch, batch.length - 1)), true),
                        400, "bad-request", "body"),
                new Case("empty", event(batches, Map.of("partition", "0"), null, false), 400, "bad-request", "body"),
                new Case("not base64", event(batches, Map.of("partition", "0"), "AAAA", false), 400, "bad-request", "body"),
                new Case("bad base64", event(batches, Map.of("partition", "0"), "AA!A", true), 400, "bad-request", "body"),
                new Case("too large", event(batches, Map.of("partition", "0"),
                        Base64.getEncoder().encodeToString(new byte[4097]), true), 413, "request-too-large", null),
                new Case("unknown topic", withTopic(event(batches, Map.of("partition", "0"), good, true), "nope"),
                        404, "unknown-topic", null),
                new Case("other media type", event(Map.of("content-type", "application/octet-stream"),
                        Map.of("partition", "0"), good, true), 415, "unsupported-media-type", "Content-Type"));

        for (Case c : cases) {
            APIGatewayV2HTTPResponse r = function.handle(c.event(), "req-" + c.name());
            JsonNode problem = Events.JSON.readTree(r.getBody());
            assertThat(r.getStatusCode()).as(c.name() + ": " + r.getBody()).isEqualTo(c.status());
            assertThat(r.getHeaders()).as(c.name()).containsEntry("Content-Type", "application/problem+json");
            assertThat(problem.get("type").asText()).as(c.name()).isEqualTo(c.type());
            if (c.field() != null) {
                assertThat(problem.get("field").asText()).as(c.name()).isEqualTo(c.field());
            }
            assertThat(ends()).as(c.name()).containsExactly(0, 0);
        }
    }

    private long[] ends() {
        return new long[]{end(0), end(1)};
    }

    private long end(int partition) {
        return new HotLog(data).reader(new TopicPartition("orders", partition)).end(null).offset();
    }

    private static APIGatewayV2HTTPEvent event(Map<String, String> headers, Map<String, String> query, String body,
                                               boolean base64) {
        return withTopic(APIGatewayV2HTTPEvent.builder().withHeaders(new HashMap<>(headers)).withQueryStringParameters(query)
                .withBody(body).withIsBase64Encoded(base64).build(), "orders");
    }

    private static APIGatewayV2HTTPEvent withTopic(APIGatewayV2HTTPEvent e, String topic) {
        String path = "/v1/topics/" + topic + "/records";
        e.setRawPath(path);
        e.setRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder().withStage("$default").withRequestId("api-" + topic)
                .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod("POST").withPath(path).build())
                .build());
        return e;
    }
}
