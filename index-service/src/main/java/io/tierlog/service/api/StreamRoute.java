package io.tierlog.service.api;

import io.tierlog.http.QueryParams;
import io.tierlog.http.Encoding;
import io.tierlog.http.Isolation;
import io.tierlog.log.BatchRead;
import io.tierlog.log.ReadBuffer;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.CommittedFetch;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.service.http.Problem;
import io.tierlog.service.http.ProblemMapper;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.http.Requests;
import io.micrometer.core.instrument.Counter;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

/**
 * {@code GET /v1/topics/{topic}/partitions/{p}/stream}: Server-Sent Events, one event per record
 * ({@code id: <offset>}, {@code event: record}, {@code data: <record JSON>}), replaying from the start offset and
 * then tailing live appends. Start: {@code Last-Event-ID: K} resumes at K+1; else {@code ?offset=N|earliest|latest}
 * (default {@code latest}) or {@code ?timestamp=T}. A comment line is sent after every
 * {@code tierlog.stream.heartbeat-interval} without records. If retention overtakes a stream, an
 * {@code event: error} carrying the offset-out-of-range problem ends it; when the service stops, a
 * {@code retry:} line ends it. With
 * {@code Accept: application/vnd.tierlog.record-batches} the body is the stored record batches back to back instead
 * ({@link RecordBatchesMedia}); such a stream has no heartbeat, and an error breaks it off without its final chunk.
 *
 * <p>Served by a Vert.x route rather than JAX-RS so that flow control is explicit: each step reads one bounded
 * batch ({@code tierlog.stream.batch-records}, at most 1 MiB) on the read pool and hands it to the connection's
 * event loop, which writes it once Vert.x's write queue has room and then starts the next read, so reading the next
 * batch overlaps sending this one. A slow client therefore costs at most one batch plus the write queue of memory,
 * and a waiting stream holds no thread.
 */
@Singleton
public class StreamRoute {
    private static final Logger LOG = Logger.getLogger(StreamRoute.class);
    private static final int MAX_BATCH_BYTES = 1024 * 1024;
    private static final Runnable NOTHING = () -> { };
    /** The {@code retry:} an SSE stream ends with when the service stops: reconnect soon, to whichever node answers. */
    static final int SHUTDOWN_RETRY_MILLIS = 1000;

    private final TopicStore topics;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService pool;
    private final Duration heartbeat;
    private final int batchRecords;
    private final Counter recordsSent;
    private final PooledDirectMemory memory;

    public StreamRoute(TopicStore topics, PartitionReads reads, AppendWatcher watcher, ServiceThreads threads,
                       TierlogConfig config, Meters meters, PooledDirectMemory memory) {
        this.memory = memory;
        this.topics = topics;
        this.reads = reads;
        this.watcher = watcher;
        this.pool = threads.reads();
        this.heartbeat = config.stream().heartbeatInterval();
        this.batchRecords = config.stream().batchRecords();
        this.recordsSent = meters.streamRecordsSent();
    }

    void install(@Observes Router router) {
        router.get("/v1/topics/:topic/partitions/:partition/stream").order(-100).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        Context context = Vertx.currentContext();
        String topic = ctx.pathParam("topic");
        String partition = ctx.pathParam("partition");
        String lastEventId = ctx.request().getHeader("Last-Event-ID");
        String offset = ctx.request().getParam("offset");
        String timestamp = ctx.request().getParam("timestamp");
        boolean batches = RecordBatchesMedia.namedIn(ctx.request().getHeader("Accept"));
        Encoding encoding;
        Isolation isolation;
        try {
            isolation = Isolation.parse(ctx.request().getParam(Isolation.FIELD));
            if (batches) {
                RecordBatchesMedia.requireNoEncoding(ctx.request().getParam("encoding"));
            }
            encoding = PartitionRequests.encoding(ctx.request().getParam("encoding"));
        } catch (RuntimeException e) {
            fail(ctx, e);
            return;
        }
        pool.execute(() -> {
            long start;
            TopicPartition tp;
            try {
                tp = PartitionRequests.resolve(topics, topic, partition);
                start = startOffset(tp, lastEventId, offset, timestamp, isolation);
            } catch (RuntimeException e) {
                context.runOnContext(v -> fail(ctx, e));
                return;
            }
            context.runOnContext(v -> new Session(ctx, context, tp, start, batches ? null : encoding, isolation).begin());
        });
    }

    private long startOffset(TopicPartition tp, String lastEventId, String offset, String timestamp,
                             Isolation isolation) {
        long hw = reads.highWatermark(tp);
        long lso = Math.min(reads.logStartOffset(tp), hw);
        long start;
        if (lastEventId != null && !lastEventId.isBlank()) {
            start = QueryParams.integer(lastEventId, "Last-Event-ID", 0, -1, Long.MAX_VALUE - 1) + 1;
        } else if (timestamp != null) {
            if (offset != null) {
                throw Requests.bad("timestamp", "give either offset or timestamp, not both");
            }
            start = reads.offsetForTimestamp(tp, QueryParams.integer(timestamp, "timestamp", 0, Long.MIN_VALUE,
                    Long.MAX_VALUE));
        } else if (offset == null || offset.equalsIgnoreCase("latest")) {
            // A read_committed stream starts where its reader may read up to, as a Kafka consumer's "latest" does.
            start = isolation == Isolation.READ_COMMITTED ? reads.lastStableOffset(tp) : hw;
        } else if (offset.equalsIgnoreCase("earliest")) {
            start = lso;
        } else {
            start = QueryParams.integer(offset.toLowerCase(Locale.ROOT), "offset", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        }
        PartitionReads.requireInRange(tp, start, lso, hw);
        return start;
    }

    private static void fail(RoutingContext ctx, Throwable e) {
        ProblemMapper.respond(ctx.response(), e);
    }

    /**
     * One client's stream. Reads run on the pool, writes on the connection's context; one read at a time. With a
     * null encoding it carries record batches ({@link RecordBatchesMedia}) instead of SSE: the stored bytes back to
     * back, with nothing between them, so there is no heartbeat (a comment would not be a batch).
     */
    private final class Session {
        private final RoutingContext ctx;
        private final HttpServerResponse response;
        private final Context context;
        private final TopicPartition tp;
        private final Encoding encoding;
        private final Isolation isolation;
        private volatile boolean closed;
        private volatile CompletableFuture<Boolean> waiting;
        /**
         * Gives back a buffer waiting for the write queue to drain, when the connection closes. Vert.x also runs the
         * drain handler on a close (the queued writes fail), which gives it back too; this does not rely on that.
         * Used on the connection's event loop only.
         */
        private Runnable parked;
        private long next;
        /** Where the log must grow past before a read can find more: {@link #next}, or what an open transaction holds back. */
        private long waitBeyond;

        Session(RoutingContext ctx, Context context, TopicPartition tp, long start, Encoding encoding,
                Isolation isolation) {
            this.isolation = isolation;
            this.ctx = ctx;
            this.response = ctx.response();
            this.context = context;
            this.tp = tp;
            this.next = start;
            this.encoding = encoding;
        }

        void begin() {
            response.setChunked(true);
            response.putHeader("Content-Type", encoding == null ? RecordBatchesMedia.TYPE : "text/event-stream");
            response.putHeader("Cache-Control", "no-cache");
            response.putHeader("X-Accel-Buffering", "no");
            response.closeHandler(v -> close());
            response.exceptionHandler(e -> close());
            // Commit the headers now so the client knows the stream is open before the first record.
            if (encoding == null) {
                response.writeHead();
            } else {
                response.write(": tierlog stream " + tp + " from offset " + next + "\n\n");
            }
            pool.execute(this::step);
        }

        private void close() {
            closed = true;
            Runnable release = parked;
            parked = null;
            if (release != null) {
                release.run();
            }
            CompletableFuture<Boolean> w = waiting;
            if (w != null) {
                w.cancel(false);
            }
        }

        private void step() {
            if (closed) {
                return;
            }
            if (watcher.isClosed()) {
                endForShutdown();
                return;
            }
            try {
                if (encoding == null) {
                    BatchRead read = read();
                    while (read.isEmpty() && read.nextOffset() > next) {
                        next = read.nextOffset();   // all it read was aborted: read on
                        read.close();
                        read = read();
                    }
                    if (!read.isEmpty()) {
                        next = read.nextOffset();
                        // The read's own memory, sent without a copy and given back once written (or dropped).
                        writeThenContinue(Buffer.buffer(Unpooled.wrappedBuffer(read.buffer())), read.records(),
                                read::close);
                        return;
                    }
                    read.close();
                } else {
                    ReadBuffer events = sseEvents();
                    if (events != null) {
                        writeThenContinue(Buffer.buffer(Unpooled.wrappedBuffer(events.memory())), lastCount,
                                events::close);
                        return;
                    }
                }
                // Caught up: a topic deleted meanwhile ends the stream (unknown-topic) rather than tailing nothing.
                topics.get(tp.topic());
            } catch (RuntimeException e) {
                end(topicGoneOr(e));
                return;
            }
            CompletableFuture<Boolean> w = PartitionRequests.awaitBeyond(watcher, topics, tp, waitBeyond, heartbeat);
            waiting = w;
            if (closed) {
                w.cancel(false);
                return;
            }
            w.whenComplete((arrived, error) -> {
                if (closed) {
                    return;
                }
                if (!Boolean.TRUE.equals(arrived) && watcher.isClosed()) {
                    endForShutdown();
                } else if (Boolean.TRUE.equals(arrived) || encoding == null) {
                    pool.execute(this::step);
                } else {
                    writeThenContinue(Buffer.buffer(":\n\n".getBytes(StandardCharsets.UTF_8)), 0, NOTHING);
                }
            });
        }

        /**
         * The batches from {@link #next} this stream's isolation sees; sets {@link #waitBeyond} for when they are
         * none: at read_committed below an open transaction, the high watermark (only an append above it ends it).
         */
        private BatchRead read() {
            if (isolation == Isolation.READ_COMMITTED) {
                CommittedFetch c = reads.fetchCommitted(tp, next, batchRecords, MAX_BATCH_BYTES);
                waitBeyond = c.heldBack() ? Math.max(next, c.fetch().highWatermark()) : next;
                return c.fetch().batches();
            }
            waitBeyond = next;
            return reads.fetchBatches(tp, next, batchRecords, MAX_BATCH_BYTES).batches();
        }

        /** Records in the events {@link #sseEvents} rendered last. */
        private int lastCount;

        /**
         * The next records from {@code next} as SSE events, rendered straight from the stored batches
         * ({@link StoredJson}) and copied into pooled direct memory that is given back once written; null when there
         * is no record from {@code next} yet. Batches holding no record at or after {@code next} (compacted away)
         * are passed over.
         */
        private ReadBuffer sseEvents() {
            while (true) {
                JsonOut out = JsonOut.forThisThread();
                StoredJson json = StoredJson.events(out, tp, encoding, batchRecords, MAX_BATCH_BYTES);
                try (BatchRead read = read()) {
                    if (read.isEmpty()) {
                        if (read.nextOffset() > next) {
                            next = read.nextOffset();   // all it read was aborted
                            continue;
                        }
                        return null;
                    }
                    json.add(read.buffer(), next);
                    if (json.count() == 0) {
                        next = read.nextOffset();
                        continue;
                    }
                }
                next = json.lastOffset() + 1;
                lastCount = json.count();
                ReadBuffer bytes = memory.allocate(out.size());
                out.copyTo(bytes.memory(), 0);
                return bytes;
            }
        }

        /**
         * Writes a batch on the connection's context and reads the next one on the pool. Reading overlaps the
         * previous batch's draining: a batch that finds the write queue still full waits for its drain before it
         * is written, and no read starts until it is. So a stream holds at most the write queue plus one batch,
         * and a slow client stops the reads. {@code written} runs once the buffer is written or dropped.
         */
        private void writeThenContinue(Buffer buf, int records, Runnable written) {
            context.runOnContext(v -> {
                if (closed) {
                    written.run();
                    return;
                }
                if (response.writeQueueFull()) {
                    // Same event loop as the drain notification, so the drain cannot slip in between.
                    parked = written;
                    response.drainHandler(x -> {
                        response.drainHandler(null);
                        parked = null;
                        writeAndReadOn(buf, records, written);
                    });
                } else {
                    writeAndReadOn(buf, records, written);
                }
            });
        }

        private void writeAndReadOn(Buffer buf, int records, Runnable written) {
            if (closed) {
                written.run();
                return;
            }
            response.write(buf).onComplete(done -> written.run());
            recordsSent.increment(records);
            pool.execute(this::step);
        }

        /**
         * The service is stopping: ends the stream cleanly so that the graceful stop need not wait for it. An SSE
         * client is told to reconnect in a second ({@code retry:}), with {@code Last-Event-ID}, to another node or to
         * this one restarted; a batch stream ends with its final chunk, after whole batches only.
         */
        private void endForShutdown() {
            context.runOnContext(v -> {
                if (closed) {
                    return;
                }
                closed = true;
                if (encoding == null) {
                    response.end();
                } else {
                    response.end(": service stopping\nretry: " + SHUTDOWN_RETRY_MILLIS + "\n\n");
                }
            });
        }

        /** A read of a topic being deleted may fail in any way; once its metadata is gone, say so (404). */
        private RuntimeException topicGoneOr(RuntimeException e) {
            if (e instanceof TierlogException t && t.type() == ErrorType.UNKNOWN_TOPIC) {
                return e;
            }
            try {
                return topics.find(tp.topic()).isPresent() ? e : TopicStore.unknownTopic(tp.topic());
            } catch (RuntimeException unreadable) {
                return e;
            }
        }

        private void end(RuntimeException e) {
            context.runOnContext(v -> {
                if (closed) {
                    return;
                }
                Problem p = ProblemMapper.toProblem(e);
                if (p.problemType().isServerError()) {
                    LOG.errorf(e, "%s: stream at offset %d failed", tp, next);
                }
                closed = true;
                if (encoding == null) {
                    // A batch stream has no place for a problem: it breaks off without its final chunk, which a
                    // client tells from a clean end; reconnecting from its next offset answers the problem (416).
                    response.reset();
                    return;
                }
                response.end(Buffer.buffer("event: error\ndata: ").appendBytes(p.toJson()).appendString("\n\n"));
            });
        }
    }
}
