package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.tierlog.http.Encoding;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JSON fetch and the SSE stream, rendered from the stored batch bytes, over a real socket: for records with
 * every edge the renderer has (escapes in keys and header names and values, non-ASCII, invalid UTF-8, null keys,
 * values and header values, values with surrounding whitespace and line breaks, values that are not JSON, large
 * values that cross the output and scratch buffers), the body is byte for byte what {@link RecordJson}'s
 * Jackson-generated rendering of the same records is, in both encodings; the fetch limits are those of a record
 * fetch, across batches.
 */
@QuarkusTest
class JsonFetchHttpTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_700_000_000_000L;

    @TestHTTPResource("/")
    URI root;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void fetchBodyIsByteForByteTheReferenceRenderingInBothEncodings() throws Exception {
        String topic = "jsonfetch-" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(topic, 2);
        List<LogRecord> records = edgeCases();
        // Two requests, so two batches: the second starts with the large values.
        produceBase64(topic, 0, records.subList(0, 9));
        produceBase64(topic, 0, records.subList(9, records.size()));
        long hw = records.size();

        for (Encoding encoding : Encoding.values()) {
            String query = "?offset=0&maxRecords=1000&maxBytes=10000000&encoding=" + encoding.name().toLowerCase();
            HttpResponse<byte[]> r = get(topic, 0, query, null);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("application/json");
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).as(encoding.name())
                    .isEqualTo(reference(topic, 0, records, hw, hw, encoding));
        }
        // From the middle of a batch, and an explicit Accept of JSON.
        HttpResponse<byte[]> mid = get(topic, 0, "?offset=3&maxRecords=4", "application/json");
        assertThat(new String(mid.body(), StandardCharsets.UTF_8))
                .isEqualTo(reference(topic, 0, records.subList(3, 7), 7, hw, Encoding.JSON));
    }

    @Test
    void emptyFetchAtTheEndAndLimitsAcrossBatches() throws Exception {
        String topic = "jsonlimits-" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(topic, 1);
        HttpResponse<byte[]> empty = get(topic, 0, "?offset=0", null);
        assertThat(new String(empty.body(), StandardCharsets.UTF_8))
                .isEqualTo("{\"topic\":\"" + topic + "\",\"partition\":0,\"records\":[],\"nextOffset\":0,"
                        + "\"highWatermark\":0,\"logStartOffset\":0}");
        List<LogRecord> all = new ArrayList<>();
        for (int batch = 0; batch < 4; batch++) {
            List<LogRecord> records = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                long offset = batch * 3L + i;
                records.add(new LogRecord(offset, T0 + offset, null, ("" + (10 + offset)).getBytes(StandardCharsets.UTF_8),
                        List.of()));
            }
            produceBase64(topic, 0, records);
            all.addAll(records);
        }
        // Each record counts 16 + 2 value bytes = 18 towards maxBytes.
        assertThat(offsets(get(topic, 0, "?offset=1&maxRecords=7", null))).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(offsets(get(topic, 0, "?offset=2&maxBytes=54", null))).containsExactly(2L, 3L, 4L);
        assertThat(offsets(get(topic, 0, "?offset=2&maxBytes=53", null))).containsExactly(2L, 3L);
        assertThat(offsets(get(topic, 0, "?offset=5&maxBytes=1", null))).as("the first record always").containsExactly(5L);
        JsonNode tail = JSON.readTree(get(topic, 0, "?offset=10", null).body());
        assertThat(tail.get("nextOffset").asLong()).isEqualTo(12);
        assertThat(new String(get(topic, 0, "?offset=4&maxRecords=5", null).body(), StandardCharsets.UTF_8))
                .isEqualTo(reference(topic, 0, all.subList(4, 9), 9, 12, Encoding.JSON));
        HttpResponse<byte[]> atEnd = get(topic, 0, "?offset=12&encoding=base64", null);
        assertThat(new String(atEnd.body(), StandardCharsets.UTF_8)).isEqualTo(reference(topic, 0, List.of(), 12, 12,
                Encoding.BASE64));
    }

    @Test
    void sseEventsCarryTheReferenceRecordsAndSplitValuesOverLines() throws Exception {
        String topic = "jsonsse-" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(topic, 1);
        List<LogRecord> records = edgeCases();
        produceBase64(topic, 0, records.subList(0, 9));
        produceBase64(topic, 0, records.subList(9, records.size()));
        HttpRequest req = HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic
                + "/partitions/0/stream?offset=earliest&encoding=json")).header("Accept", "text/event-stream").build();
        HttpResponse<Stream<String>> r = http.send(req, HttpResponse.BodyHandlers.ofLines());
        List<String[]> events = new ArrayList<>();
        try (Stream<String> lines = r.body()) {
            Iterator<String> it = lines.iterator();
            String id = null;
            StringBuilder data = null;
            boolean sawMultiLine = false;
            while (events.size() < records.size() && it.hasNext()) {
                String line = it.next();
                if (line.isEmpty()) {
                    if (data != null) {
                        events.add(new String[]{id, data.toString()});
                    }
                    id = null;
                    data = null;
                } else if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("data: ")) {
                    sawMultiLine |= data != null;
                    data = data == null ? new StringBuilder(line.substring(6)) : data.append('\n').append(line.substring(6));
                } else {
                    assertThat(line).matches(":.*|event: record");
                }
            }
            assertThat(sawMultiLine).as("a value with line breaks spans data lines").isTrue();
        }
        assertThat(events).hasSize(records.size());
        for (int i = 0; i < records.size(); i++) {
            LogRecord rec = records.get(i);
            assertThat(events.get(i)[0]).isEqualTo(Long.toString(rec.offset()));
            String expected = recordReference(topic, 0, rec);
            JsonNode actual = JSON.readTree(events.get(i)[1]);
            assertThat(actual).as("record %d", i).isEqualTo(JSON.readTree(expected));
            if (!expected.contains("\n") && !expected.contains("\r")) {
                assertThat(events.get(i)[1]).isEqualTo(expected);
            }
        }
    }

    /** Records with every edge the renderer has, at offsets 0.. of a fresh partition. */
    private static List<LogRecord> edgeCases() {
        byte[] badUtf8 = {(byte) 0xFF, 1};
        String bigString = "\"" + "abcdefgh".repeat(40_000) + "\"";
        StringBuilder bigJson = new StringBuilder("{\"big\": [");
        for (int i = 0; i < 30_000; i++) {
            bigJson.append(i == 0 ? "" : ", ").append(i);
        }
        bigJson.append("],\n \"s\": \"\u00e9\"}");
        byte[] bigBinary = new byte[150_000];
        new java.util.Random(5).nextBytes(bigBinary);
        List<byte[]> values = List.of(
                utf8("{\"a\":[1,2.50,\"x y\"]}"),
                utf8(" \n {\"a\": 1}\r\n "),
                utf8("\"caf\u00e9 \\u00e9\""),
                utf8("\"a\\\"b\\\\c\\u0041\\/\""),
                utf8("12345678901234567890123"),
                utf8("not json"),
                new byte[0],
                new byte[]{'"', (byte) 0xC3, '"'},
                utf8("{\"a\":1} {\"b\":2}"),
                utf8(bigString),
                utf8(bigJson.toString()),
                bigBinary,
                utf8("{\n  \"a\": [1,\r\n 2]\r}"),
                utf8("true"));
        List<LogRecord> out = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            byte[] key = switch (i % 4) {
                case 0 -> utf8("k\"\u00e9\n\u0001\u001f\u007f\\/\u2028");
                case 1 -> null;
                case 2 -> badUtf8;
                default -> new byte[0];
            };
            List<Header> headers = switch (i % 3) {
                case 0 -> List.of(new Header("h\u0002\"\u00e9\b\f", utf8("v\\\t\u0000\u00e9")), new Header("n", null));
                case 1 -> List.of(new Header("ok", utf8("x")), new Header("bin", new byte[]{(byte) 0xC3}),
                        new Header("nul", null));
                default -> List.of();
            };
            out.add(new LogRecord(i, T0 + i, key, i == 5 ? null : values.get(i), headers));
        }
        out.add(new LogRecord(out.size(), T0 - 5, utf8("tombstone"), null, List.of(new Header("", new byte[0]))));
        return out;
    }

    private void produceBase64(String topic, int partition, List<LogRecord> records) throws Exception {
        ObjectNode body = JSON.createObjectNode();
        body.put("encoding", "base64");
        ArrayNode array = body.putArray("records");
        for (LogRecord r : records) {
            ObjectNode rec = array.addObject();
            rec.put("partition", partition);
            rec.put("timestamp", r.timestamp());
            if (r.key() != null) {
                rec.put("key", Base64.getEncoder().encodeToString(r.key()));
            }
            if (r.value() == null) {
                rec.putNull("value");
            } else {
                rec.put("value", Base64.getEncoder().encodeToString(r.value()));
            }
            ObjectNode headers = rec.putObject("headers");
            for (Header h : r.headers()) {
                if (h.value() == null) {
                    headers.putNull(h.name());
                } else {
                    headers.put(h.name(), Base64.getEncoder().encodeToString(h.value()));
                }
            }
        }
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic + "/records"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode offsets = JSON.readTree(r.body()).get("offsets");
        for (int i = 0; i < records.size(); i++) {
            assertThat(offsets.get(i).get("offset").asLong()).isEqualTo(records.get(i).offset());
        }
    }

    private void createTopic(String name, int partitions) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(root.resolve("/v1/topics"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + name + "\",\"partitions\":" + partitions + "}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    }

    private HttpResponse<byte[]> get(String topic, int partition, String query, String accept) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(root.resolve("/v1/topics/" + topic + "/partitions/" + partition
                + "/records" + query));
        if (accept != null) {
            b.header("Accept", accept);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static List<Long> offsets(HttpResponse<byte[]> r) throws Exception {
        assertThat(r.statusCode()).isEqualTo(200);
        List<Long> out = new ArrayList<>();
        for (JsonNode rec : JSON.readTree(r.body()).get("records")) {
            out.add(rec.get("offset").asLong());
        }
        return out;
    }

    /** The fetch body as Jackson renders it with {@link RecordJson}: the answer before it was rendered from batches. */
    private static String reference(String topic, int partition, List<LogRecord> records, long nextOffset, long hw,
                                    Encoding encoding) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("topic", topic);
            g.writeNumberField("partition", partition);
            g.writeArrayFieldStart("records");
            for (LogRecord r : records) {
                RecordJson.write(g, null, 0, r, encoding);
            }
            g.writeEndArray();
            g.writeNumberField("nextOffset", nextOffset);
            g.writeNumberField("highWatermark", hw);
            g.writeNumberField("logStartOffset", 0);
            g.writeEndObject();
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String recordReference(String topic, int partition, LogRecord r) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            RecordJson.write(g, topic, partition, r, Encoding.JSON);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
