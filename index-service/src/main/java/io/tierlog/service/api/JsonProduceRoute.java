package io.tierlog.service.api;

import io.tierlog.http.JsonProduce;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceResult;
import io.tierlog.service.PooledArrays;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.service.http.RequestBody;
import io.tierlog.service.ops.PostAppend;
import io.tierlog.service.topics.TopicAdmin;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

/**
 * {@code POST /v1/topics/{topic}/records} with a JSON body (api.md, "Produce"): the same checks, append, problems and
 * answer as {@link RecordsResource#produce}, which documents it in the OpenAPI and still answers the requests this
 * route leaves to it: bodies without a {@code Content-Length} (chunked) and requests whose {@code Accept} does not
 * take JSON (JAX-RS's content negotiation answers those, as before).
 *
 * <p>A Vert.x route, as {@link BatchProduceRoute}, so that the body is copied once from the network buffers into a
 * pooled heap array of its declared size ({@link RequestBody#readArray}) and parsed there; the array goes back to the
 * pool as soon as the body is encoded into its record batches, before the append. Through Quarkus REST the
 * body was gathered into a buffer grown chunk by chunk (each growth a copy of all that came before) and then copied
 * again into a byte array of its own: in a profile of 1 MB JSON requests into the page cache, those two copies took
 * more of the event loops' time than the parse and append took of the workers'. The append (file lock, write, fsync
 * when configured) runs on the worker pool, as the record-batch produce's does.
 */
@Singleton
public class JsonProduceRoute {
    private final IngestService ingest;
    private final PostAppend postAppend;
    private final PooledArrays arrays = new PooledArrays();
    private final int maxRequestBytes;

    public JsonProduceRoute(IngestService ingest, PostAppend postAppend, TierlogConfig config) {
        this.ingest = ingest;
        this.postAppend = postAppend;
        this.maxRequestBytes = config.maxRequestBytes();
    }

    /** The arrays bodies are read into; for tests. */
    PooledArrays arrays() {
        return arrays;
    }

    void install(@Observes Router router) {
        // After RequestSizeRoute (order -100), which has refused a declared length over the limit unread, and
        // BatchProduceRoute (-99), which answers Content-Type record-batches.
        router.post("/v1/topics/:topic/records").order(-98).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        long declared = RequestBody.declaredLength(request);
        if (declared < 0 || declared > maxRequestBytes || RecordBatchesMedia.namedIn(request.getHeader("Content-Type"))
                || !JsonFetchRoute.acceptsJson(request.getHeader("Accept"))) {
            ctx.next();
            return;
        }
        long start = System.nanoTime();
        String topic = ctx.pathParam("topic");
        RequestBody.answerOnWorker(ctx, RequestBody.readArray(request, arrays, (int) declared),
                body -> produce(topic, body, start));
    }

    /** On a worker: checks, append, wake-ups; the response body. */
    private byte[] produce(String topic, RequestBody.InArray body, long startNanos) {
        TopicAdmin.requirePublic(topic);
        // The body goes back to the pool once encoded, not after the append and its fsync wait: with 40 requests
        // in flight the pool then holds the bodies being read and parsed, not also those waiting for their fsync.
        ProduceResult result = JsonProduce.produce(ingest, topic, body.bytes(), body.length(), body::close);
        postAppend.appended(topic, result, body.length(), startNanos);
        return JsonProduce.answer(result);
    }
}
