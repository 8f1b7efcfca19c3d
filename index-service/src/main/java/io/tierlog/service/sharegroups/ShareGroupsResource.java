package io.tierlog.service.sharegroups;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.api.LeaseAnswerJson;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.sharegroups.LeasedRecord;
import io.tierlog.sharegroups.ShareGroups;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import io.tierlog.service.http.doc.ApiSchemas;
import io.tierlog.service.http.doc.ProblemResponses;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Share groups (api.md, "Share groups: queue semantics on the log"): lease, acks, config, describe, delete. Adapts
 * HTTP to {@link ShareGroups}; every file operation runs on the read pool, and a long-poll holds no thread while it
 * waits.
 */
@Path("/v1/share-groups")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "share-groups")
public class ShareGroupsResource {
    static final long MAX_WAIT_MS = 30_000;
    static final long MAX_LEASE_MS = 3_600_000;
    static final long DEFAULT_LEASE_MS = 30_000;
    static final int DEFAULT_MAX_RECORDS = 100;
    private static final Set<String> LEASE_FIELDS = Set.of("maxRecords", "leaseMs", "waitMs");

    private final ShareGroups shares;
    private final TopicStore topics;
    private final PartitionReads reads;
    private final AppendWatcher watcher;
    private final ExecutorService readPool;
    private final int maxRecordsLimit;
    private final Clock clock;
    private final Duration recheck;

    public ShareGroupsResource(ShareGroups shares, TopicStore topics, PartitionReads reads, AppendWatcher watcher,
                               ServiceThreads threads, TierlogConfig config, Clock clock) {
        this.shares = shares;
        this.topics = topics;
        this.reads = reads;
        this.watcher = watcher;
        this.readPool = threads.reads();
        this.maxRecordsLimit = config.fetch().maxRecordsLimit();
        this.clock = clock;
        this.recheck = config.share().longPollRecheck();
    }

    @POST
    @Path("{group}/topics/{topic}/lease")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Lease records", description = "Body {\"maxRecords\": 100, \"leaseMs\": 30000, \"waitMs\": 0}, "
            + "all optional. Answers {\"records\": [{\"lease\", \"partition\", \"offset\", \"deliveryCount\", "
            + "\"timestamp\", \"key\", \"value\", \"headers\"}]}; each record goes to no one else until it is "
            + "acknowledged or its lease expires. waitMs (max 30000) long-polls while nothing is available.")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.ShareLease.class)))
    @APIResponse(responseCode = "200", description = "The leased records, possibly none",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.LeasedRecords.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public CompletionStage<Response> lease(@PathParam("group") String group, @PathParam("topic") String topic,
                                           byte[] body) {
        Names.requireValidGroup(group);
        TopicAdmin.requirePublic(topic);
        ObjectNode req = Requests.object(body, LEASE_FIELDS);
        int maxRecords = (int) ShareJson.optionalLong(req, "maxRecords", DEFAULT_MAX_RECORDS, 1, maxRecordsLimit);
        long leaseMs = ShareJson.optionalLong(req, "leaseMs", DEFAULT_LEASE_MS, 1, MAX_LEASE_MS);
        long waitMs = ShareJson.optionalLong(req, "waitMs", 0, 0, MAX_WAIT_MS);
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        return CompletableFuture.supplyAsync(() -> attempt(group, topic, maxRecords, leaseMs, deadline), readPool)
                .thenCompose(r -> r);
    }

    /**
     * One lease attempt; when it gets nothing and time is left, waits for whichever comes first: an append to the
     * topic, an acknowledgement committed by this instance on the group's share-partitions (a release, or an accept
     * that moves a full window), the moment a lease runs out or a redelivery delay ends (by the injected clock), or
     * {@code tierlog.share.long-poll-recheck} (for releases made through other instances, which nothing here sees).
     */
    private CompletionStage<Response> attempt(String group, String topic, int maxRecords, long leaseMs, long deadline) {
        TopicMetadata meta = topics.get(topic);
        // Taken before leasing, so an append or an ack between the attempt and the wait is not missed.
        long[] highWatermarks = new long[meta.partitions()];
        for (int p = 0; p < highWatermarks.length; p++) {
            highWatermarks[p] = reads.highWatermark(new TopicPartition(topic, p));
        }
        CompletableFuture<Void> changed = shares.awaitChange(group, topic);
        LeaseAnswerJson answer = LeaseAnswerJson.start(reads);
        ShareGroups.Delivered got = shares.leaseOrWake(group, topic, maxRecords, leaseMs, answer);
        long remaining = deadline - System.nanoTime();
        if (got.records() > 0 || remaining <= 0 || watcher.isClosed()) {
            changed.cancel(false);
            return CompletableFuture.completedFuture(Response.ok(answer.finish(), MediaType.APPLICATION_JSON).build());
        }
        long waitNanos = Math.min(remaining, recheck.toNanos());
        if (got.wakeAtMs() != Long.MAX_VALUE) {
            long untilWake = Math.max(0, got.wakeAtMs() - clock.millis()) + 1; // +1: the expiry check is "now >= end"
            waitNanos = Math.min(waitNanos, TimeUnit.MILLISECONDS.toNanos(untilWake));
        }
        Duration wait = Duration.ofNanos(waitNanos);
        CompletableFuture<?>[] wakers = new CompletableFuture<?>[highWatermarks.length + 1];
        for (int p = 0; p < highWatermarks.length; p++) {
            wakers[p] = watcher.awaitBeyond(new TopicPartition(topic, p), highWatermarks[p], wait);
        }
        wakers[highWatermarks.length] = changed;
        return CompletableFuture.anyOf(wakers).thenComposeAsync(any -> {
            for (CompletableFuture<?> f : wakers) {
                f.cancel(false); // unregisters the waiters that did not fire
            }
            return attempt(group, topic, maxRecords, leaseMs, deadline);
        }, readPool);
    }

    @POST
    @Path("{group}/topics/{topic}/acks")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Acknowledge leased records", description = "Body {\"acks\": [{\"lease\", \"type\": \"accept\" "
            + "| \"release\" | \"reject\" | \"renew\"}]}. Answers {\"results\": [{\"lease\", \"ok\": true} | {\"lease\", "
            + "\"ok\": false, \"error\": \"lease-expired\"}]} in the same order; a refused ack changes nothing.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.ShareAcks.class)))
    @APIResponse(responseCode = "200", description = "One result per ack",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.ShareAckResults.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public CompletionStage<Response> acks(@PathParam("group") String group, @PathParam("topic") String topic,
                                            byte[] body) {
        Names.requireValidGroup(group);
        TopicAdmin.requirePublic(topic);
        var acks = ShareJson.acks(body);
        return CompletableFuture.supplyAsync(() -> Response.ok(ShareJson.results(shares.acknowledge(group, topic, acks)),
                MediaType.APPLICATION_JSON).build(), readPool);
    }

    @PUT
    @Path("{group}/config")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Configure a share group", description = "Body {\"start\": \"earliest\" | \"latest\", "
            + "\"max.delivery.attempts\": 5, \"redelivery.delay.ms\": 0, \"dead.letter.topic\": null | topic}; keys "
            + "left out take these defaults (start: latest). 400 invalid-config naming the key.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.ShareGroupConfig.class)))
    @APIResponse(responseCode = "200", description = "The group's config",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.ShareGroupConfigAnswer.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public CompletionStage<ObjectNode> configure(@PathParam("group") String group, byte[] body) {
        Names.requireValidGroup(group);
        var config = ShareJson.config(body);
        if (config.deadLetterTopic() != null && TopicAdmin.isInternal(config.deadLetterTopic())) {
            throw new TierlogException(ErrorType.INVALID_CONFIG, "dead.letter.topic cannot be an internal topic",
                    Map.of("field", "dead.letter.topic"));
        }
        return CompletableFuture.supplyAsync(() -> ShareJson.config(group, shares.configure(group, config)), readPool);
    }

    @GET
    @Path("{group}")
    @Operation(summary = "Describe a share group", description = "Its config and, per share-partition touched, "
            + "startOffset, available, leased and lag. 404 unknown-group.")
    @APIResponse(responseCode = "200", description = "The share group",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.ShareGroupDescription.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_GROUP)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public CompletionStage<ObjectNode> describe(@PathParam("group") String group) {
        Names.requireValidGroup(group);
        return CompletableFuture.supplyAsync(() -> ShareJson.description(shares.describe(group).orElseThrow(() ->
                new TierlogException(ErrorType.UNKNOWN_GROUP, "share group " + group + " has no config and no state",
                        Map.of("group", group)))), readPool);
    }

    @DELETE
    @Path("{group}")
    @Operation(summary = "Delete a share group", description = "Its config and every share-partition's state; "
            + "outstanding leases die with it. 204, also when there was nothing.")
    @APIResponse(responseCode = "204", description = "Deleted, also when there was nothing")
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public CompletionStage<Response> delete(@PathParam("group") String group) {
        Names.requireValidGroup(group);
        return CompletableFuture.supplyAsync(() -> {
            shares.delete(group);
            return Response.noContent().build();
        }, readPool);
    }
}
