package io.tierlog.service.api;

import io.tierlog.http.JsonProduce;
import io.tierlog.http.QueryParams;
import io.tierlog.ingest.BatchProduceResult;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.ReadBuffer;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.ops.PostAppend;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.http.RequestBody;
import io.tierlog.service.http.RequestSizeRoute;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

/**
 * {@code POST /v1/topics/{topic}/records?partition=P} with {@code Content-Type: application/vnd.tierlog.record-batches}
 * (api.md, "Produce"; {@link RecordBatchesMedia}): Kafka record batches a client built, validated and appended as
 * they are. {@link RecordsResource} answers every other Content-Type, and documents this one in the OpenAPI.
 *
 * <p>A Vert.x route rather than JAX-RS so that the body goes from the network to the segment file with one copy in
 * between ({@link RequestBody}): Quarkus REST gathers a body, copies it to a byte array, and the JDK copies that
 * again into a temporary direct buffer for the file write, a cost that shows under load (docs/BENCHMARKS.md). The
 * append (file lock, write, fsync) runs on the worker pool, as the JSON produce's does.
 */
@Singleton
public class BatchProduceRoute {
    private final IngestService ingest;
    private final PostAppend postAppend;
    private final PooledDirectMemory memory;
    private final int maxRequestBytes;

    public BatchProduceRoute(IngestService ingest, PostAppend postAppend, PooledDirectMemory memory,
                             TierlogConfig config) {
        this.ingest = ingest;
        this.postAppend = postAppend;
        this.memory = memory;
        this.maxRequestBytes = config.maxRequestBytes();
    }

    void install(@Observes Router router) {
        // After RequestSizeRoute (order -100), which has refused a declared length over the limit unread.
        router.post("/v1/topics/:topic/records").order(-99).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        if (!RecordBatchesMedia.namedIn(request.getHeader("Content-Type"))) {
            ctx.next();
            return;
        }
        long start = System.nanoTime();
        String topic = ctx.pathParam("topic");
        String partition = request.getParam("partition");
        RequestBody.answerOnWorker(ctx, RequestBody.read(request, memory, maxRequestBytes),
                body -> produce(topic, partition, body, start));
    }

    /** On a worker: checks, append, wake-ups; the response body. */
    private byte[] produce(String topic, String partitionParam, ReadBuffer body, long startNanos) {
        int partition = QueryParams.producePartition(partitionParam);
        TopicAdmin.requirePublic(topic);
        int length = body.memory().remaining();
        BatchProduceResult result = ingest.produceBatches(topic, partition, body.memory());
        postAppend.appended(topic, result, length, startNanos);
        return JsonProduce.answer(result);
    }
}
