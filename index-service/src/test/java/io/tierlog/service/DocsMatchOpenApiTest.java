package io.tierlog.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps docs/api.md true to the running service: every endpoint it documents (a heading
 * {@code ### `METHOD /path`}) must exist, with that method, in the service's own {@code /q/openapi}. The record-batch
 * produce and fetch and the stream are Vert.x routes; the first two share method and path with the JAX-RS
 * operations that describe them, and the stream is described in META-INF/openapi.yaml, so they are checked too.
 */
@QuarkusTest
class DocsMatchOpenApiTest {
    /** The heading convention of docs/api.md, stated at its top. */
    static final Pattern ENDPOINT = Pattern.compile("^### `(GET|POST|PUT|PATCH|DELETE|HEAD) (/\\S*)`\\s*$");
    static final Path API_MD = Path.of("..", "docs", "api.md");

    record Endpoint(String method, String path) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    @Test
    void everyDocumentedEndpointIsInTheOpenApiDocument() throws IOException {
        List<Endpoint> documented = documentedEndpoints(Files.readAllLines(API_MD));
        // Guards the parser: a changed heading style must not make this test pass on nothing.
        assertThat(documented).as("endpoint headings in %s", API_MD).hasSizeGreaterThanOrEqualTo(13);

        JsonNode paths = new ObjectMapper().readTree(given().get("/q/openapi?format=json").then().statusCode(200)
                .extract().asByteArray()).path("paths");
        List<Endpoint> missing = documented.stream()
                .filter(e -> !paths.path(e.path()).has(e.method().toLowerCase(Locale.ROOT)))
                .toList();
        assertThat(missing).as("endpoints documented in docs/api.md but absent from /q/openapi").isEmpty();
    }

    static List<Endpoint> documentedEndpoints(List<String> lines) {
        List<Endpoint> out = new ArrayList<>();
        for (String line : lines) {
            Matcher m = ENDPOINT.matcher(line);
            if (m.matches()) {
                out.add(new Endpoint(m.group(1), m.group(2)));
            }
        }
        return out;
    }
}
