package io.tierlog.service.api;

import io.tierlog.http.JsonProduce;
import io.tierlog.http.QueryParams;
import io.tierlog.http.Encoding;
import io.tierlog.http.Isolation;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.ops.PostAppend;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.http.doc.ApiSchemas;
import io.tierlog.service.http.doc.ProblemResponses;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;
import io.vertx.core.Vertx;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;

/**
 * Produce, fetch (with long-poll) and offset lookup (api.md, "Produce" and "Fetch"). Produce runs
 * {@link IngestService}, the same code as the ingest function, then wakes this process's long-polls and
 * streams on the partitions it appended to.
 */
@Path("/v1/topics/{topic}")
@Tag(name = "records")
public class RecordsResource {
    private final IngestService ingest;
    private final TopicStore topics;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final PostAppend postAppend;
    private final ExecutorService readPool;
    private final ServiceMetrics metrics;
    private final TierlogConfig config;
    private final Vertx vertx;
    private final Clock clock;

    public RecordsResource(IngestService ingest, TopicStore topics, PartitionReads reads, AppendWatcher watcher,
                           PostAppend postAppend, ServiceThreads threads, ServiceMetrics metrics, TierlogConfig config,
                           Vertx vertx, Clock clock) {
        this.vertx = vertx;
        this.clock = clock;
        this.ingest = ingest;
        this.topics = topics;
        this.reads = reads;
        this.watcher = watcher;
        this.postAppend = postAppend;
        this.readPool = threads.reads();
        this.metrics = metrics;
        this.config = config;
    }

    @POST
    @Path("records")
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Produce records", description = "Body {\"records\": [{key, value, headers, partition, "
            + "timestamp}], \"encoding\": json|base64, \"producer\": {id, epoch, sequence | sequences: "
            + "{\"<partition>\": s}}}; a sequence counts records per (producer, partition), as in Kafka. "
            + "200 {\"offsets\": [...]}. "
            + "413 request-too-large / record-too-large; 409 out-of-order-sequence / fenced-producer. With Content-Type "
            + RecordBatchesMedia.TYPE + " and ?partition=P (required) the body is one or more Kafka RecordBatch v2 "
            + "batches as a Kafka producer builds them, uncompressed or compressed with gzip, snappy, lz4 or zstd "
            + "(stored compressed); they are validated (CRC, offsets, sizes) and appended as one batch, under offsets "
            + "the log assigns. A producer id in the batch header makes that append idempotent as the JSON producer "
            + "fields do (baseSequence as a Kafka producer sets it: it counts records).")
    @RequestBody(required = true, content = {
            @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.ProduceRequest.class)),
            @Content(mediaType = RecordBatchesMedia.TYPE, schema = @Schema(implementation = ApiSchemas.RecordBatches.class))})
    @APIResponse(responseCode = "200", description = "Appended (durable by the fsync policy), or a duplicate retry",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ApiSchemas.ProduceResponse.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_PARTITION)
    @APIResponse(responseCode = "409", ref = ProblemResponses.PRODUCER_CONFLICT)
    @APIResponse(responseCode = "413", ref = ProblemResponses.TOO_LARGE)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public CompletionStage<Response> produce(@PathParam("topic") String topic, byte[] body) {
        // Requests with Content-Type record-batches never get here: BatchProduceRoute answers them, so that their
        // bytes reach the segment file with one copy; nor do JSON bodies with a Content-Length whose Accept takes
        // JSON, which JsonProduceRoute reads into a pooled array. This method answers the rest as JSON, whatever
        // the Content-Type says (api.md: a missing or other Content-Type is read as JSON).
        // Returning a CompletionStage makes this endpoint non-blocking, so Quarkus REST buffers the body on the
        // event loop before calling it (up to quarkus.rest.input-buffer-size, set to hold a whole request); a
        // blocking endpoint, or a larger body, is read through a blocking stream on a worker, one hand-off per
        // network chunk, which cost several times the append itself for a 1 MB request. The append (file lock,
        // write, fsync) then runs on the worker pool.
        long start = System.nanoTime();
        return vertx.executeBlocking(() -> {
            TopicAdmin.requirePublic(topic);
            ProduceResult result = JsonProduce.produce(ingest, topic, body);
            postAppend.appended(topic, result, body.length, start);
            return Response.ok(JsonProduce.answer(result), MediaType.APPLICATION_JSON).build();
        }, false).toCompletionStage();
    }

    @GET
    @Path("partitions/{partition}/records")
    @Produces({MediaType.APPLICATION_JSON, RecordBatchesMedia.TYPE})
    @Operation(summary = "Fetch records from an offset", description = "offset (required), maxRecords (default 500, "
            + "max 10000), maxBytes (default 1 MiB), waitMs (0..30000: long-poll when offset == highWatermark), "
            + "encoding json|base64, isolation read_uncommitted|read_committed (read_committed: up to the last "
            + "stable offset, never a record of an aborted Kafka transaction, and lastStableOffset in the body or the "
            + RecordBatchesMedia.LAST_STABLE_OFFSET + " header). 416 offset-out-of-range carries logStartOffset and highWatermark. With Accept: "
            + RecordBatchesMedia.TYPE + " the body is the stored Kafka RecordBatch v2 bytes, whole batches (the first "
            + "may start below offset), and the extent is in the Tierlog-Next-Offset, Tierlog-High-Watermark and "
            + "Tierlog-Log-Start-Offset headers.")
    @APIResponse(responseCode = "200", description = "Records from offset (none at the high watermark once waitMs "
            + "has passed)", content = {
            @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.FetchResponse.class)),
            @Content(mediaType = RecordBatchesMedia.TYPE, schema = @Schema(implementation = ApiSchemas.RecordBatches.class))},
            headers = {
            @Header(name = RecordBatchesMedia.NEXT_OFFSET, description = "Record batches only",
                    schema = @Schema(type = SchemaType.INTEGER)),
            @Header(name = RecordBatchesMedia.HIGH_WATERMARK, description = "Record batches only",
                    schema = @Schema(type = SchemaType.INTEGER)),
            @Header(name = RecordBatchesMedia.LOG_START_OFFSET, description = "Record batches only",
                    schema = @Schema(type = SchemaType.INTEGER))})
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_PARTITION)
    @APIResponse(responseCode = "416", ref = ProblemResponses.OFFSET_OUT_OF_RANGE)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public CompletionStage<Response> fetch(@PathParam("topic") String topic, @PathParam("partition") String partition,
                                           @QueryParam("offset") String offsetParam,
                                           @QueryParam("maxRecords") String maxRecordsParam,
                                           @QueryParam("maxBytes") String maxBytesParam,
                                           @QueryParam("waitMs") String waitMsParam,
                                           @QueryParam("encoding") String encodingParam,
                                           @QueryParam("isolation") String isolationParam) {
        // Requests that accept record batches never get here: BatchFetchRoute answers them, so that their bytes
        // can go from file to socket in memory it gives back once written; nor do those that name JSON or a
        // wildcard, which JsonFetchRoute answers, for the same reason. This method answers the rest as JSON.
        // Parameter checks need no I/O and run on the calling (event-loop) thread; every file read runs on the
        // read pool, and a long-poll holds no thread while it waits.
        FetchParams params = FetchParams.parse(offsetParam, maxRecordsParam, maxBytesParam, waitMsParam, isolationParam,
                config.fetch().maxRecordsLimit());
        Encoding encoding = PartitionRequests.encoding(encodingParam);
        // The read and the rendering both happen inside the pool task. A stage chained with thenCompose would run
        // on whichever thread attaches it when the task is already done, which is often the event loop.
        return CompletableFuture.supplyAsync(() -> JsonFetch.fetchAndWait(reads, watcher, topics, topic, partition,
                params, encoding, clock, readPool, this::respond, r -> { }), readPool).thenCompose(response -> response);
    }

    private Response respond(JsonFetch.Rendered rendered, long startNanos) {
        byte[] body = rendered.out().toByteArray();
        metrics.fetched(rendered.records(), body.length, System.nanoTime() - startNanos);
        return Response.ok(body, MediaType.APPLICATION_JSON).build();
    }

    @GET
    @Path("partitions/{partition}/offsets")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Look up an offset", description = "?timestamp=T → {offset, timestamp}: the first record "
            + "with timestamp >= T and that record's own timestamp, as Kafka's ListOffsets (offset = highWatermark, "
            + "timestamp = -1 when none); ?at=earliest|latest → {offset}: logStartOffset / highWatermark. "
            + "isolation=read_committed: the last stable offset stands for the high watermark.")
    @APIResponse(responseCode = "200", description = "The offset",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ApiSchemas.OffsetLookup.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_PARTITION)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public Map<String, Object> offsets(@PathParam("topic") String topic, @PathParam("partition") String partition,
                                       @QueryParam("timestamp") String timestampParam, @QueryParam("at") String at,
                                       @QueryParam("isolation") String isolationParam) {
        if ((timestampParam == null) == (at == null)) {
            throw Requests.bad(at == null ? "timestamp" : "at", "give exactly one of timestamp=T or at=earliest|latest");
        }
        Isolation isolation = Isolation.parse(isolationParam);
        TopicPartition tp = PartitionRequests.resolve(topics, topic, partition);
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        if (at != null) {
            switch (at.toLowerCase(Locale.ROOT)) {
                case "earliest" -> out.put("offset", reads.state(tp).logStartOffset());
                case "latest" -> out.put("offset", isolation == Isolation.READ_COMMITTED
                        ? reads.lastStableOffset(tp) : reads.highWatermark(tp));
                default -> throw Requests.bad("at", "at must be 'earliest' or 'latest', not '" + Requests.shorten(at) + "'");
            }
            return out;
        }
        long timestamp = QueryParams.integer(timestampParam, "timestamp", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        OffsetAndTimestamp found = reads.listOffset(tp, timestamp);
        long stable = isolation == Isolation.READ_COMMITTED ? reads.lastStableOffset(tp) : Long.MAX_VALUE;
        if (found.offset() >= stable) {
            // As Kafka's ListOffsets at read_committed: a record at or past the last stable offset is not found yet.
            found = new OffsetAndTimestamp(stable, -1);
        }
        out.put("offset", found.offset());
        out.put("timestamp", found.timestamp());
        return out;
    }
}
