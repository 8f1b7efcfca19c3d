package io.tierlog.ingest.function.harness;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback implementation of the Lambda Runtime API (version 2018-06-01) for one execution environment, bound to
 * 127.0.0.1: {@code GET /runtime/invocation/next} blocks until {@link #invoke} queues an event and answers it with
 * the Lambda-Runtime-* headers; {@code POST /runtime/invocation/{id}/response} and {@code .../error} complete that
 * invocation; {@code POST /runtime/init/error} records an init failure. Thread-safe.
 */
public final class LoopbackRuntimeApi implements Closeable {
    private static final String BASE = "/2018-06-01/runtime";

    static {
        // The JDK server leaves Nagle's algorithm on; with the client's delayed ACKs that stalls every small
        // response ~40 ms, which would be measured as function latency. Lambda's Runtime API does not do that.
        // Read once when the JDK's server classes initialise, so it must be set before the first server exists.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    private static final String FUNCTION_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:tierlog-ingest";

    /** How an invocation ended: {@code error} false = a response, true = an error report (body is the error JSON). */
    public record Outcome(boolean error, String body, String errorType, long completedNanos) {
    }

    private record Pending(String requestId, String event) {
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "loopback-runtime-api");
        t.setDaemon(true);
        return t;
    });
    private final BlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final Map<String, CompletableFuture<Outcome>> inFlight = new ConcurrentHashMap<>();
    private final CompletableFuture<String> initError = new CompletableFuture<>();
    private final CompletableFuture<Long> firstNext = new CompletableFuture<>();
    private final AtomicLong nextCalls = new AtomicLong();

    public LoopbackRuntimeApi() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(executor);
        server.createContext(BASE + "/invocation/next", this::next);
        server.createContext(BASE + "/invocation/", this::complete);
        server.createContext(BASE + "/init/error", ex -> {
            initError.complete(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            reply(ex, 202, "{}");
        });
        server.start();
    }

    /** {@code host:port}, the value of {@code AWS_LAMBDA_RUNTIME_API}. */
    public String address() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    /** Queues an event for the function; the future completes when the function answers. */
    public CompletableFuture<Outcome> invoke(String eventJson) {
        return invoke(eventJson, UUID.randomUUID().toString());
    }

    public CompletableFuture<Outcome> invoke(String eventJson, String requestId) {
        CompletableFuture<Outcome> f = new CompletableFuture<>();
        inFlight.put(requestId, f);
        queue.add(new Pending(requestId, eventJson));
        return f;
    }

    /** Completes, with {@link System#nanoTime()}, when the runtime first asks for work (its init is over). */
    public CompletableFuture<Long> firstNext() {
        return firstNext;
    }

    public CompletableFuture<String> initError() {
        return initError;
    }

    private void next(HttpExchange ex) throws IOException {
        nextCalls.incrementAndGet();
        firstNext.complete(System.nanoTime());
        Pending p;
        try {
            // Lambda's /next blocks indefinitely; a bound keeps a forgotten runtime from holding a thread forever.
            p = queue.poll(10, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reply(ex, 500, "{}");
            return;
        }
        if (p == null) {
            reply(ex, 500, "{}");
            return;
        }
        ex.getResponseHeaders().add("Lambda-Runtime-Aws-Request-Id", p.requestId());
        ex.getResponseHeaders().add("Lambda-Runtime-Deadline-Ms", Long.toString(System.currentTimeMillis() + 30_000));
        ex.getResponseHeaders().add("Lambda-Runtime-Invoked-Function-Arn", FUNCTION_ARN);
        ex.getResponseHeaders().add("Lambda-Runtime-Trace-Id",
                String.format("Root=1-65f0a1b2-%024x;Sampled=0", p.requestId().hashCode() & 0xffffffffL));
        ex.getResponseHeaders().add("Content-Type", "application/json");
        reply(ex, 200, p.event());
    }

    /** {@code POST /invocation/{id}/response} and {@code /invocation/{id}/error}. */
    private void complete(HttpExchange ex) throws IOException {
        String rest = ex.getRequestURI().getPath().substring((BASE + "/invocation/").length());
        String[] parts = rest.split("/", 2);
        byte[] body = ex.getRequestBody().readAllBytes();
        CompletableFuture<Outcome> f = parts.length == 2 ? inFlight.remove(parts[0]) : null;
        if (f == null || !"POST".equals(ex.getRequestMethod())) {
            reply(ex, 404, "{\"errorMessage\":\"unknown invocation\"}");
            return;
        }
        boolean error = parts[1].equals("error");
        f.complete(new Outcome(error, new String(body, StandardCharsets.UTF_8),
                ex.getRequestHeaders().getFirst("Lambda-Runtime-Function-Error-Type"), System.nanoTime()));
        reply(ex, 202, "{\"status\":\"OK\"}");
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
