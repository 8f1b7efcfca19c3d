package io.tierlog.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static io.restassured.RestAssured.given;
import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Walks {@code /q/openapi} and checks that it documents what the service answers: every operation lists its error
 * statuses as problem+json with a schema (the known ones exactly the statuses docs/api.md gives them), every request
 * body and every 2xx answer with a body has a schema, and no operation is documented as "200 only".
 */
@QuarkusTest
class OpenApiDocumentTest {
    private static final Set<String> METHODS = Set.of("get", "put", "post", "patch", "delete");

    /** The statuses each operation must document (others may add more). */
    private static final Map<String, Set<String>> EXPECTED = Map.ofEntries(
            entry("POST /v1/topics", Set.of("201", "400", "409", "500")),
            entry("GET /v1/topics", Set.of("200", "500")),
            entry("GET /v1/topics/{topic}", Set.of("200", "400", "404", "500", "503")),
            entry("PATCH /v1/topics/{topic}/config", Set.of("200", "400", "404", "500")),
            entry("DELETE /v1/topics/{topic}", Set.of("204", "400", "404", "500", "503")),
            entry("POST /v1/topics/{topic}/records", Set.of("200", "400", "404", "409", "413", "500")),
            entry("GET /v1/topics/{topic}/partitions/{partition}/records",
                    Set.of("200", "400", "404", "416", "500", "503")),
            entry("GET /v1/topics/{topic}/partitions/{partition}/offsets", Set.of("200", "400", "404", "500", "503")),
            entry("GET /v1/topics/{topic}/partitions/{partition}/stream",
                    Set.of("200", "400", "404", "416", "500", "503")),
            entry("PUT /v1/groups/{group}/offsets", Set.of("204", "400", "404", "409", "416", "500")),
            entry("GET /v1/groups/{group}/offsets", Set.of("200", "400", "500")),
            entry("GET /v1/groups/{group}/lag", Set.of("200", "400", "500")),
            entry("GET /v1/groups", Set.of("200", "500")),
            entry("POST /v1/groups/{group}/heartbeat", Set.of("200", "400", "404", "409", "500")),
            entry("GET /v1/groups/{group}", Set.of("200", "400", "404", "500")),
            entry("DELETE /v1/groups/{group}", Set.of("204", "400", "404", "409", "500")),
            entry("POST /v1/groups/{group}/offsets/reset", Set.of("200", "400", "404", "409", "500")),
            entry("POST /v1/tokens", Set.of("201", "400", "500")),
            entry("GET /v1/tokens", Set.of("200", "500")),
            entry("DELETE /v1/tokens/{id}", Set.of("204", "404", "500")),
            entry("POST /v1/share-groups/{group}/topics/{topic}/lease", Set.of("200", "400", "404", "500")),
            entry("POST /v1/share-groups/{group}/topics/{topic}/acks", Set.of("200", "400", "404", "500")),
            entry("PUT /v1/share-groups/{group}/config", Set.of("200", "400", "500")),
            entry("GET /v1/share-groups/{group}", Set.of("200", "400", "404", "500")),
            entry("DELETE /v1/share-groups/{group}", Set.of("204", "400", "500")));

    /** What every /v1 operation can answer before its resource runs (access filter, quotas, shutdown). */
    private static final Set<String> EVERY_V1 = Set.of("401", "403", "429", "503");

    @Test
    void everyOperationDocumentsItsStatusesAndSchemas() throws Exception {
        JsonNode doc = new ObjectMapper().readTree(given().get("/q/openapi?format=json").then().statusCode(200)
                .extract().asString());
        List<String> problems = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
            for (Map.Entry<String, JsonNode> op : path.getValue().properties()) {
                if (!METHODS.contains(op.getKey())) {
                    continue;
                }
                String name = op.getKey().toUpperCase() + " " + path.getKey();
                seen.add(name);
                check(doc, name, op.getValue(), problems);
            }
        }
        assertThat(seen).as("operations in /q/openapi").containsAll(EXPECTED.keySet());
        assertThat(problems).as("documentation gaps").isEmpty();

        JsonNode produce = doc.at("/paths/~1v1~1topics~1{topic}~1records/post/description");
        assertThat(produce.asText()).contains("gzip", "snappy", "lz4", "zstd").doesNotContain("uncompressed Kafka");
        assertThat(names(doc.at("/components/schemas/Problem/properties")))
                .contains("type", "title", "status", "detail");
        assertThat(names(doc.at("/components/schemas/TopicConfig/properties")))
                .contains("retention.ms", "local.retention.ms", "max.message.bytes");
    }

    private static void check(JsonNode doc, String name, JsonNode op, List<String> problems) {
        JsonNode responses = op.path("responses");
        Set<String> statuses = new TreeSet<>();
        statuses.addAll(names(responses));
        Set<String> expected = EXPECTED.get(name);
        if (expected != null && !statuses.containsAll(expected)) {
            problems.add(name + ": documents " + statuses + ", expected at least " + expected);
        }
        if (name.contains(" /v1/") && !statuses.containsAll(EVERY_V1)) {
            problems.add(name + ": documents " + statuses + ", every /v1 operation can answer " + EVERY_V1);
        }
        if (Set.of("POST", "PUT", "PATCH").contains(name.substring(0, name.indexOf(' ')))
                && name.contains(" /v1/") && !statuses.contains("415")) {
            problems.add(name + ": takes a body but does not document 415");
        }
        if (statuses.stream().noneMatch(s -> s.startsWith("4") || s.startsWith("5"))) {
            problems.add(name + ": no error status documented");
        }
        for (String status : statuses) {
            JsonNode response = resolve(doc, responses.get(status));
            if (status.startsWith("4") || status.startsWith("5")) {
                if (!hasSchema(doc, response.path("content").path("application/problem+json"))) {
                    problems.add(name + " " + status + ": no application/problem+json schema");
                }
            } else if (status.startsWith("2") && !status.equals("204")) {
                if (!hasSchemaInEveryMediaType(doc, response.path("content"))) {
                    problems.add(name + " " + status + ": no schema for the answer");
                }
            }
        }
        JsonNode body = op.path("requestBody");
        if (Set.of("POST", "PUT", "PATCH").contains(name.substring(0, name.indexOf(' ')))
                && !hasSchemaInEveryMediaType(doc, resolve(doc, body).path("content"))) {
            problems.add(name + ": no schema for the request body");
        }
    }

    private static boolean hasSchemaInEveryMediaType(JsonNode doc, JsonNode content) {
        if (!content.isObject() || content.isEmpty()) {
            return false;
        }
        for (JsonNode media : content) {
            if (!hasSchema(doc, media)) {
                return false;
            }
        }
        return true;
    }

    /** A media type whose schema is a component that exists, or an inline schema with a type. */
    private static boolean hasSchema(JsonNode doc, JsonNode media) {
        JsonNode schema = media.path("schema");
        if (schema.has("$ref")) {
            return !resolve(doc, schema).isMissingNode();
        }
        return schema.has("type");
    }

    private static List<String> names(JsonNode object) {
        return object.properties().stream().map(Map.Entry::getKey).toList();
    }

    private static JsonNode resolve(JsonNode doc, JsonNode node) {
        if (node == null) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
        String ref = node.path("$ref").asText(null);
        return ref == null ? node : doc.at(ref.substring(1));
    }
}
