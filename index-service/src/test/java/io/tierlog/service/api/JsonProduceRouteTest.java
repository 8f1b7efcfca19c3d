package io.tierlog.service.api;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * JSON produce over real sockets through {@link JsonProduceRoute} (bodies with a {@code Content-Length}) against
 * the Quarkus REST method that answered them before and still answers chunked bodies ({@link RecordsResource}):
 * the same status, Content-Type and answer byte for byte, errors included, and the same stored batches; the body's
 * array goes back to the pool; {@code Expect: 100-continue} is answered before the body is sent.
 */
@QuarkusTest
class JsonProduceRouteTest {
    @Inject
    JsonProduceRoute route;
    @TestHTTPResource("/")
    URI base;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Valid bodies (explicit timestamps, so both topics store the same bytes) and invalid ones. */
    private static final List<String> BODIES = List.of(
            "{\"records\":[{\"partition\":0,\"timestamp\":1700000000000,\"value\":\"abc\"},"
                    + "{\"partition\":1,\"timestamp\":1700000000001,\"value\":{\"n\":1,\"s\": \"x y\"}}]}",
            "{\"records\": [{\"key\": \"user-42\", \"value\": [1, 2], \"headers\": {\"trace\": \"abc\"},"
                    + " \"timestamp\": 1700000000002}], \"encoding\": \"json\"}",
            "{\"records\":[{\"partition\":2,\"timestamp\":1700000000003,\"value\":\"AQID\"}],\"encoding\":\"base64\"}",
            "{\"records\":[{\"partition\":0,\"timestamp\":1700000000004,\"value\":1}],"
                    + "\"producer\":{\"id\":\"p-" + UUID.randomUUID() + "\",\"epoch\":0,\"sequence\":0}}",
            "{\"records\":[{\"partition\":0,\"value\":1}",
            "{\"records\":[{\"partition\":0,\"value\":1,\"colour\":\"red\"}]}",
            "{\"records\":[{\"partition\":9,\"value\":1}]}",
            "{\"records\":[]}",
            "",
            "[1]");

    @Test
    void answersAndStoresExactlyAsTheRestMethodDoes() throws Exception {
        String routed = topic("routed");
        String rest = topic("rest");
        for (String body : BODIES) {
            HttpResponse<byte[]> viaRoute = post(routed, body, false);
            // Valid bodies go to a second topic; errors to the same one, so that a detail naming it is the same too.
            HttpResponse<byte[]> viaRest = post(body.contains("timestamp") ? rest : routed, body, true);
            assertThat(viaRoute.statusCode()).as("status of %s", body).isEqualTo(viaRest.statusCode());
            assertThat(viaRoute.headers().firstValue("Content-Type")).as("type of %s", body)
                    .isEqualTo(viaRest.headers().firstValue("Content-Type"));
            assertThat(new String(viaRoute.body(), StandardCharsets.UTF_8)).as("answer to %s", body)
                    .isEqualTo(new String(viaRest.body(), StandardCharsets.UTF_8));
        }
        // Read by the route (the REST method takes no pooled array), and given back after the append.
        assertThat(route.arrays().idleBytes()).as("the bodies' arrays went back to the pool").isPositive();
        for (int p = 0; p < 3; p++) {
            assertThat(batches(routed, p)).as("partition %d's stored batches", p).isEqualTo(batches(rest, p));
        }
    }

    @Test
    void expectContinueIsAnsweredBeforeTheBodyIsSent() throws Exception {
        String topic = topic("expect");
        byte[] body = ("{\"records\":[{\"partition\":0,\"value\":\"" + "v".repeat(2000) + "\"}]}")
                .getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);   // without the 100 Continue, the read below fails after this
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/topics/" + topic + "/records HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n"
                    + "Expect: 100-continue\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            assertThat(readHead(in)).startsWith("HTTP/1.1 100 Continue");
            out.write(body);
            out.flush();
            assertThat(readHead(in)).startsWith("HTTP/1.1 200");
        }
    }

    /** An HTTP head: the bytes up to and including the blank line. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    private String topic(String prefix) throws Exception {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        HttpResponse<String> created = http.send(HttpRequest.newBuilder(base.resolve("/v1/topics"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + name + "\",\"partitions\":3}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).isEqualTo(201);
        return name;
    }

    /** A produce with a Content-Length (the route), or chunked (no length: the REST method). */
    private HttpResponse<byte[]> post(String topic, String body, boolean chunked) throws Exception {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        HttpRequest.BodyPublisher publisher = chunked
                ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes))
                : HttpRequest.BodyPublishers.ofByteArray(bytes);
        return http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic + "/records"))
                .header("Content-Type", "application/json").POST(publisher).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    private byte[] batches(String topic, int partition) throws Exception {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + topic
                        + "/partitions/" + partition + "/records?offset=0"))
                .header("Accept", "application/vnd.tierlog.record-batches").build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }
}
