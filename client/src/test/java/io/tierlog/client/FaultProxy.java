package io.tierlog.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP proxy on 127.0.0.1 in front of the real service that injects the failures a client must survive, on real
 * sockets: answer the next requests of a path with an error status and {@code Retry-After} without passing them on
 * ({@link #refuseNext}), or pass them on and then drop the connection instead of relaying the answer
 * ({@link #loseAnswerOfNext}: the request took effect, the client cannot know). Requests whose path does not
 * contain the armed fragment pass through. Records when each armed request arrived. With {@link #addUnknownFields}
 * every JSON answer is relayed with fields a later service version might add ({@link #UNKNOWN_FIELD}) in each of its
 * objects. Thread-safe.
 */
public final class FaultProxy implements AutoCloseable {
    private static final Set<String> HOP = Set.of("connection", "content-length", "host", "transfer-encoding",
            "upgrade", "keep-alive", "expect");

    private final HttpServer server;
    private final String target;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final AtomicInteger refusals = new AtomicInteger();
    private final AtomicInteger losses = new AtomicInteger();
    private volatile String pathFragment = "\u0000";
    private volatile int refuseStatus;
    private volatile String refuseType;
    private volatile long retryAfterSeconds;
    /** Arrival times (System.nanoTime) of requests matching the armed fragment. */
    public final List<Long> arrivals = new CopyOnWriteArrayList<>();
    public final AtomicInteger lostAnswers = new AtomicInteger();
    /** Statuses of the answers relayed for requests matching the armed fragment. */
    public final Map<Integer, AtomicInteger> relayedStatuses = new ConcurrentHashMap<>();
    /** The most requests matching the armed fragment that were in the proxy at once. */
    public final AtomicInteger maxConcurrent = new AtomicInteger();
    private final AtomicInteger concurrent = new AtomicInteger();
    /** The name of the field {@link #addUnknownFields} adds to every object of a JSON answer (an object value). */
    public static final String UNKNOWN_FIELD = "addedInALaterVersion";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> MAPS = Set.of("headers", "config");
    /** When set, every JSON answer (problem documents too) gets {@link #UNKNOWN_FIELD} in each of its objects. */
    public volatile boolean addUnknownFields;
    /** Answers relayed with added fields. */
    public final AtomicInteger answersWithUnknownFields = new AtomicInteger();
    /** When set, a refusal is answered only after this many further matching requests arrived (10 s at most). */
    private volatile CountDownLatch hold;
    /** When set, the lost answer is dropped only after this many further successes (at most {@link #holdLimit}). */
    private volatile CountDownLatch lateLossFollowers;
    /** Successes since {@link #loseAnswerLate} was armed: the first one's answer is lost, the rest are followers. */
    private final AtomicInteger lateSuccesses = new AtomicInteger();
    /**
     * When set, matching requests reach the service one at a time and in the order of their batches' base sequence
     * ({@link SequenceLane}), as if sent on one connection.
     */
    private volatile SequenceLane lane;
    private volatile Duration holdLimit = Duration.ofSeconds(10);

    public FaultProxy(String targetUrl) throws IOException {
        this.target = targetUrl;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fault-proxy");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::handle);
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The next {@code n} requests whose path contains {@code fragment} get {@code status} with a problem body. */
    public void refuseNext(String fragment, int n, int status, String type, long retryAfterSeconds) {
        this.refuseStatus = status;
        this.refuseType = type;
        this.retryAfterSeconds = retryAfterSeconds;
        armOnly(fragment);
        refusals.set(n);
    }

    /**
     * Refuses the next request whose path contains {@code fragment} with {@code status}, but holds that answer
     * until {@code followers} further such requests have arrived and been passed on: the requests a pipelining
     * client sent behind the refused one reach the service first.
     */
    public void refuseNextHolding(String fragment, int status, String type, int followers) {
        this.refuseStatus = status;
        this.refuseType = type;
        this.retryAfterSeconds = 0;
        armOnly(fragment);
        this.hold = new CountDownLatch(followers);
        refusals.set(1);
    }

    /**
     * The next {@code n} requests whose path contains {@code fragment} and that the service answers with success reach
     * it and take effect; their answers are lost.
     */
    public void loseAnswerOfNext(String fragment, int n) {
        armOnly(fragment);
        losses.set(n);
    }

    /**
     * The requests whose path contains {@code fragment} reach the service in the order of their record batches' base
     * sequence from {@code nextSequence} on; the first that the service answers with success takes effect and its
     * answer is lost only after {@code followers} further ones were answered with success (at most {@code maxHold}): a
     * slow connection whose client learns of the loss after the batches behind it were acknowledged.
     */
    public void loseAnswerLate(String fragment, int nextSequence, int followers, Duration maxHold) {
        armOnly(fragment);
        this.holdLimit = maxHold;
        this.lateSuccesses.set(0);
        this.lateLossFollowers = new CountDownLatch(followers);
        this.lane = new SequenceLane(nextSequence, maxHold);
    }

    /** Aims the proxy at {@code fragment} with every fault mode off, for the caller to turn one on. */
    private void armOnly(String fragment) {
        this.hold = null;
        this.lateLossFollowers = null;
        this.lane = null;
        refusals.set(0);
        losses.set(0);
        this.pathFragment = fragment;
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String pathAndQuery = ex.getRequestURI().getRawPath()
                    + (ex.getRequestURI().getRawQuery() == null ? "" : "?" + ex.getRequestURI().getRawQuery());
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            boolean armed = pathAndQuery.contains(pathFragment);
            if (armed) {
                arrivals.add(System.nanoTime());
                maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
            }
            // A request stops counting once it is answered, before its answer goes back: the client may send its
            // next request as soon as it reads the answer, and that one must not overlap this one in the count.
            AtomicBoolean counted = new AtomicBoolean(armed);
            Runnable answered = () -> {
                if (counted.getAndSet(false)) {
                    concurrent.decrementAndGet();
                }
            };
            try {
                relay(ex, pathAndQuery, body, armed, answered);
            } finally {
                answered.run();
            }
        }
    }

    private void relay(HttpExchange ex, String pathAndQuery, byte[] body, boolean armed, Runnable answered)
            throws IOException {
        boolean refuse = armed && refusals.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
        CountDownLatch held = hold;
        if (refuse && held != null && !awaitHeld(held, Duration.ofSeconds(10))) {
            return;
        }
        if (refuse) {
            answered.run();
            byte[] problem = ("{\"type\":\"" + refuseType + "\",\"title\":\"injected\",\"status\":" + refuseStatus
                    + ",\"detail\":\"injected by the test proxy\"}").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/problem+json");
            ex.getResponseHeaders().add("Retry-After", Long.toString(retryAfterSeconds));
            ex.sendResponseHeaders(refuseStatus, problem.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(problem);
            }
            return;
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(target + pathAndQuery))
                .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        ex.getRequestHeaders().forEach((name, values) -> {
            if (!HOP.contains(name.toLowerCase())) {
                values.forEach(v -> b.header(name, v));
            }
        });
        HttpResponse<byte[]> r;
        SequenceLane inLane = armed ? lane : null;
        try {
            if (inLane != null) {
                inLane.enter(body);
            }
            r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (IOException down) {
            return; // the service is down: the client sees the connection close without an answer
        } finally {
            if (inLane != null) {
                inLane.leave();
            }
        }
        answered.run();
        if (armed && held != null) {
            held.countDown(); // passed on to the service (and answered) while the refusal is held
        }
        if (armed) {
            relayedStatuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger()).incrementAndGet();
        }
        // Only answers of requests that took effect are lost: a lost 409 (a batch that arrived out of order through
        // the proxy's parallel relays) would leave nothing for the resend to be a duplicate of.
        boolean success = armed && r.statusCode() / 100 == 2;
        CountDownLatch late = lateLossFollowers;
        if (success && inLane != null) {
            inLane.appended(body);
        }
        int lateSuccess = success && late != null ? lateSuccesses.getAndIncrement() : -1;
        if (lateSuccess > 0) {
            late.countDown(); // a success behind the held loss
        }
        if (lateSuccess == 0 && !awaitHeld(late, holdLimit)) {
            return;
        }
        if (lateSuccess == 0 || success && losses.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            lostAnswers.incrementAndGet();
            return; // closing the exchange unanswered closes the connection: the answer is lost
        }
        r.headers().map().forEach((name, values) -> {
            if (!HOP.contains(name.toLowerCase()) && !name.startsWith(":")) {
                values.forEach(v -> ex.getResponseHeaders().add(name, v));
            }
        });
        byte[] answer = r.body();
        if (addUnknownFields && answer.length > 0
                && r.headers().firstValue("Content-Type").orElse("").contains("json")) {
            JsonNode tree = JSON.readTree(answer);
            addUnknownFields(tree);
            answer = JSON.writeValueAsBytes(tree);
            answersWithUnknownFields.incrementAndGet();
        }
        ex.sendResponseHeaders(r.statusCode(), answer.length == 0 ? -1 : answer.length);
        if (answer.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(answer);
            }
        }
    }

    /**
     * Lets request bodies (one Kafka record batch each) through one at a time, a batch whose base sequence lies ahead
     * of the next expected one waiting (at most {@code maxWait}) for those before it; a resend (a sequence already
     * passed) goes at once.
     */
    private static final class SequenceLane {
        private static final int LAST_OFFSET_DELTA = 23;
        private static final int BASE_SEQUENCE = 53;
        private final Semaphore one = new Semaphore(1, true);
        private final Duration maxWait;
        private int next;

        SequenceLane(int next, Duration maxWait) {
            this.next = next;
            this.maxWait = maxWait;
        }

        void enter(byte[] batch) throws InterruptedException {
            long deadline = System.nanoTime() + maxWait.toNanos();
            synchronized (this) {
                long left;
                while (sequence(batch) > next && (left = deadline - System.nanoTime()) > 0) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            }
            one.acquire();
        }

        void leave() {
            one.release();
        }

        synchronized void appended(byte[] batch) {
            ByteBuffer b = ByteBuffer.wrap(batch);
            next = Math.max(next, sequence(batch) + b.getInt(LAST_OFFSET_DELTA) + 1);
            notifyAll();
        }

        private static int sequence(byte[] batch) {
            return batch.length < BASE_SEQUENCE + 4 ? -1 : ByteBuffer.wrap(batch).getInt(BASE_SEQUENCE);
        }
    }

    /** Waits for {@code held} up to {@code limit}; false if interrupted. */
    private static boolean awaitHeld(CountDownLatch held, Duration limit) {
        try {
            held.await(limit.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Adds {@link #UNKNOWN_FIELD} (an object with a scalar and an array) to every object in {@code node} but the maps
     * whose keys are data, not schema (a record's headers, a topic's config).
     */
    private static void addUnknownFields(JsonNode node) {
        if (node instanceof ObjectNode o) {
            o.fields().forEachRemaining(f -> {
                if (!MAPS.contains(f.getKey())) {
                    addUnknownFields(f.getValue());
                }
            });
        } else {
            node.forEach(FaultProxy::addUnknownFields);
        }
        if (node instanceof ObjectNode o) {
            ObjectNode added = o.putObject(UNKNOWN_FIELD);
            added.put("since", "9.9");
            added.putArray("values").add(1).add("two");
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
