package io.tierlog.service.security;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

/**
 * The default {@code none} mode (the embedded single-machine run): anonymous callers may use every topic and group,
 * but internal {@code __} topics and tokens are refused (403 naming operation and resource), and JSON endpoints
 * refuse other media types, so that a web page cannot create a topic with a cross-origin {@code text/plain} POST.
 * No CORS header is sent when no origin is configured.
 */
@QuarkusTest
class NoneModeAccessTest {
    @TestHTTPResource("/")
    URI base;

    @Test
    void internalTopicsAndTokensAreRefusedToAnonymous() {
        given().get("/v1/topics/__consumer_offsets").then().statusCode(403)
                .contentType("application/problem+json").body("type", equalTo("forbidden"))
                .body("operation", equalTo("describe")).body("resource", equalTo("topic:__consumer_offsets"));
        given().contentType(ContentType.JSON).body("{\"retention.ms\": 1}")
                .patch("/v1/topics/__consumer_offsets/config").then().statusCode(403)
                .body("operation", equalTo("alter"));
        given().get("/v1/topics/__consumer_offsets/partitions/0/records?offset=0").then().statusCode(403);
        given().contentType(ContentType.JSON).body("{\"name\":\"__sneaky\",\"partitions\":1}").post("/v1/topics")
                .then().statusCode(400).body("type", equalTo("invalid-topic"));
        given().get("/v1/tokens").then().statusCode(403).body("resource", equalTo("cluster"));
        given().contentType(ContentType.JSON).body("{\"name\":\"x\",\"scopes\":\"admin:cluster\"}").post("/v1/tokens")
                .then().statusCode(403);
    }

    @Test
    void aCrossOriginTextPlainPostIsRefusedAndCreatesNothing() throws Exception {
        HttpResponse<String> plain = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("v1/topics"))
                .header("Origin", "https://evil.example").header("Content-Type", "text/plain;charset=UTF-8")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"csrf-topic\",\"partitions\":1}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(415);
        assertThat(plain.body()).contains("\"type\":\"unsupported-media-type\"");
        assertThat(plain.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
        // a body without any Content-Type (a browser's fetch of an ArrayBuffer cross-origin) is refused as well
        HttpResponse<String> untyped = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("v1/topics"))
                .header("Origin", "https://evil.example")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"csrf-topic\",\"partitions\":1}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(untyped.statusCode()).isEqualTo(415);
        given().get("/v1/topics/csrf-topic").then().statusCode(404);
        given().header("Origin", "https://evil.example").contentType(ContentType.JSON)
                .body("{\"name\":\"csrf-ok-" + System.nanoTime() + "\",\"partitions\":1}").post("/v1/topics").then()
                .statusCode(201)
                .header("Access-Control-Allow-Origin", nullValue());
        given().header("Origin", "https://evil.example").header("Access-Control-Request-Method", "POST")
                .options("/v1/topics").then().header("Access-Control-Allow-Origin", nullValue());
    }
}
