package io.tierlog.service.sharegroups;

import io.netty.buffer.Unpooled;
import io.tierlog.log.ReadBuffer;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.api.JsonFetchRoute;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.http.RequestBody;
import io.tierlog.service.read.PartitionReads;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.nio.ByteBuffer;

/**
 * {@code POST /v1/share-groups/{group}/topics/{topic}/lease} (api.md, "Share groups"): the same checks, long-poll,
 * problems and body as {@link ShareGroupsResource#lease}, which documents it in the OpenAPI.
 *
 * <p>A Vert.x route, as the JSON fetch ({@code JsonFetchRoute}), so that the answer (about 700 KB for 500 records of
 * 1 KiB) is copied once, from the read thread's buffer into pooled direct memory that the event loop writes to the
 * socket as it is and gives back once written. Through JAX-RS it went through two more copies (a byte array, then
 * Netty's buffer), which showed in profiles of the share benchmark.
 *
 * <p>With {@code Accept: application/vnd.tierlog.leased-batches} ({@link LeaseBatchesMedia}) the same lease is answered
 * as leased record batches ({@link LeaseAnswerBatches}): the stored batches go from the read's pooled memory to the
 * socket with a small header of lease strings in front, and no record is rendered; with {@code Accept:
 * application/vnd.tierlog.leased-ranges} that header names runs under range leases (ADR 0042).
 */
@Singleton
public class ShareLeaseRoute {
    private final ShareLeases leases;
    private final PartitionReads reads;
    private final PooledDirectMemory memory;
    private final int maxRequestBytes;

    public ShareLeaseRoute(ShareLeases leases, PartitionReads reads, PooledDirectMemory memory, TierlogConfig config) {
        this.leases = leases;
        this.reads = reads;
        this.memory = memory;
        this.maxRequestBytes = config.maxRequestBytes();
    }

    void install(@Observes Router router) {
        // After AccessFilter (order -1000): identity and scope are checked before this runs. The body limit is
        // enforced by RequestBody.read below (RequestSizeRoute covers produce only).
        router.post("/v1/share-groups/:group/topics/:topic/lease").order(-99).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        String accept = request.getHeader("Accept");
        boolean ranges = LeaseBatchesMedia.rangesNamedIn(accept);
        boolean batches = ranges || LeaseBatchesMedia.namedIn(accept);
        if (!batches && !JsonFetchRoute.acceptsJson(accept)) {
            ctx.next(); // left to JAX-RS's content negotiation, as before this route
            return;
        }
        String group = ctx.pathParam("group");
        String topic = ctx.pathParam("topic");
        if (batches) {
            // Same checks, lease and long-poll; only the answer's form differs (LeaseAnswerBatches).
            String type = ranges ? LeaseBatchesMedia.RANGES : LeaseBatchesMedia.TYPE;
            RequestBody.answerAsync(ctx, memory, maxRequestBytes, body -> leases.lease(group, topic, body,
                    () -> new LeaseAnswerBatches(reads, ranges), LeaseAnswerBatches::abandon,
                    answer -> answer.finish(memory)), (response, answer) -> sendBatches(response, answer, type));
        } else {
            RequestBody.answerAsync(ctx, memory, maxRequestBytes,
                    body -> leases.lease(group, topic, body, answer -> answer.finish(memory)), ShareLeaseRoute::sendJson);
        }
    }

    /** On the connection's event loop: the header and the batches in one gathering write, given back once written. */
    private static void sendBatches(HttpServerResponse response, LeaseAnswerBatches.Answer answer, String type) {
        if (response.closed() || response.ended()) {
            answer.close();
            return;
        }
        try {
            response.putHeader("Content-Type", type)
                    .end(Buffer.buffer(Unpooled.wrappedBuffer(answer.parts().toArray(ByteBuffer[]::new))))
                    .onComplete(written -> answer.close());
        } catch (RuntimeException e) {
            answer.close();
            throw e;
        }
    }

    /** On the connection's event loop: the body, given back once written. */
    private static void sendJson(HttpServerResponse response, ReadBuffer body) {
        if (response.closed() || response.ended()) {
            body.close();
            return;
        }
        try {
            response.putHeader("Content-Type", "application/json")
                    .end(Buffer.buffer(Unpooled.wrappedBuffer(body.memory())))
                    .onComplete(written -> body.close());
        } catch (RuntimeException e) {
            body.close();
            throw e;
        }
    }
}
