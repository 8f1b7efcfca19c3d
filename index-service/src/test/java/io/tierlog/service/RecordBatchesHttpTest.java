package io.tierlog.service;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binary read format ({@code Accept: application/vnd.tierlog.record-batches}) over real sockets, decoded with
 * kafka-clients as a Kafka consumer would: fetches and the stream return the stored batches across cold and hot
 * tiers and live appends, with the same records as the JSON fetch; errors stay problem+json.
 */
@QuarkusTest
class RecordBatchesHttpTest {
    @Inject
    TieredStorage tiered;
    @Inject
    PooledDirectMemory directMemory;
    @Inject
    AppendWatcher watcher;
    @TestHTTPResource("/")
    URI base;

    /** Jackson rather than RestAssured's JsonPath for record values: JsonPath took 10 ms per record. */
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void fetchAndStreamServeStoredBatchesAcrossColdHotAndLive() throws Exception {
        String topic = ColdTierHttpTest.createTieringTopic("batches");
        long t0 = System.currentTimeMillis() - 60_000;
        String pad = "y".repeat(150);
        for (int req = 0; req < 60; req++) {
            StringBuilder body = new StringBuilder("{\"records\":[");
            for (int i = 0; i < 5; i++) {
                body.append(i == 0 ? "" : ",").append("{\"partition\":0,\"key\":\"k").append(req * 5 + i)
                        .append("\",\"timestamp\":").append(t0 + req).append(",\"value\":{\"n\":").append(req * 5 + i)
                        .append(",\"pad\":\"").append(pad).append("\"}}");
            }
            given().contentType(ContentType.JSON).body(body.append("]}").toString())
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        }
        List<String> expected = ColdTierHttpTest.fetchAll(topic, 0, 1000);
        assertThat(expected).hasSize(300);
        tiered.runTieringPass();
        tiered.runRetentionPass();
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).isGreaterThan(3);
        assertThat(state.getLong("partitionStates[0].hotStartOffset")).isGreaterThan(200);

        // Paged fetches, small pages so reads end at batch, segment and tier boundaries.
        assertThat(fetchAllBatches(topic, 0, 7)).isEqualTo(expected);
        // From inside a batch: the first batch begins below the offset asked for; the client skips to it.
        HttpResponse<byte[]> mid = fetch(topic, "offset=123&maxRecords=1");
        assertThat(mid.statusCode()).isEqualTo(200);
        List<RecordBatch> batches = batches(mid.body());
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).baseOffset()).isEqualTo(120);
        assertThat(mid.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET)).hasValue("125");
        assertThat(mid.headers().firstValue(RecordBatchesMedia.HIGH_WATERMARK)).hasValue("300");
        assertThat(mid.headers().firstValue(RecordBatchesMedia.LOG_START_OFFSET)).hasValue("0");
        assertThat(values(batches, 123)).isEqualTo(expected.subList(123, 125));
        // At the end: an empty body after a short long-poll, with the extent in the headers.
        HttpResponse<byte[]> atEnd = fetch(topic, "offset=300&waitMs=20");
        assertThat(atEnd.statusCode()).isEqualTo(200);
        assertThat(atEnd.body()).isEmpty();
        assertThat(atEnd.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET)).hasValue("300");

        // Stream: replay from 0 across cold and hot, then a live append arrives on the same connection.
        HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(
                base.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=0"))
                .header("Accept", RecordBatchesMedia.TYPE).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        assertThat(stream.headers().firstValue("Content-Type")).hasValue(RecordBatchesMedia.TYPE);
        List<String> streamed = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(stream.body())) {
            while (streamed.size() < 301) {
                RecordBatch batch = nextBatch(in);
                streamed.addAll(values(List.of(batch), streamed.size()));
                if (streamed.size() == 300) {
                    given().contentType(ContentType.JSON).body("{\"records\":[{\"partition\":0,\"value\":{\"n\":300}}]}")
                            .post("/v1/topics/" + topic + "/records").then().statusCode(200);
                }
            }
        }
        List<String> withLive = new ArrayList<>(expected);
        withLive.add("300");
        assertThat(streamed).isEqualTo(withLive);
    }

    @Test
    void compressedBatchesAreServedAsSentAndDecompressedForJsonAcrossTiers() throws Exception {
        String topic = ColdTierHttpTest.createTieringTopic("zipped");
        List<String> expected = new ArrayList<>();
        String[] codecs = {"gzip", "snappy", "lz4", "zstd"};
        for (int req = 0; req < 40; req++) {
            List<String> values = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                int n = req * 10 + i;
                values.add("{\"n\":" + n + ",\"pad\":\"" + "z".repeat(400) + "\"}");
                expected.add(String.valueOf(n));
            }
            HttpResponse<String> r = produce(topic, "partition=0",
                    kafkaBatch(Compression.of(codecs[req % codecs.length]).build(), values));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        // Each batch is stored compressed: 40 batches of 4 KiB of values fit in a few segments of 4096 bytes.
        assertThat(ColdTierHttpTest.fetchAll(topic, 0, 1000)).isEqualTo(expected);
        tiered.runTieringPass();
        tiered.runRetentionPass();
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getInt("partitionStates[0].segments.cold")).isPositive();
        assertThat(state.getLong("partitionStates[0].hotStartOffset")).isPositive();
        assertThat(state.getLong("partitionStates[0].coldBytes") + state.getLong("partitionStates[0].hotBytes"))
                .as("bytes stored").isLessThan(40 * 10 * 400 / 4);

        // JSON decompresses them, from the cold tier and the hot one; the binary media type passes them on as sent.
        assertThat(ColdTierHttpTest.fetchAll(topic, 0, 7)).isEqualTo(expected);
        assertThat(fetchAllBatches(topic, 0, 15)).isEqualTo(expected);
        HttpResponse<byte[]> first = fetch(topic, "offset=0&maxRecords=40");
        assertThat(batches(first.body())).extracting(b -> b.compressionType().name)
                .containsExactly("gzip", "snappy", "lz4", "zstd");
    }

    @Test
    void badRequestsStayProblemJsonAndJsonStaysTheDefault() throws Exception {
        String topic = "batches-bad-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}")
                .post("/v1/topics").then().statusCode(201);
        given().contentType(ContentType.JSON).body("{\"records\":[{\"value\":1},{\"value\":2}]}")
                .post("/v1/topics/" + topic + "/records").then().statusCode(200);

        HttpResponse<byte[]> encoding = fetch(topic, "offset=0&encoding=base64");
        assertThat(encoding.statusCode()).isEqualTo(400);
        assertThat(encoding.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(JsonPath.from(new String(encoding.body(), StandardCharsets.UTF_8)).getString("detail"))
                .contains("encoding");
        HttpResponse<byte[]> outOfRange = fetch(topic, "offset=5");
        assertThat(outOfRange.statusCode()).isEqualTo(416);
        assertThat(outOfRange.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(JsonPath.from(new String(outOfRange.body(), StandardCharsets.UTF_8)).getLong("highWatermark"))
                .isEqualTo(2);
        HttpResponse<byte[]> streamEncoding = http.send(HttpRequest.newBuilder(
                base.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=0&encoding=json"))
                .header("Accept", RecordBatchesMedia.TYPE).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(streamEncoding.statusCode()).isEqualTo(400);

        // Any other Accept gets JSON, as before.
        for (String accept : List.of("*/*", "application/json")) {
            HttpResponse<String> json = http.send(HttpRequest.newBuilder(
                    base.resolve("/v1/topics/" + topic + "/partitions/0/records?offset=0")).header("Accept", accept)
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(json.statusCode()).isEqualTo(200);
            assertThat(JsonPath.from(json.body()).getList("records")).hasSize(2);
        }
    }

    @Test
    void producedBatchesAreAppendedAsSentAndBadOnesChangeNothing() throws Exception {
        String topic = "batches-in-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":2}")
                .post("/v1/topics").then().statusCode(201);
        given().contentType(ContentType.JSON).body("{\"records\":[{\"partition\":1,\"value\":{\"n\":0}}]}")
                .post("/v1/topics/" + topic + "/records").then().statusCode(200);
        byte[] batch = kafkaBatch(List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}"));

        HttpResponse<String> ok = produce(topic, "partition=1", batch);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(JsonPath.from(ok.body()).getList("offsets.offset", Integer.class)).containsExactly(1, 2, 3);
        assertThat(JsonPath.from(ok.body()).getList("offsets.partition", Integer.class)).containsExactly(1, 1, 1);
        // Readable at once by both formats, after the JSON-produced record, with dense offsets.
        given().get("/v1/topics/" + topic + "/partitions/1/records?offset=0").then().statusCode(200)
                .body("records.value.n", org.hamcrest.Matchers.contains(0, 1, 2, 3));
        HttpResponse<byte[]> back = fetch(topic, 1, "offset=1");
        List<RecordBatch> stored = batches(back.body());
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0).baseOffset()).isEqualTo(1);
        assertThat(values(stored, 1)).containsExactly("1", "2", "3");

        // A produce without any Content-Type is 415 (api.md): a browser may send such a body cross-origin unasked.
        HttpResponse<String> untyped = http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic + "/records"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"records\":[{\"partition\":0,\"value\":1}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(untyped.statusCode()).as(untyped.body()).isEqualTo(415);

        // Every bad request answers 4xx problem+json naming its field, and appends nothing.
        byte[] corrupt = batch.clone();
        corrupt[corrupt.length - 2] ^= 0x10;
        assertProblem(produce(topic, "partition=1", corrupt), 400, "body");
        assertProblem(produce(topic, "", batch), 400, "partition");
        assertProblem(produce(topic, "partition=x", batch), 400, "partition");
        assertProblem(produce(topic, "partition=2", batch), 404, "partition");
        assertProblem(produce(topic, "partition=1", new byte[]{1, 2, 3}), 400, "body");
        assertThat(given().get("/v1/topics/" + topic + "/partitions/1/offsets?at=latest").then().statusCode(200)
                .extract().jsonPath().getLong("offset")).isEqualTo(4);
        // the untyped produce appended nothing
        assertThat(given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=latest").then().statusCode(200)
                .extract().jsonPath().getLong("offset")).isEqualTo(0);
    }

    @Test
    void producedBodiesOfAnyFramingAreAppendedOnceAndGiveTheirMemoryBack() throws Exception {
        String topic = "batches-framing-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}")
                .post("/v1/topics").then().statusCode(201);
        // 3 MB in one request: many network chunks gathered into one sized buffer.
        List<String> big = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            big.add("{\"n\":" + i + ",\"pad\":\"" + "x".repeat(1000) + "\"}");
        }
        HttpResponse<String> sized = produce(topic, "partition=0", kafkaBatch(big));
        assertThat(sized.statusCode()).as(sized.body()).isEqualTo(200);
        assertThat(JsonPath.from(sized.body()).getList("offsets")).hasSize(3000);

        // Chunked (no Content-Length): gathered on the heap, the same append.
        HttpResponse<String> chunked = http.send(HttpRequest.newBuilder(
                        base.resolve("/v1/topics/" + topic + "/records?partition=0"))
                .header("Content-Type", RecordBatchesMedia.TYPE)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(
                        kafkaBatch(List.of("{\"n\":3000}", "{\"n\":3001}"))))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(chunked.statusCode()).as(chunked.body()).isEqualTo(200);
        assertThat(JsonPath.from(chunked.body()).getList("offsets.offset", Integer.class)).containsExactly(3000, 3001);

        // A chunked body over max.request.bytes is refused as it arrives, and appends nothing.
        byte[] huge = new byte[9 * 1024 * 1024];
        HttpResponse<String> tooLarge = http.send(HttpRequest.newBuilder(
                        base.resolve("/v1/topics/" + topic + "/records?partition=0"))
                .header("Content-Type", RecordBatchesMedia.TYPE)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(huge))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertProblem(tooLarge, 413, "request-too-large");

        assertThat(fetchAllBatches(topic, 0, 10_000)).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, 3002).mapToObj(Integer::toString).toList());
        awaitHeld(held -> held == 0, "every produce body's buffer to be given back");
    }

    @Test
    void longPollsWakeOnAppendAndEveryReadGivesItsMemoryBackEvenWhenTheClientLeaves() throws Exception {
        String topic = "batches-mem-" + UUID.randomUUID().toString().substring(0, 8);
        given().contentType(ContentType.JSON).body("{\"name\":\"" + topic + "\",\"partitions\":1}")
                .post("/v1/topics").then().statusCode(201);
        // About 12 MiB in batches of 100 records of 1 KiB: more than a stream's write queue, the service's socket send
        // buffer (autotuned up to tcp_wmem's maximum, 4 MiB here) and the client's fixed 64 KiB receive buffer hold.
        String value = "v".repeat(1000);
        int records = 12_000;
        for (int req = 0; req < records / 100; req++) {
            byte[] batch = kafkaBatch(java.util.Collections.nCopies(100, "{\"n\":" + req + ",\"pad\":\"" + value + "\"}"));
            assertThat(produce(topic, "partition=0", batch).statusCode()).isEqualTo(200);
        }

        // A long-poll at the end answers with the batch that wakes it.
        var polled = http.sendAsync(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic
                        + "/partitions/0/records?offset=" + records + "&waitMs=20000")).header("Accept", RecordBatchesMedia.TYPE)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        awaitWaiting(polled);
        assertThat(produce(topic, "partition=0", kafkaBatch(List.of("{\"n\":\"late\"}"))).statusCode()).isEqualTo(200);
        HttpResponse<byte[]> woken = polled.get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(woken.statusCode()).isEqualTo(200);
        assertThat(values(batches(woken.body()), records)).containsExactly("late");
        assertThat(woken.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET)).hasValue(Integer.toString(records + 1));

        // Problems from the route name their field, like the JSON fetch's.
        assertProblemBytes(fetch(topic, "maxRecords=5"), 400, "offset");
        assertProblemBytes(fetch(topic, "offset=0&maxBytes=0"), 400, "maxBytes");
        assertProblemBytes(fetch(topic, 7, "offset=0"), 404, "partition");

        // Large fetches, then a stream whose client reads a few bytes and hangs up while the service still has
        // batches queued for it: all the memory comes back.
        long next = 0;
        while (next < records + 1) {
            List<RecordBatch> page = batches(fetch(topic, "offset=" + next + "&maxRecords=10000&maxBytes=4194304").body());
            assertThat(page).isNotEmpty();
            assertThat(page.get(0).baseOffset()).isEqualTo(next);
            next = page.get(page.size() - 1).nextOffset();
        }
        // A plain socket with a fixed 64 KiB receive buffer (no autotuning: tcp_rmem's maximum is 32 MiB here, more
        // than the whole stream), so what the service cannot write stays in its memory until the client hangs up.
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.setReceiveBufferSize(64 * 1024);
            socket.connect(new java.net.InetSocketAddress(base.getHost(), base.getPort()), 5_000);
            socket.getOutputStream().write(("GET /v1/topics/" + topic + "/partitions/0/stream?offset=0 HTTP/1.1\r\n"
                    + "Host: " + base.getHost() + "\r\nAccept: " + RecordBatchesMedia.TYPE + "\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            assertThat(socket.getInputStream().readNBytes(1024)).hasSize(1024);
            awaitHeld(held -> held > 0, "the stream to hold a batch it could not yet write");
        }
        awaitHeld(held -> held == 0, "every read buffer to be given back");

        // Fetches answered by the route are counted under the path's template, not one series per topic.
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertThat(metrics).contains("uri=\"/v1/topics/{topic}/partitions/{partition}/records\"")
                .doesNotContain("uri=\"/v1/topics/" + topic);
    }

    private void awaitHeld(java.util.function.LongPredicate condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.test(directMemory.heldBytes())) {
            assertThat(System.nanoTime()).as("waiting for %s; held %d bytes", what, directMemory.heldBytes())
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    /** Waits until the long-poll is parked (the fetch counter did not move; the request is in flight). */
    private void awaitWaiting(java.util.concurrent.CompletableFuture<?> polled) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (watcher.watchedPartitions() == 0) {
            assertThat(polled).as("the long-poll answered before anything was appended").isNotDone();
            assertThat(System.nanoTime()).as("waiting for the long-poll to park").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    private static void assertProblemBytes(HttpResponse<byte[]> r, int status, String field) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertThat(r.statusCode()).as(body).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(body).contains(field);
    }

    private static void assertProblem(HttpResponse<String> r, int status, String field) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.body()).contains(field);
    }

    private HttpResponse<String> produce(String topic, String query, byte[] body) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic + "/records?" + query))
                .header("Content-Type", RecordBatchesMedia.TYPE).POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    /** One uncompressed batch as a Kafka producer builds it (base offset 0, CreateTime, no producer id). */
    private static byte[] kafkaBatch(List<String> values) {
        return kafkaBatch(Compression.NONE, values);
    }

    /** {@link #kafkaBatch(List)} compressed with {@code compression}, as a producer with compression.type builds it. */
    private static byte[] kafkaBatch(Compression compression, List<String> values) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), compression,
                TimestampType.CREATE_TIME, 0L);
        long t = System.currentTimeMillis();
        for (String v : values) {
            b.append(t, null, v.getBytes(StandardCharsets.UTF_8));
        }
        ByteBuffer built = b.build().buffer();
        byte[] out = new byte[built.remaining()];
        built.get(out);
        return out;
    }

    private HttpResponse<byte[]> fetch(String topic, String query) throws Exception {
        return fetch(topic, 0, query);
    }

    private HttpResponse<byte[]> fetch(String topic, int partition, String query) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic + "/partitions/" + partition
                        + "/records?" + query))
                .header("Accept", RecordBatchesMedia.TYPE).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private List<String> fetchAllBatches(String topic, long from, int maxRecords) throws Exception {
        List<String> out = new ArrayList<>();
        long next = from;
        while (true) {
            HttpResponse<byte[]> r = fetch(topic, "offset=" + next + "&maxRecords=" + maxRecords);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type")).hasValue(RecordBatchesMedia.TYPE);
            List<String> page = values(batches(r.body()), next);
            out.addAll(page);
            long nextOffset = Long.parseLong(r.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET).orElseThrow());
            assertThat(nextOffset).isEqualTo(next + page.size());
            next = nextOffset;
            if (next >= Long.parseLong(r.headers().firstValue(RecordBatchesMedia.HIGH_WATERMARK).orElseThrow())) {
                return out;
            }
        }
    }

    private static List<RecordBatch> batches(byte[] body) {
        List<RecordBatch> out = new ArrayList<>();
        for (RecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(body)).batches()) {
            b.ensureValid();
            out.add(b);
        }
        return out;
    }

    /** Reads one batch from a stream: the 12-byte log overhead, then the rest it announces. */
    private static RecordBatch nextBatch(DataInputStream in) throws Exception {
        byte[] head = new byte[12];
        in.readFully(head);
        int rest = ByteBuffer.wrap(head).getInt(8);
        if (rest <= 0) {
            throw new EOFException("impossible batch length " + rest);
        }
        byte[] batch = new byte[12 + rest];
        System.arraycopy(head, 0, batch, 0, 12);
        in.readFully(batch, 12, rest);
        return batches(batch).get(0);
    }

    /** Each record's value.n from {@code from} on, checking that offsets run densely from it. */
    private static List<String> values(List<RecordBatch> batches, long from) throws java.io.IOException {
        List<String> out = new ArrayList<>();
        long next = from;
        for (RecordBatch b : batches) {
            for (Record r : b) {
                if (r.offset() < from) {
                    continue;
                }
                assertThat(r.offset()).isEqualTo(next++);
                byte[] value = new byte[r.valueSize()];
                r.value().get(value);
                out.add(JSON.readTree(value).path("n").asText());
            }
        }
        return out;
    }
}
