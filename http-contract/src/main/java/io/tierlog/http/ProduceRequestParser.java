package io.tierlog.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.format.Header;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.ingest.ProducerRef;

/**
 * Parses a produce request body (docs/api.md). Every error is a {@code bad-request} whose detail names the
 * field by its JSON path, e.g. {@code records[3].partition must be an integer}. Unknown fields are rejected, so
 * a misspelt {@code "partiton"} is an error rather than a silently ignored option; so are duplicate fields.
 *
 * <p>One streaming pass over the body, without building a tree: this is the produce hot path, and a request of
 * 1000 values of 1 KiB is mostly value bytes. A JSON value ({@code encoding=json}) is stored as its compact JSON
 * text, which for a string, number or literal is exactly its bytes in the body, and for an object or array is
 * its bytes with the insignificant whitespace dropped ({@link CompactJson}); so values are copied, never decoded
 * and re-encoded, and numbers keep their exact text. Because {@code encoding} may follow {@code records} in the
 * body, keys, values and header values are first kept as {@link RawToken}s and decoded once the encoding is known.
 *
 * <p>Thread-safe.
 */
public final class ProduceRequestParser {
    static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(JsonLimits.READ)
            .build();

    public ProduceRequest parse(byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            try {
                return new Pass(body, p).request();
            } catch (TierlogException e) {
                // A body that is not JSON at all is reported as such, even past a field error found first.
                while (p.nextToken() != null) {
                    p.skipChildren();
                }
                throw e;
            }
        } catch (StreamConstraintsException e) {
            throw bad("body", JsonLimits.TOO_DEEP);
        } catch (JsonProcessingException e) {
            // Not every parser error carries a location.
            JsonLocation at = e.getLocation();
            throw bad("body", "body is not valid JSON: " + e.getOriginalMessage()
                    + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr()));
        } catch (IOException e) {
            throw bad("body", "body could not be read: " + e.getMessage());
        }
    }

    /**
     * A key, value or header value as it appeared in the body: its first token and its byte span
     * {@code [start, end)}. {@code text} is the decoded string for string tokens where it is needed (keys, header
     * values, escaped values) and the literal text of numbers, booleans; null otherwise.
     */
    private record RawToken(JsonToken token, int start, int end, String text) {
        boolean isNull() {
            return token == JsonToken.VALUE_NULL;
        }

        boolean isString() {
            return token == JsonToken.VALUE_STRING;
        }
    }

    private record RawHeader(String name, RawToken value) {
    }

    private record RawRecord(RawToken key, RawToken value, List<RawHeader> headers, Long partition,
                             Long timestamp) {
    }

    /** One parse of one body. Its {@link #producer} also serves the one-pass encoder ({@link ProduceBodyEncoder}). */
    static final class Pass {
        private final byte[] body;
        /** The body is {@code body[0, length)}; the array may be longer (a pooled one). */
        private final int length;
        private final JsonParser p;

        Pass(byte[] body, JsonParser p) {
            this(body, body.length, p);
        }

        Pass(byte[] body, int length, JsonParser p) {
            this.body = body;
            this.length = length;
            this.p = p;
        }

        ProduceRequest request() throws IOException {
            JsonToken first = p.nextToken();
            // Jackson detects UTF-16 and UTF-32 bodies and reads them through a char-based parser without byte
            // offsets, but the spans of keys and values are byte offsets into the body. RFC 8259 (section 8.1) has
            // JSON between systems in UTF-8, so anything else is refused here (it was an
            // ArrayIndexOutOfBoundsException, a 500, seen while writing ProduceRequestParserJazzerTest).
            if (first != null && p.currentTokenLocation().getByteOffset() < 0) {
                throw bad("body", "body must be JSON in UTF-8; it looks like UTF-16 or UTF-32");
            }
            if (first != JsonToken.START_OBJECT) {
                throw bad("body", "body must be a JSON object with a 'records' array");
            }
            String encodingText = null;
            List<RawRecord> records = null;
            Optional<ProducerRef> producer = Optional.empty();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "records" -> records = records(t);
                    case "encoding" -> encodingText = optionalText(t, "encoding");
                    case "producer" -> producer = producer(t);
                    default -> throw unknown(member("", field));
                }
            }
            if (p.nextToken() != null) {
                throw bad("body", "body must hold exactly one JSON object, but more follows it");
            }
            Encoding encoding = Encoding.parse(encodingText, "encoding");
            if (records == null) {
                throw bad("records", "records must be an array");
            }
            List<ProduceRecord> decoded = new ArrayList<>(records.size());
            for (int i = 0; i < records.size(); i++) {
                decoded.add(decode(records.get(i), i, encoding));
            }
            return new ProduceRequest(decoded, producer);
        }

        private List<RawRecord> records(JsonToken t) throws IOException {
            if (t != JsonToken.START_ARRAY) {
                p.skipChildren();
                throw bad("records", "records must be an array");
            }
            List<RawRecord> out = new ArrayList<>();
            for (JsonToken r = p.nextToken(); r != JsonToken.END_ARRAY; r = p.nextToken()) {
                out.add(record(r, out.size()));
            }
            if (out.isEmpty()) {
                throw bad("records", "records must not be empty");
            }
            return out;
        }

        /** Record {@code index} of {@code records}; its paths ({@code records[i]...}) are only built for errors. */
        private RawRecord record(JsonToken t, int index) throws IOException {
            if (t != JsonToken.START_OBJECT) {
                String path = recordPath(index);
                throw bad(path, path + " must be an object");
            }
            RawToken key = null;
            RawToken value = null;
            int valueStart = -1;
            List<RawHeader> headers = List.of();
            Long partition = null;
            Long timestamp = null;
            JsonToken next = p.nextToken();
            while (next == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "key" -> key = raw(v, true);
                    case "value" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            // The commonest value: its end is found once the parser has moved past it (below).
                            valueStart = (int) p.currentTokenLocation().getByteOffset();
                        } else {
                            value = raw(v, false);
                        }
                    }
                    case "headers" -> headers = headers(v, recordPath(index) + ".headers");
                    case "partition" -> partition = integer(v, recordPath(index) + ".partition", 0, Integer.MAX_VALUE);
                    case "timestamp" -> timestamp = integer(v, recordPath(index) + ".timestamp", 0, Long.MAX_VALUE);
                    default -> throw unknown(member(recordPath(index), field));
                }
                next = p.nextToken();
                if (valueStart >= 0 && value == null) {
                    value = stringEndingBefore(valueStart, (int) p.currentTokenLocation().getByteOffset());
                }
            }
            return new RawRecord(key, value, headers, partition, timestamp);
        }

        /** The string value starting at {@code start}, ending before the token at {@code nextToken}. */
        private RawToken stringEndingBefore(int start, int nextToken) {
            return new RawToken(JsonToken.VALUE_STRING, start, CompactJson.stringEnd(body, length, start, nextToken), null);
        }

        private List<RawHeader> headers(JsonToken t, String path) throws IOException {
            if (t == JsonToken.VALUE_NULL) {
                return List.of();
            }
            if (t != JsonToken.START_OBJECT) {
                throw bad(path, path + " must be an object of string values");
            }
            List<RawHeader> out = new ArrayList<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                out.add(new RawHeader(name, raw(p.nextToken(), true)));
            }
            return out;
        }

        /**
         * Captures the value at the current token and moves past it. Strings need their decoded text when they
         * are short fields ({@code needText}) or hold escapes; a plain string value is kept as its span only.
         */
        private RawToken raw(JsonToken t, boolean needText) throws IOException {
            int start = (int) p.currentTokenLocation().getByteOffset();
            switch (t) {
                case VALUE_STRING -> {
                    return scannedString(start, needText);
                }
                case START_OBJECT, START_ARRAY -> {
                    p.skipChildren();
                    return new RawToken(t, start, (int) p.currentLocation().getByteOffset(), null);
                }
                case VALUE_NULL -> {
                    return new RawToken(t, start, start, null);
                }
                default -> {
                    // numbers and booleans: the parser keeps their literal text, so precision is never lost
                    return new RawToken(t, start, start, p.getText());
                }
            }
        }

        /**
         * The string token at {@code start} (the current token), its span found by scanning for the closing quote.
         * The parser validates the string when it moves past it; decoding it to text is only needed for short fields
         * and escaped values.
         */
        private RawToken scannedString(int start, boolean needText) throws IOException {
            int end = start + 1;
            boolean escaped = false;
            while (end < length && body[end] != '"') {
                if (body[end] == '\\') {
                    escaped = true;
                    end++;
                }
                end++;
            }
            if (end >= length) {
                p.finishToken();   // unterminated: the parser reports where
                throw bad("body", "body is not valid JSON: unterminated string");
            }
            return new RawToken(JsonToken.VALUE_STRING, start, end + 1, needText || escaped ? p.getText() : null);
        }

        private ProduceRecord decode(RawRecord r, int index, Encoding encoding) {
            byte[] key = text(r.key(), index, null, encoding);
            List<Header> headers = new ArrayList<>(r.headers().size());
            for (RawHeader h : r.headers()) {
                headers.add(new Header(h.name(), text(h.value(), index, h.name(), encoding)));
            }
            if (r.value() == null) {
                String path = recordPath(index) + ".value";
                throw bad(path, path + " is required (a tombstone is an explicit \"value\": null)");
            }
            byte[] value = value(r.value(), index, encoding);
            return new ProduceRecord(key, value, headers, r.partition() == null ? null : r.partition().intValue(),
                    r.timestamp());
        }

        /** A value: null → null (a tombstone); else its JSON text, or its base64-decoded bytes. */
        private byte[] value(RawToken v, int index, Encoding encoding) {
            if (v == null || v.isNull()) {
                return null;
            }
            if (encoding == Encoding.BASE64) {
                return base64(v, index, ".value");
            }
            return switch (v.token()) {
                case VALUE_STRING -> Arrays.copyOfRange(body, v.start(), v.end());
                case START_OBJECT, START_ARRAY -> CompactJson.copy(body, v.start(), v.end());
                default -> v.text().getBytes(StandardCharsets.UTF_8);
            };
        }

        /**
         * A key ({@code header} null) or header value: absent or null → null; else a UTF-8 string, or base64-decoded
         * bytes. Its path ({@code records[i].key}, {@code records[i].headers.h}) is built only for an error.
         */
        private byte[] text(RawToken v, int index, String header, Encoding encoding) {
            String field = header == null ? ".key" : "." + member("headers", header);
            if (v == null || v.isNull()) {
                return null;
            }
            if (encoding == Encoding.BASE64) {
                return base64(v, index, field);
            }
            if (!v.isString()) {
                String path = recordPath(index) + field;
                throw bad(path, path + " must be a string (use encoding=base64 for raw bytes)");
            }
            return v.text().getBytes(StandardCharsets.UTF_8);
        }

        private byte[] base64(RawToken v, int index, String field) {
            if (!v.isString()) {
                String path = recordPath(index) + field;
                throw bad(path, path + " must be a base64 string");
            }
            try {
                if (v.text() != null) {
                    return Base64.getDecoder().decode(v.text());
                }
                if (hasEscape(v)) {
                    // A value string whose text was not kept (found by its span alone), with escapes such as \/.
                    return Base64.getDecoder().decode(unescaped(v));
                }
                ByteBuffer decoded = Base64.getDecoder().decode(
                        ByteBuffer.wrap(body, v.start() + 1, v.end() - v.start() - 2));
                return Arrays.copyOfRange(decoded.array(), decoded.arrayOffset() + decoded.position(),
                        decoded.arrayOffset() + decoded.limit());
            } catch (IllegalArgumentException e) {
                String path = recordPath(index) + field;
                throw bad(path, path + " is not valid base64: " + e.getMessage());
            }
        }

        private boolean hasEscape(RawToken v) {
            for (int i = v.start() + 1; i < v.end() - 1; i++) {
                if (body[i] == '\\') {
                    return true;
                }
            }
            return false;
        }

        /** The text of a string token that the parser has already validated, decoded by a parser of its own. */
        private String unescaped(RawToken v) {
            try (JsonParser one = JSON.createParser(body, v.start(), v.end() - v.start())) {
                one.nextToken();
                return one.getText();
            } catch (IOException e) {
                throw new IllegalStateException("a validated JSON string did not parse again", e);
            }
        }

        Optional<ProducerRef> producer(JsonToken t) throws IOException {
            if (t == JsonToken.VALUE_NULL) {
                return Optional.empty();
            }
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                throw bad("producer", "producer must be an object with id, epoch and sequence (or sequences)");
            }
            String id = null;
            Long epoch = null;
            Long sequence = null;
            Map<Integer, Integer> sequences = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "id" -> id = optionalText(v, "producer.id");
                    case "epoch" -> epoch = integer(v, "producer.epoch", 0, Short.MAX_VALUE);
                    case "sequence" -> sequence = integer(v, "producer.sequence", 0, Integer.MAX_VALUE);
                    case "sequences" -> sequences = sequences(v);
                    default -> throw unknown(member("producer", field));
                }
            }
            if (id == null || id.isEmpty() || id.length() > 256) {
                throw bad("producer.id", "producer.id must be a non-empty string of at most 256 characters");
            }
            if (epoch == null) {
                throw bad("producer.epoch", "producer.epoch is required");
            }
            if (sequence != null && sequences != null) {
                throw bad("producer.sequences", "give producer.sequence (records in one partition) or "
                        + "producer.sequences (one entry per partition), not both");
            }
            if (sequences != null) {
                return Optional.of(new ProducerRef(id, epoch.intValue(), sequences));
            }
            if (sequence == null) {
                throw bad("producer.sequence", "producer.sequence is required (producer.sequences when the records "
                        + "land in several partitions)");
            }
            return Optional.of(new ProducerRef(id, epoch.intValue(), sequence.intValue()));
        }

        /** {@code {"<partition>": sequence, ...}}: partition numbers as decimal keys, sequences in [0, 2^31-1]. */
        private Map<Integer, Integer> sequences(JsonToken t) throws IOException {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                throw bad("producer.sequences", "producer.sequences must be an object {\"<partition>\": sequence}");
            }
            Map<Integer, Integer> out = new TreeMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                String path = "producer.sequences." + key;
                if (!key.matches("0|[1-9][0-9]{0,9}") || Long.parseLong(key) > Integer.MAX_VALUE) {
                    p.nextToken();
                    p.skipChildren();
                    throw bad(path, path + ": producer.sequences keys must be partition numbers");
                }
                Long sequence = integer(p.nextToken(), path, 0, Integer.MAX_VALUE);
                if (sequence == null) {
                    throw bad(path, path + " must be an integer");
                }
                out.put(Integer.parseInt(key), sequence.intValue());
            }
            if (out.isEmpty()) {
                throw bad("producer.sequences", "producer.sequences must not be empty");
            }
            return out;
        }

        private String optionalText(JsonToken t, String path) throws IOException {
            if (t == JsonToken.VALUE_NULL) {
                return null;
            }
            if (t != JsonToken.VALUE_STRING) {
                throw bad(path, path + " must be a string");
            }
            return p.getText();
        }

        private Long integer(JsonToken t, String path, long min, long max) throws IOException {
            if (t == JsonToken.VALUE_NULL) {
                return null;
            }
            if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw bad(path, path + " must be an integer");
            }
            long v = p.getLongValue();
            if (v < min || v > max) {
                throw bad(path, path + " must be in [" + min + ", " + max + "]: " + v);
            }
            return v;
        }
    }

    private static String recordPath(int index) {
        return "records[" + index + "]";
    }

    /**
     * The path of member {@code name} of {@code parent} ("" for the body itself). An empty name is written
     * {@code ""} so that a problem's {@code field} is never blank (found by ProduceRequestParserJazzerTest).
     */
    private static String member(String parent, String name) {
        String shown = name.isEmpty() ? "\"\"" : name;
        return parent.isEmpty() ? shown : parent + "." + shown;
    }

    private static TierlogException unknown(String path) {
        return bad(path, "unknown field '" + path + "'");
    }

    static TierlogException bad(String field, String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", field));
    }
}
