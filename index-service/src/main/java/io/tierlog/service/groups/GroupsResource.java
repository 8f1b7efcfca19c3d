package io.tierlog.service.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.service.api.Requests;
import io.tierlog.service.api.doc.ApiSchemas;
import io.tierlog.service.api.doc.ProblemResponses;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
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
import java.util.Set;

/** Consumer groups (api.md, "Consumer groups"): commit, read back, lag, list. Adapts HTTP to {@link GroupOffsets}. */
@Path("/v1/groups")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "groups")
public class GroupsResource {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> BODY_FIELDS = Set.of("offsets");
    private static final Set<String> ENTRY_FIELDS = Set.of("topic", "partition", "offset");

    private final GroupOffsets groups;

    public GroupsResource(GroupOffsets groups) {
        this.groups = groups;
    }

    @PUT
    @Path("{group}/offsets")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Commit offsets", description = "Body {\"offsets\": [{\"topic\", \"partition\", \"offset\"}]}; "
            + "offset = the next offset the group will read. 204. 416 offset-out-of-range above the high watermark.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.OffsetCommit.class)))
    @APIResponse(responseCode = "204", description = "Committed, all or nothing")
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_PARTITION)
    @APIResponse(responseCode = "416", ref = ProblemResponses.OFFSET_OUT_OF_RANGE)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response commit(@PathParam("group") String group, byte[] body) {
        io.tierlog.log.Names.requireValidGroup(group);
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
        groups.commit(group, offsets);
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
    @Operation(summary = "Lag of a group", description = "Per committed partition: highWatermark - committedOffset.")
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
                    .put("lag", l.lag());
        }
        return root;
    }

    @GET
    @Operation(summary = "List groups", description = "Every group with a committed offset, with its total lag.")
    @APIResponse(responseCode = "200", description = "Every group",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.GroupList.class)))
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode list() {
        ObjectNode root = NODES.objectNode();
        ArrayNode arr = root.putArray("groups");
        for (Map.Entry<String, Long> e : groups.totalLags().entrySet()) {
            arr.addObject().put("group", e.getKey()).put("totalLag", e.getValue());
        }
        return root;
    }
}
