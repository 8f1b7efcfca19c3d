package io.tierlog.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every operation {@code /q/openapi} documents, sent random requests built from its own description: path and query
 * parameters from what breaks servers (-1, overflowing numbers, words where numbers go, empty, odd and oversize
 * names) or from a topic and group that exist, bodies from the operation's schema with values of the wrong type,
 * missing and unknown fields, and bodies that are no JSON at all. Each answer is below 500, and every 4xx is a
 * problem+json of its own status that carries no stack trace, exception name or file path. Deterministic for a seed;
 * {@code -Dfuzz.http.requests-per-operation=N -Dfuzz.http.seed=S} for longer rounds by hand.
 */
@QuarkusTest
class HttpRandomRequestsTest {
    private static final int PER_OPERATION = Integer.getInteger("fuzz.http.requests-per-operation", 40);
    private static final long SEED = Long.getLong("fuzz.http.seed", 20261207L);
    private static final Set<String> METHODS = Set.of("get", "put", "post", "patch", "delete");
    private static final String[] ODD = {"", " ", ".", "..", "-1", "0", "1", "abc", "9223372036854775808", "1e3",
        "__consumer_offsets", "ü", "a/b", "%00", "x".repeat(250), "y".repeat(300)};
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TestHTTPResource("/")
    URI base;

    private final Random random = new Random(SEED);
    private HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private int cancelledStreams;
    private final Map<Integer, Integer> statuses = new TreeMap<>();
    private String topic;
    private String group;

    @Test
    void everyOperationAnswersRandomRequestsBelow500WithProblemsThatTellNothingInternal() throws Exception {
        newTopicAndGroup();

        JsonNode doc = MAPPER.readTree(call("GET", "/q/openapi?format=json", null, 200));
        List<String> failures = new ArrayList<>();
        int sent = 0;
        for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
            if (!path.getKey().startsWith("/v1/")) {
                continue;
            }
            for (Map.Entry<String, JsonNode> op : path.getValue().properties()) {
                if (!METHODS.contains(op.getKey())) {
                    continue;
                }
                for (int i = 0; i < PER_OPERATION; i++) {
                    String failure = send(doc, op.getKey().toUpperCase(Locale.ROOT), path.getKey(), op.getValue());
                    sent++;
                    if (failure != null) {
                        failures.add(failure);
                    }
                }
                if (statusOf("/v1/topics/" + topic) != 200) {
                    newTopicAndGroup(); // deleted by the rounds: the next operation gets names that exist again
                }
            }
        }
        System.out.printf("random HTTP requests: %d sent, answered %s, %d wrongly (seed %d)%n", sent, statuses,
                failures.size(), SEED);
        assertThat(sent).as("requests sent").isGreaterThan(20 * PER_OPERATION);
        assertThat(failures).as("answers to random requests (seed %d)", SEED).isEmpty();
    }

    private void newTopicAndGroup() throws Exception {
        topic = ApiTest.unique("httpfuzz");
        group = ApiTest.unique("httpfuzz-group");
        call("POST", "/v1/topics", "{\"name\":\"" + topic + "\",\"partitions\":2}", 201);
        call("POST", "/v1/topics/" + topic + "/records", "{\"records\":[{\"partition\":0,\"key\":\"k\",\"value\":1},"
                + "{\"partition\":1,\"value\":2}]}", 200);
        call("PUT", "/v1/groups/" + group + "/offsets", "{\"offsets\":[{\"topic\":\"" + topic + "\",\"partition\":0,"
                + "\"offset\":1}]}", 204);
    }

    /** A request to set the rounds up; its answer's body, which must come with {@code expected}. */
    private String call(String method, String path, String json, int expected) throws Exception {
        HttpResponse<String> r = http.send(request(method, path, json), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s: %s", method, path, r.body()).isEqualTo(expected);
        return r.body();
    }

    private int statusOf(String path) throws Exception {
        return http.send(request("GET", path, null), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private HttpRequest request(String method, String path, String json) {
        HttpRequest.Builder b = authorized(HttpRequest.newBuilder(base.resolve(path.substring(1))))
                .timeout(Duration.ofSeconds(15));
        if (json == null) {
            return b.method(method, HttpRequest.BodyPublishers.noBody()).build();
        }
        return b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json))
                .build();
    }

    /** The request as the rounds' caller: anonymous here; the admin rounds add the bootstrap token. */
    HttpRequest.Builder authorized(HttpRequest.Builder request) {
        return request;
    }

    /** One random request of the operation; what was wrong with its answer, or null. */
    private String send(JsonNode doc, String method, String template, JsonNode op) throws Exception {
        StringBuilder path = new StringBuilder();
        for (String segment : template.substring(1).split("/")) {
            path.append('/').append(segment.startsWith("{") ? encode(pathValue(segment)) : segment);
        }
        StringBuilder query = new StringBuilder();
        for (JsonNode p : op.path("parameters")) {
            if ("query".equals(p.path("in").asText()) && random.nextInt(10) < 7) {
                query.append(query.isEmpty() ? '?' : '&').append(p.path("name").asText()).append('=')
                        .append(encode(queryValue(p.path("name").asText(), resolve(doc, p.path("schema")))));
            }
        }
        HttpRequest.Builder request = authorized(HttpRequest.newBuilder(base.resolve(path.substring(1) + query)))
                .timeout(Duration.ofSeconds(15));
        String body = "";
        if (op.has("requestBody")) {
            JsonNode content = op.path("requestBody").path("content");
            List<String> types = new ArrayList<>();
            content.fieldNames().forEachRemaining(types::add);
            String type = types.get(random.nextInt(types.size()));
            body = type.contains("json") ? jsonBody(doc, content.path(type).path("schema"))
                    : new String(bytes(random.nextInt(100)), StandardCharsets.ISO_8859_1);
            request.header("Content-Type", random.nextInt(20) == 0 ? "text/plain" : type);
        }
        request.method(method, op.has("requestBody") ? HttpRequest.BodyPublishers.ofString(body)
                : HttpRequest.BodyPublishers.noBody());
        String what = method + " " + path + query + (body.isEmpty() ? "" : " " + cut(body));
        HttpResponse<InputStream> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (HttpTimeoutException e) {
            return what + ": no answer within 15 s";
        } catch (IOException e) {
            return what + ": the connection closed without an answer (" + e + ")";
        }
        try (InputStream in = response.body()) {
            int status = response.statusCode();
            statuses.merge(status, 1, Integer::sum);
            if (status < 400) {
                if (template.endsWith("/stream")) {
                    cancelledStreams++; // a stream's body is not waited for: closing it resets the HTTP/2 stream
                    if (cancelledStreams % 100 == 0) {
                        // The server closes a connection after 200 resets in 30 s (its rapid-reset guard).
                        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                    }
                } else {
                    in.transferTo(OutputStream.nullOutputStream()); // read whole: no reset for a finished answer
                }
                return null;
            }
            String answer = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
            if (status >= 500) {
                return what + ": " + status + " " + cut(answer);
            }
            String type = response.headers().firstValue("Content-Type").orElse("");
            if (!type.startsWith("application/problem+json")) {
                return what + ": " + status + " as " + type;
            }
            JsonNode problem = MAPPER.readTree(answer);
            if (problem.path("status").asInt() != status || problem.path("type").asText().isEmpty()
                    || problem.path("detail").asText().isEmpty()) {
                return what + ": " + status + " problem without its status, type or detail: " + cut(answer);
            }
            for (String internal : List.of("Exception", "\tat ", "java.", "io.tierlog", "target/", "/tmp/")) {
                if (answer.contains(internal)) {
                    return what + ": " + status + " tells '" + internal + "': " + cut(answer);
                }
            }
            return null;
        } catch (IOException e) {
            return what + ": unreadable answer (" + e + ")";
        }
    }

    private String pathValue(String name) {
        int r = random.nextInt(10);
        if (r < 6) {
            return switch (name) {
                case "{topic}" -> topic;
                case "{group}" -> group;
                case "{partition}" -> String.valueOf(random.nextInt(3));
                default -> "k";
            };
        }
        return ODD[random.nextInt(ODD.length)];
    }

    private String queryValue(String name, JsonNode schema) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (random.nextInt(3) == 0) {
            return ODD[random.nextInt(ODD.length)];
        }
        if (lower.contains("wait") || lower.contains("timeout")) {
            return String.valueOf(random.nextInt(200)); // a long poll waits no longer
        }
        return switch (schema.path("type").asText()) {
            case "integer", "number" -> String.valueOf(new long[]{0, 1, 2, -1, random.nextInt(1000),
                Integer.MAX_VALUE, Long.MAX_VALUE, Long.MIN_VALUE}[random.nextInt(8)]);
            case "boolean" -> random.nextBoolean() ? "true" : "false";
            default -> schema.has("enum") && schema.path("enum").size() > 0
                    ? schema.path("enum").get(random.nextInt(schema.path("enum").size())).asText()
                    : new String[]{"earliest", "latest", "json", "binary", "read_committed", topic}[random.nextInt(6)];
        };
    }

    private String jsonBody(JsonNode doc, JsonNode schema) {
        int r = random.nextInt(20);
        return switch (r) {
            case 0 -> "";
            case 1 -> "{";
            case 2 -> "null";
            case 3 -> "[]";
            case 4 -> "\"x\"";
            case 5 -> "{\"a\":" + "[".repeat(600) + "]".repeat(600) + "}";
            default -> value(doc, schema, 0).toString();
        };
    }

    /** A value for {@code schema}: mostly of its type, sometimes null or of another type. */
    private JsonNode value(JsonNode doc, JsonNode schema, int depth) {
        schema = resolve(doc, schema);
        int r = random.nextInt(12);
        if (r == 0) {
            return JSON.nullNode();
        }
        String type = r == 1 ? new String[]{"string", "integer", "object", "array", "boolean"}[random.nextInt(5)]
                : schema.path("type").asText(schema.has("properties") ? "object" : "string");
        switch (type) {
            case "object": {
                ObjectNode o = JSON.objectNode();
                if (depth > 4) {
                    return o;
                }
                for (Iterator<Map.Entry<String, JsonNode>> it = schema.path("properties").properties().iterator();
                     it.hasNext(); ) {
                    Map.Entry<String, JsonNode> field = it.next();
                    if (random.nextInt(5) > 0) {
                        o.set(field.getKey(), value(doc, field.getValue(), depth + 1));
                    }
                }
                if (random.nextInt(10) == 0) {
                    o.put("unknownField", 1);
                }
                return o;
            }
            case "array": {
                ArrayNode a = JSON.arrayNode();
                for (int i = depth > 4 ? 0 : random.nextInt(4); i > 0; i--) {
                    a.add(value(doc, schema.path("items"), depth + 1));
                }
                return a;
            }
            case "integer":
            case "number":
                return JSON.numberNode(new long[]{0, 1, 2, -1, -2, random.nextInt(1000), Integer.MAX_VALUE,
                    Long.MAX_VALUE, Long.MIN_VALUE}[random.nextInt(9)]);
            case "boolean":
                return JSON.booleanNode(random.nextBoolean());
            default:
                if (schema.has("enum") && schema.path("enum").size() > 0 && random.nextBoolean()) {
                    return schema.path("enum").get(random.nextInt(schema.path("enum").size()));
                }
                return JSON.textNode(random.nextBoolean() ? topic : ODD[random.nextInt(ODD.length)]);
        }
    }

    /** The schema a {@code $ref} names (once, then its target's own), or {@code schema} itself. */
    private static JsonNode resolve(JsonNode doc, JsonNode schema) {
        for (int i = 0; i < 5 && schema.has("$ref"); i++) {
            schema = doc.at(schema.path("$ref").asText().substring(1));
        }
        if (schema.has("allOf") && schema.path("allOf").size() == 1) {
            return resolve(doc, schema.path("allOf").get(0));
        }
        return schema;
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String cut(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "...";
    }
}
