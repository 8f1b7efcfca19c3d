package io.tierlog.service;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.service.read.AppendWatcher;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.restassured.RestAssured.given;
import static io.tierlog.service.ApiTest.createTopic;
import static io.tierlog.service.ApiTest.produce;
import static io.tierlog.service.ApiTest.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * Reads while other processes append, and the SSE stream: a long-poll answered by an append from another JVM,
 * every record of a concurrent writer JVM seen in order, and stream replay, live tail, heartbeat and
 * {@code Last-Event-ID} resume with no gap and no duplicate.
 */
@QuarkusTest
class CrossProcessAndStreamTest {
    @Inject
    TierlogConfig config;
    @Inject
    AppendWatcher watcher;
    @TestHTTPResource("/")
    URI root;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void longPollIsAnsweredByAnAppendFromAnotherProcess() throws Exception {
        String topic = unique("xlp");
        createTopic(topic, 1, null);
        long start = System.nanoTime();
        CompletableFuture<Response> poll = CompletableFuture.supplyAsync(() ->
                given().get("/v1/topics/" + topic + "/partitions/0/records?offset=0&waitMs=25000"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (watcher.watchedPartitions() == 0) {
            assertThat(System.nanoTime()).as("long-poll registered").isLessThan(deadline);
            Thread.sleep(5);
        }
        Path log = Files.createTempFile("append", ".log");
        Process p = JavaProcess.startLogged(AppendMain.class, log, dataDir(), topic, "0", "0", "1", "1");
        JavaProcess.awaitSuccess(p, 60, log);
        Response r = poll.get(30, TimeUnit.SECONDS);
        r.then().statusCode(200).body("records[0].value.i", equalTo(0)).body("nextOffset", equalTo(1));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("answered before the deadline")
                .isLessThan(25_000);
    }

    @Test
    void everyRecordOfAConcurrentWriterProcessIsFetchedInOrder() throws Exception {
        String topic = unique("xw");
        createTopic(topic, 1, null);
        int total = 3000;
        Path log = Files.createTempFile("append", ".log");
        Process p = JavaProcess.startLogged(AppendMain.class, log, dataDir(), topic, "0", "0", Integer.toString(total), "7");
        List<Integer> seen = new ArrayList<>();
        long next = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (seen.size() < total) {
            assertThat(System.nanoTime()).as("all records fetched in time; got " + seen.size()).isLessThan(deadline);
            JsonPath body = given().get("/v1/topics/" + topic + "/partitions/0/records?offset=" + next
                    + "&waitMs=2000&maxRecords=400").then().statusCode(200).extract().jsonPath();
            List<Integer> offsets = body.getList("records.offset", Integer.class);
            List<Integer> values = body.getList("records.value.i", Integer.class);
            for (int i = 0; i < offsets.size(); i++) {
                assertThat(offsets.get(i)).isEqualTo(seen.size());
                assertThat(values.get(i)).isEqualTo(seen.size());
                seen.add(values.get(i));
            }
            next = body.getLong("nextOffset");
        }
        JavaProcess.awaitSuccess(p, 60, log);
        assertThat(seen).hasSize(total);
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=" + total).then().statusCode(200)
                .body("records.size()", equalTo(0)).body("highWatermark", equalTo(total));
    }

    @Test
    void streamReplaysTailsAndResumesByLastEventIdWithoutGapOrDuplicate() throws Exception {
        String topic = unique("sse");
        createTopic(topic, 1, null);
        produceValues(topic, 0, 5);
        List<Long> ids = new ArrayList<>();

        try (SseClient sse = open(topic, "?offset=earliest", null)) {
            ids.addAll(sse.nextIds(5));
            assertThat(ids).containsExactly(0L, 1L, 2L, 3L, 4L);
            produceValues(topic, 5, 3);
            ids.addAll(sse.nextIds(3));
            assertThat(sse.lastData).contains("\"value\":7").contains("\"topic\":\"" + topic + "\"");
            sse.awaitComment();
        }
        produceValues(topic, 8, 2);
        try (SseClient sse = open(topic, "", String.valueOf(ids.get(ids.size() - 1)))) {
            ids.addAll(sse.nextIds(2));
            sse.awaitComment();
            assertThat(sse.events).as("nothing after the tail").isEmpty();
        }
        assertThat(ids).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);

        try (SseClient sse = open(topic, "?offset=latest", null)) {
            produceValues(topic, 10, 1);
            assertThat(sse.nextIds(1)).containsExactly(10L);
        }
        try (SseClient sse = open(topic, "?timestamp=0", null)) {
            assertThat(sse.nextIds(1)).containsExactly(0L);
        }
    }

    @Test
    void streamRejectsUnknownTopicsAndOffsetsOutOfRange() throws Exception {
        String topic = unique("sse-bad");
        createTopic(topic, 1, null);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(root.resolve("/v1/topics/no-" + topic
                + "/partitions/0/stream")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/problem+json");
        assertThat(r.body()).contains("\"type\":\"unknown-topic\"");
        r = http.send(HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic + "/partitions/0/stream?offset=5"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(416);
        assertThat(r.body()).contains("\"highWatermark\":0").contains("\"logStartOffset\":0");
        r = http.send(HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic + "/partitions/3/stream")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.body()).contains("unknown-partition");
    }

    @Inject
    io.micrometer.core.instrument.MeterRegistry registry;

    @Test
    void aClientThatStopsReadingStallsItsStreamInsteadOfBufferingTheLog() throws Exception {
        String topic = unique("slow");
        createTopic(topic, 1, null);
        int total = 20_000;
        String value = "\"" + "s".repeat(1022) + "\"";
        for (int n = 0; n < total; n += 1000) {
            StringBuilder b = new StringBuilder("{\"records\":[");
            for (int i = 0; i < 1000; i++) {
                b.append(i == 0 ? "" : ",").append("{\"value\":").append(value).append("}");
            }
            produce(topic, b.append("]}").toString()).then().statusCode(200);
        }
        io.micrometer.core.instrument.Counter sent = registry.counter(io.tierlog.service.metrics.Meters.STREAM_RECORDS_SENT);
        double before = sent.count();
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.setReceiveBufferSize(4096);
            socket.connect(new java.net.InetSocketAddress(root.getHost(), root.getPort()), 5000);
            socket.getOutputStream().write(("GET /v1/topics/" + topic + "/partitions/0/stream?offset=earliest HTTP/1.1\r\n"
                    + "Host: " + root.getHost() + "\r\nAccept: text/event-stream\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            // Not reading: the server may fill the socket buffers and its write queue, then must stop.
            double stalled = awaitStable(sent, before);
            assertThat(stalled - before).as("records handed to a client that reads nothing")
                    .isGreaterThan(0).isLessThan(total / 2.0);

            // Reading resumes the stream, and every record arrives once.
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                    socket.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            socket.setSoTimeout(30_000);
            long expected = 0;
            String line;
            while (expected < total && (line = in.readLine()) != null) {
                if (line.startsWith("id: ")) {
                    assertThat(Long.parseLong(line.substring(4))).isEqualTo(expected);
                    expected++;
                }
            }
            assertThat(expected).isEqualTo(total);
        }
    }

    /** Waits until the counter stops moving for 500 ms (at most 20 s) and returns its value. */
    private static double awaitStable(io.micrometer.core.instrument.Counter counter, double start) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        double last = start;
        long stableSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(50);
            double now = counter.count();
            if (now != last || now == start) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > TimeUnit.MILLISECONDS.toNanos(500)) {
                return now;
            }
        }
        return counter.count();
    }

    private void produceValues(String topic, int first, int count) {
        StringBuilder b = new StringBuilder("{\"records\":[");
        for (int i = 0; i < count; i++) {
            b.append(i == 0 ? "" : ",").append("{\"value\":").append(first + i).append("}");
        }
        produce(topic, b.append("]}").toString()).then().statusCode(200);
    }

    private String dataDir() {
        return config.dataDir().toAbsolutePath().toString();
    }

    private SseClient open(String topic, String query, String lastEventId) throws Exception {
        HttpRequest.Builder req = HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic + "/partitions/0/stream" + query))
                .header("Accept", "text/event-stream");
        if (lastEventId != null) {
            req.header("Last-Event-ID", lastEventId);
        }
        HttpResponse<Stream<String>> r = http.send(req.build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        return new SseClient(r.body());
    }

    /** Reads SSE lines on its own thread into queues, so the test can wait with deadlines. */
    private static final class SseClient implements AutoCloseable {
        final BlockingQueue<Long> events = new LinkedBlockingQueue<>();
        final BlockingQueue<String> comments = new LinkedBlockingQueue<>();
        final Stream<String> lines;
        final Thread reader;
        volatile String lastData;

        SseClient(Stream<String> lines) {
            this.lines = lines;
            this.reader = new Thread(() -> {
                Long id = null;
                try {
                    for (var it = lines.iterator(); it.hasNext(); ) {
                        String line = it.next();
                        if (line.startsWith("id: ")) {
                            id = Long.parseLong(line.substring(4));
                        } else if (line.startsWith("data: ")) {
                            lastData = line.substring(6);
                        } else if (line.startsWith(":")) {
                            comments.add(line);
                        } else if (line.isEmpty() && id != null) {
                            events.add(id);
                            id = null;
                        }
                    }
                } catch (RuntimeException closed) {
                    // the test closed the stream
                }
            }, "sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        List<Long> nextIds(int n) throws InterruptedException {
            List<Long> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Long id = events.poll(15, TimeUnit.SECONDS);
                assertThat(id).as("event " + (i + 1) + " of " + n).isNotNull();
                out.add(id);
            }
            return out;
        }

        /** Waits for a heartbeat comment (the test profile sends one after 300 ms idle). */
        void awaitComment() throws InterruptedException {
            comments.clear();
            assertThat(comments.poll(10, TimeUnit.SECONDS)).as("heartbeat comment").isNotNull();
        }

        @Override
        public void close() {
            lines.close();
        }
    }
}
