package io.tierlog.service.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.access.InvalidScopeException;
import io.tierlog.access.Principal;
import io.tierlog.access.Scopes;
import io.tierlog.access.TokenRecord;
import io.tierlog.access.TokenStore;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.service.http.Requests;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
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

import java.util.Map;
import java.util.Set;

/**
 * Minted tokens (docs/api.md, "Identity and access"), for {@code admin:cluster} only (the {@link AccessFilter}
 * checks that before this runs): mint (the secret is in the 201 answer and nowhere else), list without secrets,
 * revoke. Each mint and revocation is one audit log line, without the secret.
 */
@Path("/v1/tokens")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "tokens")
public class TokensResource {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> FIELDS = Set.of("name", "scopes", "expiresAt");
    private static final int MAX_NAME = 200;

    private final TokenStore tokens;
    private final java.time.Clock clock;

    public TokensResource(AccessControl access) {
        this.tokens = access.tokens();
        this.clock = access.clock();
    }

    @POST
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Mint a token", description = "Body {\"name\", \"scopes\": \"produce:topic:orders* ...\", "
            + "\"expiresAt\": epoch ms (optional)}. 201 {\"id\", \"name\", \"scopes\", \"expiresAt\", \"token\"}: the "
            + "secret token is shown only here. Needs admin:cluster.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ApiSchemas.TokenMint.class)))
    @APIResponse(responseCode = "201", description = "The minted token, with its secret",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.MintedToken.class)))
    @APIResponse(responseCode = "400", ref = ProblemResponses.BAD_REQUEST)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response mint(byte[] body, @Context RoutingContext ctx) {
        ObjectNode req = Requests.object(body, FIELDS);
        String name = Requests.requiredText(req, "name", "name");
        if (name.isBlank() || name.length() > MAX_NAME) {
            throw Requests.bad("name", "name must be 1.." + MAX_NAME + " characters");
        }
        String scopeText = Requests.requiredText(req, "scopes", "scopes");
        Scopes scopes;
        try {
            scopes = Scopes.parse(scopeText);
        } catch (InvalidScopeException e) {
            throw Requests.bad("scopes", e.getMessage());
        }
        if (scopes.list().isEmpty()) {
            throw Requests.bad("scopes", "scopes must name at least one scope");
        }
        Long expiresAt = null;
        JsonNode exp = req.get("expiresAt");
        if (exp != null && !exp.isNull()) {
            expiresAt = Requests.asLong(exp, "expiresAt");
            if (expiresAt <= clock.millis()) {
                throw Requests.bad("expiresAt", "expiresAt must be in the future (epoch milliseconds)");
            }
        }
        TokenStore.Minted m = tokens.mint(name, scopes, expiresAt);
        Principal by = AccessControl.principal(ctx);
        AccessControl.AUDIT.infof("token minted id=%s name=\"%s\" scopes=\"%s\" expiresAt=%s by=%s", m.record().id(),
                name, scopes, expiresAt, by.name());
        ObjectNode out = json(m.record());
        out.put("token", m.secret());
        return Response.status(201).entity(out).build();
    }

    @GET
    @Operation(summary = "List tokens", description = "{\"tokens\": [{\"id\", \"name\", \"scopes\", \"expiresAt\"}]}, "
            + "revoked ones left out, secrets never shown. Needs admin:cluster.")
    @APIResponse(responseCode = "200", description = "The tokens",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiSchemas.TokenList.class)))
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public ObjectNode list() {
        ObjectNode root = NODES.objectNode();
        ArrayNode arr = root.putArray("tokens");
        for (TokenRecord r : tokens.list()) {
            arr.add(json(r));
        }
        return root;
    }

    @DELETE
    @Path("{id}")
    @Operation(summary = "Revoke a token", description = "204; every instance refuses it within 2 s. 404 not-found "
            + "for an unknown or already revoked id. Needs admin:cluster.")
    @APIResponse(responseCode = "204", description = "Revoked")
    @APIResponse(responseCode = "404", ref = ProblemResponses.NOT_FOUND)
    @APIResponse(responseCode = "500", ref = ProblemResponses.INTERNAL)
    public Response revoke(@PathParam("id") String id, @Context RoutingContext ctx) {
        if (!tokens.revoke(id)) {
            throw new TierlogException(ErrorType.NOT_FOUND, "no token with id '" + shorten(id) + "'",
                    Map.of("id", shorten(id)));
        }
        AccessControl.AUDIT.infof("token revoked id=%s by=%s", id, AccessControl.principal(ctx).name());
        return Response.noContent().build();
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "…" : s;
    }

    private static ObjectNode json(TokenRecord r) {
        ObjectNode n = NODES.objectNode();
        n.put("id", r.id());
        n.put("name", r.name());
        n.put("scopes", r.scopes().toString());
        if (r.expiresAt() == null) {
            n.putNull("expiresAt");
        } else {
            n.put("expiresAt", r.expiresAt());
        }
        return n;
    }
}
