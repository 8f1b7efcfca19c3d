package io.tierlog.bench.compare;

import com.sun.net.httpserver.HttpServer;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The producer's send rule against a real HTTP server that holds its responses until the test lets them go. */
class PipelinedProducerTest {
    private static final int PARTITIONS = 8;
    private static final int IN_FLIGHT = 5;
    private static final int BATCH = 1000;

    private final List<Integer> counts = new CopyOnWriteArrayList<>();
    private final AtomicInteger inServer = new AtomicInteger();
    private final AtomicInteger mostInServer = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile CountDownLatch received;
    private final ExecutorService handlers = Executors.newCachedThreadPool();
    private HttpServer server;

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> {
            int now = inServer.incrementAndGet();
            mostInServer.accumulateAndGet(now, Math::max);
            counts.add(Integer.parseInt(exchange.getRequestURI().getQuery().replace("count=", "")));
            exchange.getRequestBody().readAllBytes();
            received.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inServer.decrementAndGet();
            byte[] ok = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, ok.length);
            exchange.getResponseBody().write(ok);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        release.countDown();
        server.stop(0);
        handlers.shutdownNow();
    }

    @Test
    void fullRequestsArePipelinedUpToTheWindow() throws Exception {
        received = new CountDownLatch(IN_FLIGHT);
        ProduceSpec spec = new ProduceSpec(10L * BATCH, 1, BATCH, 0, new Payload(16, 1));
        CompletableFuture<Histogram> run = runProducer(spec);

        assertThat(received.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(inServer.get()).isEqualTo(IN_FLIGHT);
        release.countDown();
        run.get(30, TimeUnit.SECONDS);

        assertThat(counts).hasSize(10).allMatch(c -> c == BATCH);
        assertThat(mostInServer.get()).isEqualTo(IN_FLIGHT);
    }

    @Test
    void aPartialRequestWaitsForTheOneInFlightAndTakesWhatArrivedMeanwhile() throws Exception {
        received = new CountDownLatch(1);
        // 100 records at 2000/s: all have arrived 50 ms after the start.
        ProduceSpec spec = new ProduceSpec(100, 1, BATCH, 2000, new Payload(16, 1));
        long start = System.nanoTime();
        CompletableFuture<Histogram> run = runProducer(spec);

        assertThat(received.await(30, TimeUnit.SECONDS)).isTrue();
        // Every record arrives while the first request is held; none of them may go in a request of its own.
        long allArrived = start + TimeUnit.MILLISECONDS.toNanos(250);
        while (System.nanoTime() < allArrived) {
            assertThat(inServer.get()).isEqualTo(1);
            Thread.onSpinWait();
        }
        release.countDown();
        Histogram latencies = run.get(30, TimeUnit.SECONDS);

        // The first took what had arrived when the producer's thread got going; the second took all the rest.
        assertThat(counts).hasSize(2);
        assertThat(counts.get(0) + counts.get(1)).isEqualTo(100);
        assertThat(mostInServer.get()).isEqualTo(1);
        assertThat(latencies.getTotalCount()).isEqualTo(100);
    }

    private CompletableFuture<Histogram> runProducer(ProduceSpec spec) {
        URI base = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        PipelinedProducer.Requests requests = (partition, first, count) ->
                new PipelinedProducer.Post(base.resolve("p" + partition + "?count=" + count), "application/octet-stream",
                        new byte[count], new String[0]);
        Histogram histogram = new Histogram(TimeUnit.MINUTES.toMicros(1), 3);
        PipelinedProducer producer = new PipelinedProducer(requests, spec, 0, PARTITIONS, IN_FLIGHT, histogram,
                Duration.ofSeconds(30));
        long start = System.nanoTime();
        return CompletableFuture.supplyAsync(() -> {
            try (producer) {
                producer.run(start);
                return histogram;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
