package io.tierlog.service.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.access.Principal;
import io.tierlog.access.Resource;
import io.tierlog.service.api.Requests;
import io.tierlog.service.security.AccessControl;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
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
    @Operation(summary = "List groups", description = "Every group with a committed offset that the caller may read, "
            + "with its total lag.")
    public ObjectNode list(@Context RoutingContext ctx) {
        Principal caller = AccessControl.principal(ctx);
        ObjectNode root = NODES.objectNode();
        ArrayNode arr = root.putArray("groups");
        for (Map.Entry<String, Long> e : groups.totalLags().entrySet()) {
            if (!caller.allows(io.tierlog.access.Operation.READ, Resource.group(e.getKey()))) {
                continue;
            }
            arr.addObject().put("group", e.getKey()).put("totalLag", e.getValue());
        }
        return root;
    }
}
