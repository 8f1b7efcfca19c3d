package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM to the packaged service under load: 4 producers appending in a loop, 100 long-polls waiting at the end of
 * a partition, and an SSE stream tailing it. Each request is one connection ({@code Connection: close}) on a plain
 * socket, so that its outcome is unambiguous: answered (200, or 503 from the stopping server), refused (the connect
 * fails), or unanswered (sent, then the connection ends without a status line).
 *
 * <p>Asserted: the process exits within {@code tierlog.shutdown.timeout} (10 s); every long-poll is answered 200
 * (with no records: nothing was appended to its partition); the stream ends after a {@code retry:} line; no produce
 * is left unanswered; and after a restart every acknowledged record is there, at its offset. Logs under
 * {@code target/it/graceful-shutdown}.
 */
class GracefulShutdownIT {
    static final Duration STOP_BOUND = Duration.ofSeconds(10);
    static final Duration STARTUP = Duration.ofSeconds(120);
    static final int LONG_POLLS = 100;
    static final int PRODUCERS = 4;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path work = Path.of("target", "it", "graceful-shutdown").toAbsolutePath();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private PackagedService app;
    private final ExecutorService clients = Executors.newCachedThreadPool();
    /** When SIGTERM was sent (System.nanoTime()); Long.MAX_VALUE before. */
    private final java.util.concurrent.atomic.AtomicLong sigtermAt = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);

    /** The outcome of one request over its own connection. */
    record Outcome(int status, String body, boolean refused, boolean unanswered) {
    }

    @AfterEach
    void cleanUp() throws Exception {
        clients.shutdownNow();
        if (app != null && app.process().isAlive()) {
            app.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(600)
    void sigtermAnswersEveryRequestAndKeepsEveryAcknowledgedRecord() throws Exception {
        PackagedService.deleteTree(work);
        Files.createDirectories(work);
        Path hot = work.resolve("hot");
        app = PackagedService.start(work, hot);
        app.awaitReady(STARTUP);
        assertThat(app.send(http, "POST", "/v1/topics", "{\"name\":\"t\",\"partitions\":2}").statusCode()).isEqualTo(201);

        // 100 long-polls on partition 1, where nothing is appended: each waits its full 30 s unless released.
        List<Future<Outcome>> polls = new ArrayList<>();
        for (int i = 0; i < LONG_POLLS; i++) {
            polls.add(clients.submit(() -> request("GET /v1/topics/t/partitions/1/records?offset=0&waitMs=30000", null)));
        }
        // An SSE stream tailing partition 1.
        Socket stream = new Socket(InetAddress.getLoopbackAddress(), app.port());
        stream.setSoTimeout((int) (3 * STOP_BOUND.toMillis()));
        stream.getOutputStream().write(("GET /v1/topics/t/partitions/1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        BufferedReader events = new BufferedReader(new InputStreamReader(stream.getInputStream(), StandardCharsets.UTF_8));
        assertThat(events.readLine()).startsWith("HTTP/1.1 200");

        // Producers: append until the service stops answering 200.
        Map<Long, String> acked = new ConcurrentHashMap<>();
        AtomicInteger unansweredProduces = new AtomicInteger();
        AtomicInteger refusedProduces = new AtomicInteger();
        AtomicInteger rejected503 = new AtomicInteger();
        CountDownLatch producing = new CountDownLatch(PRODUCERS * 20);
        List<Future<?>> producers = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int producer = p;
            producers.add(clients.submit(() -> {
                for (int n = 0; ; n++) {
                    String value = "p" + producer + "-" + n;
                    long sentAt = System.nanoTime();
                    Outcome o = request("POST /v1/topics/t/records", "{\"records\":[{\"partition\":0,\"value\":\""
                            + value + "\"},{\"partition\":0,\"value\":\"" + value + "b\"}]}");
                    if (o.status() == 200) {
                        long offset = JSON.readTree(o.body()).get("offsets").get(0).get("offset").asLong();
                        acked.put(offset, value);
                        acked.put(offset + 1, value + "b");
                        producing.countDown();
                        continue;
                    }
                    if (o.unanswered() && sentAt > sigtermAt.get()) {
                        // Connected after SIGTERM and closed without a byte: the listener was closing, so the
                        // request was turned away at the door (TCP completes a handshake before the server accepts).
                        refusedProduces.incrementAndGet();
                    } else if (o.unanswered()) {
                        unansweredProduces.incrementAndGet();
                        System.out.println("unanswered produce: " + o);
                    } else if (o.refused()) {
                        refusedProduces.incrementAndGet();
                    } else {
                        assertThat(o.status()).as(o.body()).isEqualTo(503);
                        rejected503.incrementAndGet();
                    }
                    return null;
                }
            }));
        }
        assertThat(producing.await(60, TimeUnit.SECONDS)).as("producers running").isTrue();
        // The long-polls have had as long as 80 produce round trips to register; they wait 30 s.
        for (Future<Outcome> poll : polls) {
            assertThat(poll).isNotDone();
        }

        long stopping = System.nanoTime();
        sigtermAt.set(stopping);
        app.process().destroy();
        boolean exited = app.process().waitFor(STOP_BOUND.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        long stopMillis = (System.nanoTime() - stopping) / 1_000_000;
        assertThat(exited).as("exited; log " + app.log()).isTrue();
        System.out.println("service exited " + stopMillis + " ms after SIGTERM with " + app.process().exitValue()
                + "; acknowledged records " + acked.size() + ", produce answered 503: " + rejected503.get()
                + ", refused at connect: " + refusedProduces.get() + ", unanswered: " + unansweredProduces.get());
        assertThat(stopMillis).as("exit within tierlog.shutdown.timeout").isLessThan(STOP_BOUND.toMillis());
        assertThat(app.process().exitValue()).isIn(0, 143);

        for (Future<?> p : producers) {
            p.get(30, TimeUnit.SECONDS);
        }
        assertThat(unansweredProduces.get()).as("produce requests sent and never answered").isZero();
        for (Future<Outcome> poll : polls) {
            Outcome o = poll.get(30, TimeUnit.SECONDS);
            assertThat(o.status()).as("long-poll answered: " + o).isEqualTo(200);
            assertThat(JSON.readTree(o.body()).get("records").size()).isZero();
        }
        String retry = null;
        for (String line; (line = events.readLine()) != null; ) {
            if (line.startsWith("retry:")) {
                retry = line;
            }
        }
        assertThat(retry).as("SSE stream ended with a retry: line").isEqualTo("retry: 1000");
        stream.close();
        String log = Files.readString(app.log());
        assertThat(log.lines().filter(l -> l.contains(" ERROR ") || l.startsWith("\tat ")))
                .as("ERROR lines and stack traces in " + app.log()).isEmpty();

        // Every acknowledged record is there after a restart, at its offset.
        Files.move(app.log(), work.resolve("service-before-restart.log"));
        app = PackagedService.start(work, hot);
        app.awaitReady(STARTUP);
        long next = 0;
        int found = 0;
        long end = acked.keySet().stream().mapToLong(Long::longValue).max().orElse(-1) + 1;
        while (next < end) {
            HttpResponse<String> r = app.send(http, "GET", "/v1/topics/t/partitions/0/records?offset=" + next
                    + "&maxRecords=10000", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode records = JSON.readTree(r.body()).get("records");
            assertThat(records.size()).as("records from " + next).isPositive();
            for (JsonNode rec : records) {
                String expected = acked.get(rec.get("offset").asLong());
                if (expected != null) {
                    assertThat(rec.get("value").asText()).isEqualTo(expected);
                    found++;
                }
            }
            next = JSON.readTree(r.body()).get("nextOffset").asLong();
        }
        assertThat(found).isEqualTo(acked.size());
    }

    /** One request on its own connection: {@code "METHOD /path"}, a JSON body or null. */
    private Outcome request(String line, String body) {
        byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        Socket socket;
        try {
            socket = new Socket(InetAddress.getLoopbackAddress(), app.port());
        } catch (ConnectException refused) {
            return new Outcome(0, "", true, false);
        } catch (IOException e) {
            return new Outcome(0, e.toString(), true, false);
        }
        try (socket) {
            socket.setSoTimeout(60_000);
            OutputStream out = socket.getOutputStream();
            out.write((line + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + payload.length + "\r\n")
                    + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(payload);
            out.flush();
            byte[] response = readAll(socket.getInputStream());
            String text = new String(response, StandardCharsets.UTF_8);
            if (!text.startsWith("HTTP/1.1 ")) {
                return new Outcome(0, text, false, true);
            }
            int status = Integer.parseInt(text.substring(9, 12));
            int bodyStart = text.indexOf("\r\n\r\n");
            return new Outcome(status, bodyStart < 0 ? "" : dechunk(text, bodyStart + 4), false, false);
        } catch (IOException e) {
            return new Outcome(0, e.toString(), false, true);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    /** The body, de-chunked if the head says {@code Transfer-Encoding: chunked}. */
    private static String dechunk(String text, int bodyStart) {
        String head = text.substring(0, bodyStart).toLowerCase(java.util.Locale.ROOT);
        String body = text.substring(bodyStart);
        if (!head.contains("transfer-encoding: chunked")) {
            return body;
        }
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (true) {
            int eol = body.indexOf("\r\n", i);
            int size = Integer.parseInt(body.substring(i, eol).trim(), 16);
            if (size == 0) {
                return out.toString();
            }
            out.append(body, eol + 2, eol + 2 + size);
            i = eol + 2 + size + 2;
        }
    }
}
