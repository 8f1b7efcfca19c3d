package io.tierlog.service.api;

import io.netty.buffer.Unpooled;
import io.tierlog.http.Isolation;
import io.tierlog.log.BatchRead;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.BatchFetch;
import io.tierlog.service.read.CommittedFetch;
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

import java.time.Clock;
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
    private final Clock clock;

    public BatchFetchRoute(TopicStore topics, PartitionReads reads, AppendWatcher watcher, ServiceThreads threads,
                           ServiceMetrics metrics, TierlogConfig config, Clock clock) {
        this.clock = clock;
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
                    request.getParam("maxBytes"), request.getParam("waitMs"), request.getParam(Isolation.FIELD),
                    maxRecordsLimit);
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

    /** Runs on the read pool: the first read, and after a long-poll's wake-up the next, on the pool again. */
    private CompletableFuture<TimedFetch> fetch(String topic, String partition, FetchParams params) {
        TopicPartition tp = PartitionRequests.resolve(topics, topic, partition);
        TimedFetch first = read(tp, params, System.nanoTime());
        if (first.waitBeyond(params.offset()) < 0 || params.waitMs() == 0) {
            return CompletableFuture.completedFuture(first);
        }
        return PartitionRequests.longPoll(watcher, topics, tp, first, params.waitMs(), clock, readPool,
                () -> read(PartitionRequests.resolve(topics, topic, partition), params, System.nanoTime()),
                f -> f.waitBeyond(params.offset()), f -> f.fetch().close());
    }

    private TimedFetch read(TopicPartition tp, FetchParams params, long startNanos) {
        if (params.isolation() == Isolation.READ_COMMITTED) {
            CommittedFetch c = reads.fetchCommitted(tp, params.offset(), params.maxRecords(), params.maxBytes());
            return new TimedFetch(c.fetch(), c.lastStableOffset(), startNanos);
        }
        return new TimedFetch(reads.fetchBatches(tp, params.offset(), params.maxRecords(), params.maxBytes()), -1,
                startNanos);
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
                    .putHeader(RecordBatchesMedia.LOG_START_OFFSET, Long.toString(fetch.logStartOffset()));
            if (timed.lastStableOffset() >= 0) {
                response.putHeader(RecordBatchesMedia.LAST_STABLE_OFFSET, Long.toString(timed.lastStableOffset()));
            }
            response.end(Buffer.buffer(Unpooled.wrappedBuffer(batches.buffer())))
                    .onComplete(written -> batches.close());
        } catch (RuntimeException e) {
            batches.close();
            throw e;
        }
    }

    /**
     * A fetch, the last stable offset it saw (-1 at read_uncommitted), and when its serving began (the wake-up, after
     * a long-poll), for the fetch timer.
     */
    private record TimedFetch(BatchFetch fetch, long lastStableOffset, long startNanos) {
        /**
         * -1 when the fetch answers (batches, or a next offset past the one asked for, as when all it read was
         * aborted); else where the log must grow past first: the offset, or the high watermark an open transaction
         * holds a read_committed reader below.
         */
        long waitBeyond(long offset) {
            if (!fetch.isEmpty() || fetch.nextOffset() > offset) {
                return -1;
            }
            return lastStableOffset >= 0 && lastStableOffset < fetch.highWatermark() ? fetch.highWatermark() : offset;
        }
    }
}
