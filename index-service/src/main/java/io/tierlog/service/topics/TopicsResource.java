package io.tierlog.service.topics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.access.Principal;
import io.tierlog.access.Resource;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.service.security.AccessControl;
import io.tierlog.service.http.doc.ApiSchemas;
import io.tierlog.service.http.doc.ProblemResponses;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.service.read.PartitionState;
import io.tierlog.service.http.QuotaRoute;
import io.tierlog.service.http.Requests;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import io.vertx.ext.web.RoutingContext;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Topic administration (api.md, "Topics"). Adapts HTTP to {@link TopicAdmin} and {@link PartitionReads}. */
@Path("/v1/topics")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.WILDCARD)
@Tag(name = "topics")
public class TopicsResource {
    private static final Set<String> CREATE_FIELDS = Set.of("name", "partitions", "config");

    private final TopicAdmin admin;
    private final PartitionReads reads;
    private final AccessControl access;

    public TopicsResource(TopicAdmin admin, PartitionReads reads, AccessControl access) {
        this.admin = admin;
        this.reads = reads;
        this.access = access;
    }

    @POST
    @Operation(summary = "Create a topic", description = "Body {\"name\", \"partitions\": 1..1024, \"config\": {...}}. "
            + "201 with the topic; 409 topic-exists; 400 invalid-topic / invalid-config / bad-request; 429 "
            + "quota-exceeded over the caller's controller_mutation_rate.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.TopicCreate.class)))
    @APIResponse(responseCode = "201", description = "Created; Location names the topic",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.Topic.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "409", ref = ProblemResponses.TOPIC_EXISTS)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response create(byte[] body, @Context RoutingContext ctx) {
        ObjectNode req = Requests.object(body, CREATE_FIELDS);
        String name = Requests.requiredText(req, "name", "name");
        long partitions = Requests.requiredLong(req, "partitions", "partitions");
        if (partitions < 1 || partitions > TopicMetadata.MAX_PARTITIONS) {
            throw Requests.bad("partitions", "partitions must be in 1.." + TopicMetadata.MAX_PARTITIONS + ": " + partitions);
        }
        Map<String, Object> config = configMap(req.get("config"), "config");
        // the name is in the body, so the access filter could only check for some create scope; no one may create
        // an internal topic (400 for admins too), so that is said first
        TopicAdmin.requirePublic(name);
        access.require(ctx, io.tierlog.access.Operation.CREATE, Resource.topic(name));
        TopicMetadata topic = admin.create(name, (int) partitions, config);
        ctx.put(QuotaRoute.MUTATED_PARTITIONS, topic.partitions());
        return Response.created(URI.create("/v1/topics/" + topic.name())).entity(describe(topic)).build();
    }

    @GET
    @Operation(summary = "List topics", description = "The topics the caller may describe; internal topics (names "
            + "starting with __) are not listed.")
    @APIResponse(responseCode = "200", description = "Every public topic the caller may describe",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.TopicList.class)))
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode list(@Context RoutingContext ctx) {
        Principal caller = AccessControl.principal(ctx);
        ObjectNode root = Requests.JSON.createObjectNode();
        ArrayNode arr = root.putArray("topics");
        for (TopicMetadata t : admin.listPublic()) {
            if (!caller.allows(io.tierlog.access.Operation.DESCRIBE, Resource.topic(t.name()))) {
                continue;
            }
            arr.addObject().put("name", t.name()).put("partitions", t.partitions());
        }
        return root;
    }

    @GET
    @Path("{topic}")
    @Operation(summary = "Describe a topic", description = "Config (as stored: local.retention.* -2 means the same "
            + "as retention.*) and per-partition state across both tiers.")
    @APIResponse(responseCode = "200", description = "The topic",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.Topic.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public ObjectNode get(@PathParam("topic") String topic) {
        return describe(admin.get(topic));
    }

    @PATCH
    @Path("{topic}/config")
    @Operation(summary = "Change topic config", description = "Body: {\"retention.ms\": ..., ...}. 200 with the new "
            + "config; 400 invalid-config for an unknown key or a bad value.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.TopicConfig.class)))
    @APIResponse(responseCode = "200", description = "The whole new config",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ApiSchemas.TopicConfig.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode patchConfig(@PathParam("topic") String topic, byte[] body) {
        if (TopicAdmin.isInternal(topic)) {
            // admins included: a small retention on __consumer_offsets would lose every group's offsets
            throw new io.tierlog.log.TierlogException(io.tierlog.log.ErrorType.FORBIDDEN,
                    "the config of internal topics cannot be changed over the API: " + topic,
                    Map.of("operation", "alter", "resource", "topic:" + topic));
        }
        admin.get(topic);
        Map<String, Object> changes = configMap(Requests.object(body, null), "body");
        return configJson(admin.updateConfig(topic, changes));
    }

    @DELETE
    @Path("{topic}")
    @Operation(summary = "Delete a topic", description = "204; its hot and cold data and index entries are removed. "
            + "Reads of it answer 404 unknown-topic at once; waiting long-polls answer 404 and streams end.")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "404", ref = ProblemResponses.UNKNOWN_TOPIC)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    @APIResponse(responseCode = "503", ref = ProblemResponses.COLD_TIER_UNAVAILABLE)
    public Response delete(@PathParam("topic") String topic, @Context RoutingContext ctx) {
        ctx.put(QuotaRoute.MUTATED_PARTITIONS, admin.delete(topic).partitions());
        return Response.noContent().build();
    }

    private ObjectNode describe(TopicMetadata t) {
        ObjectNode node = Requests.JSON.createObjectNode();
        node.put("name", t.name());
        node.put("partitions", t.partitions());
        node.set("config", configJson(t));
        ArrayNode states = node.putArray("partitionStates");
        for (PartitionState s : reads.states(t)) {
            ObjectNode st = states.addObject();
            st.put("partition", s.partition());
            st.put("logStartOffset", s.logStartOffset());
            st.put("hotStartOffset", s.hotStartOffset());
            st.put("highWatermark", s.highWatermark());
            st.put("hotBytes", s.hotBytes());
            st.put("coldBytes", s.coldBytes());
            st.putObject("segments").put("hot", s.hotSegments()).put("cold", s.coldSegments());
        }
        return node;
    }

    private static ObjectNode configJson(TopicMetadata t) {
        ObjectNode config = Requests.JSON.createObjectNode();
        t.config().toMap().forEach((k, v) -> config.set(k, Requests.JSON.valueToTree(v)));
        return config;
    }

    private static Map<String, Object> configMap(JsonNode node, String field) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw Requests.bad(field, field + " must be an object of Kafka topic configs");
        }
        node.fields().forEachRemaining(e -> {
            JsonNode v = e.getValue();
            out.put(e.getKey(), v.isTextual() ? v.asText() : v.isNumber() ? v.numberValue() : v.toString());
        });
        return out;
    }
}
