package io.tierlog.service.api;

import io.netty.buffer.Unpooled;
import io.tierlog.http.Encoding;
import io.tierlog.http.Isolation;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.http.ProblemMapper;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.PartitionReads;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * {@code GET /v1/topics/{topic}/partitions/{p}/records} answered as JSON (api.md, "Fetch"): the same parameters,
 * long-poll, problems and body as {@link RecordsResource#fetch}, which documents it in the OpenAPI and still
 * answers requests whose {@code Accept} this route leaves to content negotiation.
 *
 * <p>A Vert.x route, as {@link BatchFetchRoute}, so that the body is written once: rendered from the stored batches
 * into the read thread's buffer ({@link JsonFetch}), copied into pooled direct memory that the event loop writes to
 * the socket as it is and gives back once written. Through JAX-RS the body went through two more copies (a byte
 * array, then Netty's buffer).
 */
@Singleton
public class JsonFetchRoute {
    private final TopicStore topics;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService readPool;
    private final ServiceMetrics metrics;
    private final PooledDirectMemory memory;
    private final int maxRecordsLimit;
    private final Clock clock;

    public JsonFetchRoute(TopicStore topics, PartitionReads reads, AppendWatcher watcher, ServiceThreads threads,
                          ServiceMetrics metrics, PooledDirectMemory memory, TierlogConfig config, Clock clock) {
        this.topics = topics;
        this.reads = reads;
        this.watcher = watcher;
        this.readPool = threads.reads();
        this.metrics = metrics;
        this.memory = memory;
        this.maxRecordsLimit = config.fetch().maxRecordsLimit();
        this.clock = clock;
    }

    void install(@Observes Router router) {
        // After BatchFetchRoute (order -100), which answers Accept: record batches.
        router.get("/v1/topics/:topic/partitions/:partition/records").order(-99).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        if (!acceptsJson(ctx.request().getHeader("Accept"))) {
            ctx.next();
            return;
        }
        Context context = Vertx.currentContext();
        String topic = ctx.pathParam("topic");
        String partition = ctx.pathParam("partition");
        try {
            FetchParams params = FetchParams.parse(ctx.request().getParam("offset"), ctx.request().getParam("maxRecords"),
                    ctx.request().getParam("maxBytes"), ctx.request().getParam("waitMs"), ctx.request().getParam(Isolation.FIELD),
                    maxRecordsLimit);
            Encoding encoding = PartitionRequests.encoding(ctx.request().getParam("encoding"));
            CompletableFuture.supplyAsync(() -> fetch(topic, partition, params, encoding), readPool)
                    .thenCompose(body -> body)
                    .whenComplete((body, error) -> context.runOnContext(v -> {
                        if (error != null) {
                            ProblemMapper.respond(ctx.response(), error);
                        } else {
                            send(ctx.response(), body);
                        }
                    }));
        } catch (RuntimeException e) {
            // Bad parameters, or a read pool that no longer takes work (the service is stopping).
            ProblemMapper.respond(ctx.response(), e);
        }
    }

    /** Runs on the read pool: the first read, and after a long-poll's wake-up the next, on the pool again. */
    private CompletableFuture<Body> fetch(String topic, String partition, FetchParams params, Encoding encoding) {
        return JsonFetch.fetchAndWait(reads, watcher, topics, topic, partition, params, encoding, clock, readPool,
                this::body, b -> b.bytes().close());
    }

    /** The rendered answer in memory the event loop can write as it is. */
    private Body body(JsonFetch.Rendered rendered, long startNanos) {
        JsonOut out = rendered.out();
        ReadBuffer bytes = memory.allocate(out.size());
        out.copyTo(bytes.memory(), 0);
        return new Body(bytes, rendered.records(), startNanos);
    }

    /** On the connection's event loop: the body, given back once written. */
    private void send(HttpServerResponse response, Body body) {
        if (response.closed() || response.ended()) {
            body.bytes().close();
            return;
        }
        try {
            metrics.fetched(body.records(), body.bytes().capacity(), System.nanoTime() - body.startNanos());
            response.putHeader("Content-Type", "application/json")
                    .end(Buffer.buffer(Unpooled.wrappedBuffer(body.bytes().memory())))
                    .onComplete(written -> body.bytes().close());
        } catch (RuntimeException e) {
            body.bytes().close();
            throw e;
        }
    }

    /**
     * Whether this route answers: no {@code Accept}, or one naming JSON or a wildcard that covers it. Anything else
     * (record batches are answered before this route) is left to JAX-RS's content negotiation, as before.
     */
    public static boolean acceptsJson(String accept) {
        if (accept == null || accept.isBlank()) {
            return true;
        }
        // Every produce and fetch asks this; a client sends the same header each time, and splitting it allocated
        // a few hundred bytes of Strings per request (JDK clients send five media ranges by default).
        Boolean known = ACCEPT_VERDICTS.get(accept);
        if (known != null) {
            return known;
        }
        boolean verdict = judgeAccept(accept);
        if (ACCEPT_VERDICTS.size() < MAX_ACCEPT_VERDICTS) {
            ACCEPT_VERDICTS.put(accept, verdict);
        }
        return verdict;
    }

    /** Verdicts of the {@code Accept} headers seen, at most {@link #MAX_ACCEPT_VERDICTS} (clients choose them). */
    private static final ConcurrentHashMap<String, Boolean> ACCEPT_VERDICTS = new ConcurrentHashMap<>();
    private static final int MAX_ACCEPT_VERDICTS = 256;

    private static boolean judgeAccept(String accept) {
        for (String range : accept.split(",")) {
            String[] parts = range.split(";");
            String type = parts[0].trim().toLowerCase(Locale.ROOT);
            if (!type.equals("application/json") && !type.equals("*/*") && !type.equals("application/*")) {
                continue;
            }
            boolean refused = false;
            for (int i = 1; i < parts.length; i++) {
                String p = parts[i].trim().toLowerCase(Locale.ROOT).replace(" ", "");
                if (p.matches("q=0(\\.0*)?")) {
                    refused = true;
                }
            }
            if (!refused) {
                return true;
            }
        }
        return false;
    }

    private record Body(ReadBuffer bytes, int records, long startNanos) {
    }
}
