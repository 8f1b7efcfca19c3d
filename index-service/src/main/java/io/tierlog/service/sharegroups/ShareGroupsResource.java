package io.tierlog.service.sharegroups;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.topics.TopicAdmin;
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

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;

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

    private final ShareGroups shares;
    private final ShareLeases leases;
    private final ExecutorService readPool;

    public ShareGroupsResource(ShareGroups shares, ShareLeases leases, ServiceThreads threads) {
        this.shares = shares;
        this.leases = leases;
        this.readPool = threads.reads();
    }

    @POST
    @Path("{group}/topics/{topic}/lease")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Lease records", description = "Body {\"maxRecords\": 100, \"leaseMs\": 30000, \"waitMs\": 0}, "
            + "all optional (leaseMs: the group's lease.ms, else 30000). Answers {\"records\": [{\"lease\", "
            + "\"partition\", \"offset\", \"deliveryCount\", "
            + "\"timestamp\", \"key\", \"value\", \"headers\"}], \"ranges\": [{\"lease\", \"partition\", "
            + "\"firstOffset\", \"lastOffset\", \"deliveryCount\"}]} (ranges: the same records as runs under range "
            + "leases); each record goes to no one else until it is "
            + "acknowledged or its lease expires. waitMs (max 30000) long-polls while nothing is available. With "
            + "Accept: application/vnd.tierlog.leased-batches the same lease is answered in binary: the lease strings "
            + "in a header, then the stored Kafka record batches holding the leased records (docs/api.md, \"Share "
            + "groups\"); with Accept: application/vnd.tierlog.leased-ranges the header names runs under range "
            + "leases instead of one lease per record.")
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
        // Answered by ShareLeaseRoute (the same checks and body, from pooled direct memory); kept for the OpenAPI
        // document and as the answer should that route ever pass a request on.
        return leases.lease(group, topic, body, answer -> Response.ok(answer.finish(), MediaType.APPLICATION_JSON).build());
    }

    @POST
    @Path("{group}/topics/{topic}/acks")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Acknowledge leased records", description = "Body {\"acks\": [{\"lease\", \"type\": \"accept\" "
            + "| \"release\" | \"reject\" | \"renew\", \"firstOffset\", \"lastOffset\"}]} (lease: a record's lease or a range "
            + "lease; firstOffset/lastOffset optionally narrow a range lease; a range ack applies to all of its "
            + "records or to none). Answers {\"results\": [{\"lease\", \"ok\": true} | {\"lease\", "
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
            + "\"max.delivery.attempts\": 5, \"redelivery.delay.ms\": 0, \"dead.letter.topic\": null | topic, "
            + "\"isolation\": \"read_uncommitted\" | \"read_committed\", \"lease.ms\": null | 1000..3600000}; "
            + "keys left out take these defaults (start: latest). 400 invalid-config naming the key.")
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
