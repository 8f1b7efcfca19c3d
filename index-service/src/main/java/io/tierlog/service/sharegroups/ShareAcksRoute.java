package io.tierlog.service.sharegroups;

import io.tierlog.log.Names;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.api.JsonFetchRoute;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.http.RequestBody;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.sharegroups.ShareGroups;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

/**
 * {@code POST /v1/share-groups/{group}/topics/{topic}/acks} (api.md, "Share groups"): the same checks, problems and
 * answer as {@link ShareGroupsResource#acks}, which documents it in the OpenAPI.
 *
 * <p>A Vert.x route, as the lease ({@link ShareLeaseRoute}): every lease of a share-group worker is followed by an acks
 * request of as many acks, and through Quarkus REST about a third of the event loops' samples in the share benchmark
 * were its request and response framing, with the body read into a tree-free but event-loop-bound parse. Here the
 * body is read once into pooled memory, and the parse, the acknowledgement (and its state commit) and the rendering
 * of the results all run on the read pool, off the event loop.
 */
@Singleton
public class ShareAcksRoute {
    private final ShareGroups shares;
    private final PooledDirectMemory memory;
    private final ExecutorService readPool;
    private final int maxRequestBytes;

    public ShareAcksRoute(ShareGroups shares, PooledDirectMemory memory, ServiceThreads threads, TierlogConfig config) {
        this.shares = shares;
        this.memory = memory;
        this.readPool = threads.reads();
        this.maxRequestBytes = config.maxRequestBytes();
    }

    void install(@Observes Router router) {
        // After AccessFilter (order -1000): identity and scope are checked before this runs. The body limit is
        // enforced by RequestBody.read below, as for the lease.
        router.post("/v1/share-groups/:group/topics/:topic/acks").order(-99).handler(this::handle);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        if (!JsonFetchRoute.acceptsJson(request.getHeader("Accept"))) {
            ctx.next(); // left to JAX-RS's content negotiation, as the lease route does
            return;
        }
        String group = ctx.pathParam("group");
        String topic = ctx.pathParam("topic");
        RequestBody.answerAsync(ctx, memory, maxRequestBytes, body -> {
            // The JAX-RS method's checks, in its order: group, topic, then the body.
            Names.requireValidGroup(group);
            TopicAdmin.requirePublic(topic);
            return CompletableFuture.supplyAsync(() -> ShareJson.results(shares.acknowledge(group, topic,
                    ShareJson.acks(body))), readPool);
        }, ShareAcksRoute::send);
    }

    private static void send(HttpServerResponse response, byte[] answer) {
        if (response.closed() || response.ended()) {
            return;
        }
        response.putHeader("Content-Type", "application/json").end(Buffer.buffer(answer));
    }
}
