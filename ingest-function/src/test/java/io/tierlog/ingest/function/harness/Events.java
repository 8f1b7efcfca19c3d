package io.tierlog.ingest.function.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** The sample API Gateway v2 events under {@code src/test/resources/events}, and variations of them. */
public final class Events {
    public static final ObjectMapper JSON = new ObjectMapper();

    private Events() {
    }

    public static String load(String name) {
        try (InputStream in = Events.class.getResourceAsStream("/events/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no event " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The {@code produce-json.json} event aimed at {@code topic} with {@code body} as its (plain) body. */
    public static String produce(String topic, String body, String apiRequestId) {
        try {
            ObjectNode e = (ObjectNode) JSON.readTree(load("produce-json.json"));
            String path = "/v1/topics/" + topic + "/records";
            e.put("rawPath", path);
            ((ObjectNode) e.get("pathParameters")).put("topic", topic);
            ObjectNode ctx = (ObjectNode) e.get("requestContext");
            ((ObjectNode) ctx.get("http")).put("path", path);
            ctx.put("requestId", apiRequestId);
            ((ObjectNode) e.get("headers")).put("content-length", String.valueOf(body.getBytes(StandardCharsets.UTF_8).length));
            e.put("body", body);
            return JSON.writeValueAsString(e);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * The {@code produce-record-batches.json} event (Content-Type {@code application/vnd.tierlog.record-batches})
     * aimed at {@code topic} and {@code partition} with {@code body} base64-encoded and {@code isBase64Encoded}
     * true, as API Gateway hands over a binary body.
     */
    public static String recordBatches(String topic, int partition, byte[] body, String apiRequestId) {
        try {
            ObjectNode e = (ObjectNode) JSON.readTree(load("produce-record-batches.json"));
            String path = "/v1/topics/" + topic + "/records";
            e.put("rawPath", path);
            e.put("rawQueryString", "partition=" + partition);
            ((ObjectNode) e.get("queryStringParameters")).put("partition", String.valueOf(partition));
            ((ObjectNode) e.get("pathParameters")).put("topic", topic);
            ObjectNode ctx = (ObjectNode) e.get("requestContext");
            ((ObjectNode) ctx.get("http")).put("path", path);
            ctx.put("requestId", apiRequestId);
            ((ObjectNode) e.get("headers")).put("content-length", String.valueOf(body.length));
            e.put("body", Base64.getEncoder().encodeToString(body));
            e.put("isBase64Encoded", true);
            return JSON.writeValueAsString(e);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** An APIGatewayV2HTTPResponse as JSON, with its body parsed. */
    public record Response(int status, JsonNode headers, JsonNode body) {
        public String header(String name) {
            JsonNode h = headers == null ? null : headers.get(name);
            return h == null ? null : h.asText();
        }
    }

    public static Response response(String json) {
        try {
            JsonNode r = JSON.readTree(json);
            JsonNode body = r.hasNonNull("body") ? JSON.readTree(r.get("body").asText()) : null;
            return new Response(r.get("statusCode").asInt(), r.get("headers"), body);
        } catch (IOException e) {
            throw new UncheckedIOException("not a response: " + json, e);
        }
    }
}
