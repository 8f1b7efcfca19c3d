package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tierlog.ingest.Encoding;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Renders a record as api.md's fetch JSON: {@code {"offset", "timestamp", "key", "value", "headers"}}.
 *
 * <p>{@code json}: a value whose bytes are one valid UTF-8 JSON text is embedded as JSON, byte for byte as
 * stored; any other value is a base64 string flagged {@code "valueEncoding": "base64"}. Keys and header values
 * are UTF-8 strings (a key that is not valid UTF-8 is base64 with {@code "keyEncoding": "base64"}).
 * {@code base64}: keys, values and header values are base64 strings. Stateless and thread-safe.
 */
public final class RecordJson {
    private static final JsonFactory FACTORY = new JsonFactory();

    private RecordJson() {
    }

    public static void write(JsonGenerator g, String topic, int partition, LogRecord r, Encoding encoding)
            throws IOException {
        g.writeStartObject();
        if (topic != null) {
            g.writeStringField("topic", topic);
            g.writeNumberField("partition", partition);
        }
        g.writeNumberField("offset", r.offset());
        g.writeNumberField("timestamp", r.timestamp());
        if (encoding == Encoding.BASE64) {
            writeBase64OrNull(g, "key", r.key());
            writeBase64OrNull(g, "value", r.value());
        } else {
            String key = utf8(r.key());
            if (r.key() != null && key == null) {
                g.writeStringField("key", Base64.getEncoder().encodeToString(r.key()));
                g.writeStringField("keyEncoding", "base64");
            } else {
                writeStringOrNull(g, "key", key);
            }
            String json = jsonText(r.value());
            if (r.value() == null) {
                g.writeNullField("value");
            } else if (json != null) {
                g.writeFieldName("value");
                g.writeRawValue(json);
            } else {
                g.writeStringField("value", Base64.getEncoder().encodeToString(r.value()));
                g.writeStringField("valueEncoding", "base64");
            }
        }
        g.writeObjectFieldStart("headers");
        for (Header h : r.headers()) {
            g.writeFieldName(h.name());
            if (h.value() == null) {
                g.writeNull();
            } else if (encoding == Encoding.BASE64) {
                g.writeString(Base64.getEncoder().encodeToString(h.value()));
            } else {
                String s = utf8(h.value());
                g.writeString(s != null ? s : Base64.getEncoder().encodeToString(h.value()));
            }
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeBase64OrNull(JsonGenerator g, String field, byte[] bytes) throws IOException {
        if (bytes == null) {
            g.writeNullField(field);
        } else {
            g.writeStringField(field, Base64.getEncoder().encodeToString(bytes));
        }
    }

    private static void writeStringOrNull(JsonGenerator g, String field, String s) throws IOException {
        if (s == null) {
            g.writeNullField(field);
        } else {
            g.writeStringField(field, s);
        }
    }

    /** The bytes as a string when they are valid UTF-8, else null. */
    static String utf8(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return chars.toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** The bytes as text when they hold exactly one valid JSON value (whitespace around it allowed), else null. */
    static String jsonText(byte[] bytes) {
        String text = utf8(bytes);
        if (text == null || text.isBlank()) {
            return null;
        }
        try (JsonParser p = FACTORY.createParser(text)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return null;
            }
            p.skipChildren();
            return p.nextToken() == null ? text.strip() : null;
        } catch (IOException e) {
            return null;
        }
    }
}
