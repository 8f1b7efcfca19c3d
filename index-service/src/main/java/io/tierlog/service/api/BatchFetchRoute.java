package io.tierlog.service.api;

import io.netty.buffer.Unpooled;
import io.tierlog.log.BatchRead;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.service.http.ProblemMapper;
import io.tierlog.service.http.RecordBatchesMedia;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

/**
 * {@code GET /v1/topics/{topic}/partitions/{p}/records} with {@code Accept: application/vnd.tierlog.record-batches}
 * (api.md, "Fetch"; {@link RecordBatchesMedia}): the stored batches from an offset, with the same parameters,
 * long-poll and problems as the JSON fetch of {@link RecordsResource}, which answers every other Accept.
 *
 * <p>A Vert.x route rather than JAX-RS because the bytes' lifetime must be explicit: they are read from the segment
 * file straight into pooled direct memory ({@link io.tierlog.service.PooledDirectMemory}), the event loop writes
 * that memory to the socket as it is, and the memory goes back to the pool when the write completes, which only a
 * write's own future tells. JAX-RS would copy the bytes into a buffer of its own first.
 */
@Singleton
public class BatchFetchRoute {
    private final TopicStore topics;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService readPool;
    private final ServiceMetrics metrics;
    private final int maxRecordsLimit;

    public BatchFetchRoute(TopicStore topics, PartitionReads reads, AppendWatcher watcher, ServiceThreads threads,
                           ServiceMetrics metrics, TierlogConfig config) {
        this.topics = topics;
        this.reads = reads;
        this.watcher = watcher;
        this.readPool = threads.reads();
        this.metrics = metrics;
        this.maxRecordsLimit = config.fetch().maxRecordsLimit();
    }

    void install(@Observes Router router) {
        router.get("/v1/topics/:topic/partitions/:partition/records").order(-100).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        if (!RecordBatchesMedia.namedIn(request.getHeader("Accept"))) {
            ctx.next();
            return;
        }
        Context context = Vertx.currentContext();
        String topic = ctx.pathParam("topic");
        String partition = ctx.pathParam("partition");
        try {
            RecordBatchesMedia.requireNoEncoding(request.getParam("encoding"));
            FetchParams params = FetchParams.parse(request.getParam("offset"), request.getParam("maxRecords"),
                    request.getParam("maxBytes"), request.getParam("waitMs"), maxRecordsLimit);
            CompletableFuture.supplyAsync(() -> fetch(topic, partition, params), readPool)
                    .thenCompose(timed -> timed)
                    .whenComplete((timed, error) -> context.runOnContext(v -> {
                        if (error != null) {
                            ProblemMapper.respond(ctx.response(), error);
                        } else {
                            send(ctx.response(), timed);
                        }
                    }));
        } catch (RuntimeException e) {
            // Bad parameters, or a read pool that no longer takes work (the service is stopping).
            ProblemMapper.respond(ctx.response(), e);
        }
    }

    /** Runs on the read pool: the first read, and after a long-poll's wake-up the second, on the pool again. */
    private CompletableFuture<TimedFetch> fetch(String topic, String partition, FetchParams params) {
        long start = System.nanoTime();
        TopicPartition tp = PartitionRequests.resolve(topics, topic, partition);
        BatchFetch first = reads.fetchBatches(tp, params.offset(), params.maxRecords(), params.maxBytes());
        if (!first.batches().isEmpty() || params.waitMs() == 0) {
            return CompletableFuture.completedFuture(new TimedFetch(first, start));
        }
        // Resolved again after the wait: a topic deleted meanwhile answers 404 unknown-topic, not 416.
        return PartitionRequests.awaitBeyond(watcher, topics, tp, params.offset(), Duration.ofMillis(params.waitMs()))
                .thenApplyAsync(arrived -> new TimedFetch(reads.fetchBatches(PartitionRequests.resolve(topics, topic,
                        partition), params.offset(), params.maxRecords(), params.maxBytes()), System.nanoTime()), readPool);
    }

    /** On the connection's event loop: headers, then the read's own memory as the body, given back once written. */
    private void send(HttpServerResponse response, TimedFetch timed) {
        BatchFetch fetch = timed.fetch();
        BatchRead batches = fetch.batches();
        if (response.closed() || response.ended()) {
            batches.close();
            return;
        }
        try {
            metrics.fetched(batches.records(), batches.length(), System.nanoTime() - timed.startNanos());
            response.putHeader("Content-Type", RecordBatchesMedia.TYPE)
                    .putHeader(RecordBatchesMedia.NEXT_OFFSET, Long.toString(fetch.nextOffset()))
                    .putHeader(RecordBatchesMedia.HIGH_WATERMARK, Long.toString(fetch.highWatermark()))
                    .putHeader(RecordBatchesMedia.LOG_START_OFFSET, Long.toString(fetch.logStartOffset()))
                    .end(Buffer.buffer(Unpooled.wrappedBuffer(batches.buffer())))
                    .onComplete(written -> batches.close());
        } catch (RuntimeException e) {
            batches.close();
            throw e;
        }
    }

    /** A fetch and when its serving began (the wake-up, after a long-poll), for the fetch timer. */
    private record TimedFetch(BatchFetch fetch, long startNanos) {
    }
}
