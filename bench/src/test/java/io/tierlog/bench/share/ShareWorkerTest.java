package io.tierlog.bench.share;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ShareWorker} against the JDK's HTTP server on 127.0.0.1: the acks of one lease are in flight while the next
 * lease is asked for. The server answers the acks only once the next lease request has arrived (a latch, bounded), so
 * a worker that waited for its acks before leasing again would get a 503 instead.
 */
class ShareWorkerTest {
    private static final String ONE_RECORD = "{\"records\":[{\"lease\":\"bGVhc2UtMQ\",\"partition\":0,"
            + "\"deliveryCount\":1,\"offset\":0,\"timestamp\":1,\"key\":null,\"value\":\"v\",\"headers\":{}}]}";
    private final AtomicInteger leases = new AtomicInteger();
    private final CountDownLatch secondLeaseArrived = new CountDownLatch(1);
    private HttpServer server;
    private URI base;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/v1/share-groups/g/topics/t/lease", x -> {
            x.getRequestBody().readAllBytes();
            if (leases.incrementAndGet() == 1) {
                answer(x, 200, ONE_RECORD);
            } else {
                secondLeaseArrived.countDown();
                answer(x, 200, "{\"records\":[]}");
            }
        });
        server.createContext("/v1/share-groups/g/topics/t/acks", x -> {
            String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            boolean pipelined;
            try {
                pipelined = secondLeaseArrived.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                pipelined = false;
            }
            if (!pipelined || !body.equals("{\"acks\":[{\"lease\":\"bGVhc2UtMQ\",\"type\":\"accept\"}]}")) {
                answer(x, 503, "{\"type\":\"not-pipelined\",\"detail\":\"" + body.replace("\"", "'") + "\"}");
            } else {
                answer(x, 200, "{\"results\":[{\"lease\":\"bGVhc2UtMQ\",\"ok\":true}]}");
            }
        });
        server.start();
        base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void theAcksOfOneLeaseTravelWhileTheNextLeaseIsAskedFor() throws Exception {
        try (ShareWorker worker = new ShareWorker(base, "g", "t", 500, 30_000, 0, LeaseAnswer.JSON)) {
            LeasedBatch first = worker.lease();
            assertThat(first.leases()).containsExactly("bGVhc2UtMQ");
            CompletableFuture<Integer> acked = worker.accept(first);
            LeasedBatch second = worker.lease();
            assertThat(second.isEmpty()).isTrue();
            assertThat(acked.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        }
    }

    private static void answer(HttpExchange x, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().add("Content-Type", "application/json");
        x.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(bytes);
        }
    }
}
