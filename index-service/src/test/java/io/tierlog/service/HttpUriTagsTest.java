package io.tierlog.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.tierlog.service.metrics.HttpUriTags;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code uri} tag of {@code http_server_requests} stays one of the API's routes whatever paths clients send:
 * requests answered before routing (401 without a token, 415) are tagged with the route they name, not their raw
 * path, so a client trying many topic names adds no series (Micrometer would drop every new route's meters after
 * 100 values).
 */
@QuarkusTest
@TestProfile(TokenModeProfile.class)
class HttpUriTagsTest {
    private static final Pattern URI = Pattern.compile("^http_server_requests_seconds_count\\{.*uri=\"([^\"]*)\".*$");

    @Test
    void requestsAnsweredBeforeRoutingAreTaggedWithTheirRouteNotTheirPath() throws Exception {
        String run = Long.toString(System.nanoTime(), 36);
        for (int i = 0; i < 150; i++) {
            given().get("/v1/topics/uri-" + run + "-" + i).then().statusCode(401);
            given().get("/v1/groups/uri-" + run + "-" + i + "/lag").then().statusCode(401);
            given().get("/v1/nothing-" + run + "-" + i).then().statusCode(401);
            given().auth().oauth2(TokenModeProfile.BOOTSTRAP).patch("/v1/topics/uri-" + run + "-" + i)
                    .then().statusCode(415); // no content type: refused before routing
            given().auth().oauth2(TokenModeProfile.BOOTSTRAP).header("Content-Type", "application/json").body("{}")
                    .patch("/v1/topics/uri-" + run + "-" + i).then().statusCode(405); // no such operation
        }
        Set<String> uris = new TreeSet<>();
        String metrics = given().auth().oauth2(TokenModeProfile.BOOTSTRAP).get("/q/metrics").then().statusCode(200)
                .extract().asString();
        for (String line : metrics.split("\n")) {
            Matcher m = URI.matcher(line);
            if (m.matches()) {
                uris.add(m.group(1));
            }
        }
        assertThat(uris).contains("/v1/topics/{topic}", "/v1/groups/{group}/lag", "UNMATCHED");
        List<String> raw = new ArrayList<>();
        uris.stream().filter(u -> u.contains(run)).forEach(raw::add);
        assertThat(raw).as("raw paths as tag values").isEmpty();
    }

    @Test
    void theTaggedRoutesAreTheApisRoutes() throws Exception {
        JsonNode paths = new ObjectMapper().readTree(given().auth().oauth2(TokenModeProfile.BOOTSTRAP)
                .get("/q/openapi?format=json").then().statusCode(200).extract().asByteArray()).path("paths");
        Set<String> documented = new TreeSet<>();
        paths.fieldNames().forEachRemaining(documented::add);
        assertThat(new TreeSet<>(HttpUriTags.ROUTES)).isEqualTo(documented);
    }
}
