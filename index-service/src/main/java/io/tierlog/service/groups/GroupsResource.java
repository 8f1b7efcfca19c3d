package io.tierlog.service.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.access.Principal;
import io.tierlog.access.Resource;
import io.tierlog.service.http.Requests;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.groups.GroupDescription;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.service.security.AccessControl;
import io.vertx.ext.web.RoutingContext;
import io.tierlog.service.http.doc.ApiSchemas;
import io.tierlog.service.http.doc.ProblemResponses;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Consumer groups (api.md, "Consumer groups"): commit (fenced while the group has members), read back, lag, list,
 * heartbeat, describe, delete, reset. Adapts HTTP to {@link GroupOffsets} and {@link GroupCoordinator}.
 */
@Path("/v1/groups")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "groups")
public class GroupsResource {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> BODY_FIELDS = Set.of("offsets", "memberId", "memberEpoch");
    private static final Set<String> RESET_FIELDS = Set.of("topics", "to", "timestamp");
    private static final Set<String> ENTRY_FIELDS = Set.of("topic", "partition", "offset");

    private final GroupOffsets groups;
    private final GroupCoordinator coordinator;
    private final TopicStore topics;
    private final PartitionReads reads;
    private final AccessControl access;

    public GroupsResource(GroupOffsets groups, GroupCoordinator coordinator, TopicStore topics, PartitionReads reads,
                          AccessControl access) {
        this.groups = groups;
        this.coordinator = coordinator;
        this.topics = topics;
        this.reads = reads;
        this.access = access;
    }

    @PUT
    @Path("{group}/offsets")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Commit offsets", description = "Body {\"offsets\": [{\"topic\", \"partition\", \"offset\"}], "
            + "\"memberId\", \"memberEpoch\"}; offset = the next offset the group will read. 204. 416 offset-out-of-range "
            + "above the high watermark. While the group has members, a commit without memberId and memberEpoch, with "
            + "another epoch, or for a partition the member does not hold: 409 fenced-member. Needs commit on the group "
            + "and fetch on every topic named (403 forbidden naming the topic).")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.OffsetCommit.class)))
    @APIResponse(responseCode = "204", description = "Committed, all or nothing")
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_PARTITION)
    @APIResponse(responseCode = "409", ref = ProblemResponses.FENCED_MEMBER)
    @APIResponse(responseCode = "416", ref = ProblemResponses.OFFSET_OUT_OF_RANGE)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response commit(@PathParam("group") String group, byte[] body, @Context RoutingContext ctx) {
        Names.requireValidGroup(group);
        ObjectNode req = Requests.object(body, BODY_FIELDS);
        JsonNode arr = req.get("offsets");
        if (arr == null || !arr.isArray()) {
            throw Requests.bad("offsets", "offsets must be an array");
        }
        List<CommittedOffset> offsets = new ArrayList<>();
        for (int i = 0; i < arr.size(); i++) {
            String path = "offsets[" + i + "]";
            JsonNode e = arr.get(i);
            if (!e.isObject()) {
                throw Requests.bad(path, path + " must be an object");
            }
            e.fieldNames().forEachRemaining(n -> {
                if (!ENTRY_FIELDS.contains(n)) {
                    throw Requests.bad(path + "." + n, "unknown field '" + path + "." + n + "'");
                }
            });
            String topic = Requests.requiredText(e, "topic", path + ".topic");
            long partition = Requests.requiredLong(e, "partition", path + ".partition");
            long offset = Requests.requiredLong(e, "offset", path + ".offset");
            if (partition < 0 || partition > Integer.MAX_VALUE) {
                throw Requests.bad(path + ".partition", path + ".partition must be >= 0");
            }
            offsets.add(new CommittedOffset(topic, (int) partition, offset));
        }
        String memberId = HeartbeatJson.optionalText(req, "memberId");
        JsonNode epochNode = req.get("memberEpoch");
        Integer memberEpoch = null;
        if (epochNode != null && !epochNode.isNull()) {
            long epoch = Requests.asLong(epochNode, "memberEpoch");
            if (epoch < 0 || epoch > Integer.MAX_VALUE) {
                throw Requests.bad("memberEpoch", "memberEpoch must be a member's epoch (>= 0): " + epoch);
            }
            memberEpoch = (int) epoch;
        }
        List<TopicPartition> partitions = offsets.stream()
                .map(o -> new TopicPartition(Names.requireValidTopic(o.topic()), o.partition())).toList();
        requireFetch(ctx, partitions.stream().map(TopicPartition::topic).toList());
        // The check and the append run under the group's lock: a partition cannot move between them.
        coordinator.commitAs(group, memberId, memberEpoch, partitions, () -> groups.commit(group, offsets));
        return Response.noContent().build();
    }

    @GET
    @Path("{group}/offsets")
    @Operation(summary = "Committed offsets of a group", description = "Empty for a group that never committed.")
    @APIResponse(responseCode = "200", description = "The group's committed offsets",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ApiSchemas.GroupOffsets.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode offsets(@PathParam("group") String group) {
        ObjectNode root = NODES.objectNode();
        root.put("group", group);
        ArrayNode arr = root.putArray("offsets");
        for (CommittedOffset o : groups.offsets(group)) {
            arr.addObject().put("topic", o.topic()).put("partition", o.partition()).put("offset", o.offset());
        }
        return root;
    }

    @GET
    @Path("{group}/lag")
    @Operation(summary = "Lag of a group", description = "Per committed partition: lag = highWatermark - committedOffset; "
            + "lagMs = now - the timestamp of the first unconsumed record, 0 when caught up.")
    @APIResponse(responseCode = "200", description = "The group's lag",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.GroupLag.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode lag(@PathParam("group") String group) {
        List<GroupOffsets.PartitionLag> lags = groups.lag(group);
        ObjectNode root = NODES.objectNode();
        root.put("group", group);
        root.put("totalLag", lags.stream().mapToLong(GroupOffsets.PartitionLag::lag).sum());
        ArrayNode arr = root.putArray("partitions");
        for (GroupOffsets.PartitionLag l : lags) {
            arr.addObject().put("topic", l.topic()).put("partition", l.partition())
                    .put("committedOffset", l.committedOffset()).put("highWatermark", l.highWatermark())
                    .put("lag", l.lag()).put("lagMs", l.lagMs());
        }
        return root;
    }

    @POST
    @Path("{group}/heartbeat")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Heartbeat: join, stay or leave", description = "Body {\"memberId\": null | id, \"memberEpoch\": "
            + "0 | N | -1, \"topics\", \"sessionTimeoutMs\", \"ownedPartitions\": [{\"topic\", \"partitions\"}], "
            + "\"clientId\"}. Answers the member's full current assignment; the service assigns (balanced, sticky) and "
            + "moves a partition only after its owner stopped listing it or expired. 404 unknown-member (join again), "
            + "409 fenced-member (another epoch: drop all partitions, heartbeat with memberEpoch 0).")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.Heartbeat.class)))
    @APIResponse(responseCode = "200", description = "The member's assignment",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.HeartbeatAnswer.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_MEMBER)
    @APIResponse(responseCode = "409", ref = ProblemResponses.FENCED_MEMBER)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode heartbeat(@PathParam("group") String group, byte[] body) {
        Names.requireValidGroup(group);
        return HeartbeatJson.answer(coordinator.heartbeat(group, HeartbeatJson.parse(body)));
    }

    @GET
    @Path("{group}")
    @Operation(summary = "Describe a group", description = "State (empty, stable, reconciling), group epoch and members "
            + "with their assignments. 404 unknown-group without members or offsets.")
    @APIResponse(responseCode = "200", description = "The group",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.GroupDescription.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_GROUP)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode describe(@PathParam("group") String group) {
        Names.requireValidGroup(group);
        Optional<GroupDescription> d = coordinator.describe(group);
        if (d.isPresent() && !d.get().members().isEmpty()) {
            return HeartbeatJson.description(d.get());
        }
        if (groups.offsets(group).isEmpty()) {
            throw unknownGroup(group);
        }
        return HeartbeatJson.description(new GroupDescription(group, GroupDescription.State.EMPTY,
                d.map(GroupDescription::groupEpoch).orElse(0L), List.of()));
    }

    @DELETE
    @Path("{group}")
    @Operation(summary = "Delete a group", description = "Removes its offsets and membership. 204; 409 group-not-empty "
            + "while it has members; 404 unknown-group with neither.")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_GROUP)
    @APIResponse(responseCode = "409", ref = ProblemResponses.GROUP_NOT_EMPTY)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response delete(@PathParam("group") String group) {
        Names.requireValidGroup(group);
        coordinator.delete(group, () -> groups.delete(group));
        return Response.noContent().build();
    }

    @POST
    @Path("{group}/offsets/reset")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Reset a group's offsets", description = "Body {\"topics\": [...], \"to\": \"earliest\" | "
            + "\"latest\" | \"timestamp\", \"timestamp\": epoch ms}; every partition of each topic. Answers as GET "
            + "offsets. 409 group-not-empty while the group has members. Needs commit on the group and fetch on every "
            + "topic named (403 forbidden naming the topic).")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.OffsetReset.class)))
    @APIResponse(responseCode = "200", description = "The group's committed offsets after the reset",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.GroupOffsets.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "409", ref = ProblemResponses.GROUP_NOT_EMPTY)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public ObjectNode reset(@PathParam("group") String group, byte[] body, @Context RoutingContext ctx) {
        Names.requireValidGroup(group);
        ObjectNode req = Requests.object(body, RESET_FIELDS);
        JsonNode topicsNode = req.get("topics");
        if (topicsNode == null || !topicsNode.isArray() || topicsNode.isEmpty()) {
            throw Requests.bad("topics", "topics must be a non-empty array of topic names");
        }
        String to = Requests.requiredText(req, "to", "to");
        if (!Set.of("earliest", "latest", "timestamp").contains(to)) {
            throw Requests.bad("to", "to must be earliest, latest or timestamp: " + to);
        }
        long timestamp = "timestamp".equals(to) ? Requests.requiredLong(req, "timestamp", "timestamp") : 0;
        if (!"timestamp".equals(to) && req.has("timestamp")) {
            throw Requests.bad("timestamp", "timestamp is only for \"to\": \"timestamp\"");
        }
        List<String> names = new ArrayList<>();
        for (int i = 0; i < topicsNode.size(); i++) {
            if (!topicsNode.get(i).isTextual()) {
                throw Requests.bad("topics[" + i + "]", "topics[" + i + "] must be a string");
            }
            names.add(TopicAdmin.requirePublic(topicsNode.get(i).asText()));
        }
        requireFetch(ctx, names); // before the lookups: a 404 would tell an outsider which topics exist
        List<TopicMetadata> metas = new ArrayList<>();
        for (String name : names) {
            metas.add(topics.get(name));
        }
        coordinator.whileEmpty(group, () -> {
            List<CommittedOffset> offsets = new ArrayList<>();
            for (TopicMetadata t : metas) {
                for (int p = 0; p < t.partitions(); p++) {
                    TopicPartition tp = new TopicPartition(t.name(), p);
                    long offset = switch (to) {
                        case "earliest" -> reads.logStartOffset(tp);
                        case "latest" -> reads.highWatermark(tp);
                        default -> reads.offsetForTimestamp(tp, timestamp);
                    };
                    offsets.add(new CommittedOffset(t.name(), p, offset));
                }
            }
            groups.commit(group, offsets);
            return null;
        });
        return offsets(group);
    }

    /**
     * The route needs commit on the group (checked by the access filter, docs/api.md); moving a group's offsets on a
     * topic also needs read access to that topic, as Kafka's OffsetCommit does, and only the body names the topics.
     */
    private void requireFetch(RoutingContext ctx, List<String> topicNames) {
        for (String topic : new java.util.TreeSet<>(topicNames)) {
            access.require(ctx, io.tierlog.access.Operation.FETCH, Resource.topic(topic));
        }
    }

    private static TierlogException unknownGroup(String group) {
        return new TierlogException(ErrorType.UNKNOWN_GROUP, "group " + group + " has no members and no offsets",
                Map.of("group", group));
    }

    @GET
    @Operation(summary = "List groups", description = "Every group with a committed offset or a member that the caller "
            + "may read, with its total lag (0 for a group that has not committed).")
    @APIResponse(responseCode = "200", description = "Every group",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.GroupList.class)))
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode list(@Context RoutingContext ctx) {
        Principal caller = AccessControl.principal(ctx);
        ObjectNode root = NODES.objectNode();
        ArrayNode arr = root.putArray("groups");
        // Groups with members but no commit yet are listed too: a group exists as soon as a member joins.
        SortedMap<String, Long> all = new TreeMap<>(groups.totalLags());
        for (String g : coordinator.groupsWithMembers()) {
            all.putIfAbsent(g, 0L);
        }
        for (Map.Entry<String, Long> e : all.entrySet()) {
            if (!caller.allows(io.tierlog.access.Operation.READ, Resource.group(e.getKey()))) {
                continue;
            }
            arr.addObject().put("group", e.getKey()).put("totalLag", e.getValue());
        }
        return root;
    }
}
