package io.tierlog.http;

import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.ingest.ProducerRef;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.Header;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of the JSON produce parser ({@link ProduceRequestParser}), the code every produce body of
 * every client reaches first. Whatever the bytes, the parser answers either a {@code bad-request}
 * {@link TierlogException} whose {@code field} names what is wrong (the 400 the service sends), or a request that
 * holds exactly what the body said: rendered back to JSON (base64, so bytes are exact) it parses to the same
 * request, and with {@code encoding=json} every stored value is the body's JSON value, as JSON. Any other
 * exception (a 500 in the service) or a failed assertion is a finding.
 *
 * <p>The corpus ({@code ProduceRequestParserJazzerTestInputs}) holds bodies of docs/api.md's forms and every
 * reproducer found; it runs as a regression test in every build. Fuzzing: docs/RELIABILITY.md, "Fuzzing".
 */
class ProduceRequestParserJazzerTest {
    private static final ProduceRequestParser PARSER = new ProduceRequestParser();
    private static final ObjectMapper TREES = new ObjectMapper();
    private static final JsonFactory JSON = new JsonFactory();

    @FuzzTest(maxDuration = "2m")
    void parsesOrRefusesNamingAField(byte[] body) {
        ProduceRequest request;
        try {
            request = PARSER.parse(body);
        } catch (TierlogException refused) {
            assertThat(refused.type()).isEqualTo(ErrorType.BAD_REQUEST);
            assertThat(refused.extra().get("field")).isInstanceOf(String.class);
            assertThat((String) refused.extra().get("field")).isNotBlank();
            assertThat(refused.getMessage()).isNotBlank();
            return;
        }
        assertThat(request.records()).isNotEmpty();
        byte[] rendered = render(request);
        assertThat(render(PARSER.parse(rendered))).isEqualTo(rendered);
        valuesAreTheBodysJson(body, request);
    }

    /**
     * The one-pass encoder ({@link ProduceBodyEncoder}) on the same bytes: it declines the body (the old path then
     * answers) or makes byte for byte the batches the old path appends; it never takes a body the old path refuses.
     */
    @FuzzTest(maxDuration = "2m")
    void encodesAsTheOldPathOrDeclines(byte[] body) {
        ReferenceBatches.assertSameAsReference(body);
    }

    /**
     * With {@code encoding=json} (or none), a stored value is the compact text of the body's value: as JSON, equal
     * to it; keys and header values are their strings' UTF-8.
     */
    private static void valuesAreTheBodysJson(byte[] body, ProduceRequest request) {
        JsonNode tree;
        try {
            tree = TREES.readTree(body);
        } catch (IOException e) {
            throw new AssertionError("the parser accepted a body Jackson cannot read: " + e.getMessage(), e);
        }
        JsonNode encoding = tree.path("encoding");
        if (encoding.isTextual() && !encoding.asText().equalsIgnoreCase("json")) {
            return;
        }
        JsonNode records = tree.path("records");
        for (int i = 0; i < request.records().size(); i++) {
            ProduceRecord record = request.records().get(i);
            JsonNode sent = records.get(i);
            JsonNode value = sent.get("value");
            if (value.isNull()) {
                assertThat(record.value()).isNull();
            } else {
                try {
                    assertThat(TREES.readTree(record.value())).isEqualTo(value);
                } catch (IOException e) {
                    throw new AssertionError("records[" + i + "].value was stored as invalid JSON: "
                            + new String(record.value(), StandardCharsets.UTF_8), e);
                }
            }
            JsonNode key = sent.path("key");
            if (key.isTextual()) {
                assertThat(record.key()).isEqualTo(key.asText().getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    /** The request as a body of {@code encoding=base64}: every field the parser gave, in a fixed order. */
    static byte[] render(ProduceRequest request) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("encoding", "base64");
            g.writeArrayFieldStart("records");
            for (ProduceRecord r : request.records()) {
                g.writeStartObject();
                bytes(g, "key", r.key());
                bytes(g, "value", r.value());
                g.writeObjectFieldStart("headers");
                for (Header h : r.headers()) {
                    bytes(g, h.name(), h.value());
                }
                g.writeEndObject();
                if (r.partition() != null) {
                    g.writeNumberField("partition", r.partition());
                }
                if (r.timestamp() != null) {
                    g.writeNumberField("timestamp", r.timestamp());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            if (request.producer().isPresent()) {
                ProducerRef p = request.producer().get();
                g.writeObjectFieldStart("producer");
                g.writeStringField("id", p.id());
                g.writeNumberField("epoch", p.epoch());
                if (p.sequence() != null) {
                    g.writeNumberField("sequence", p.sequence());
                } else {
                    g.writeObjectFieldStart("sequences");
                    for (Map.Entry<Integer, Integer> e : p.sequences().entrySet()) {
                        g.writeNumberField(Integer.toString(e.getKey()), e.getValue());
                    }
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void bytes(JsonGenerator g, String field, byte[] value) throws IOException {
        if (value == null) {
            g.writeNullField(field);
        } else {
            g.writeStringField(field, Base64.getEncoder().encodeToString(value));
        }
    }
}
