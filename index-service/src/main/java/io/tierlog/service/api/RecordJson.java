package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import io.tierlog.http.Encoding;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.http.Utf8;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * Renders a record as api.md's fetch JSON: {@code {"offset", "timestamp", "key", "value", "headers"}}.
 *
 * <p>{@code json}: a value whose bytes are one valid UTF-8 JSON text is embedded as JSON, byte for byte as
 * stored (surrounding whitespace trimmed); any other value is a base64 string flagged
 * {@code "valueEncoding": "base64"}. Keys and header values are UTF-8 strings; a key that is not valid UTF-8 is
 * base64 with {@code "keyEncoding": "base64"}, and if any header value is not, every header value of that record
 * is base64 with {@code "headersEncoding": "base64"} (one marker for the record's headers, so a client never has
 * to guess which of them is which). {@code base64}: keys, values and header values are base64 strings, with no
 * markers.
 *
 * <p>This is the fetch and stream hot path, so stored bytes are checked and copied as bytes: nothing is decoded
 * to a {@code String} and encoded back. Stateless and thread-safe.
 */
public final class RecordJson {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final SerializedString OFFSET = new SerializedString("offset");
    private static final SerializedString TIMESTAMP = new SerializedString("timestamp");
    private static final SerializedString KEY = new SerializedString("key");
    private static final SerializedString VALUE = new SerializedString("value");
    private static final SerializedString HEADERS = new SerializedString("headers");

    private RecordJson() {
    }

    /**
     * Writes one record object.
     *
     * @return whether the output may hold a raw line break: true only when a stored value embedded as is
     *     contains CR or LF between its tokens (everything else Jackson writes escaped)
     */
    public static boolean write(JsonGenerator g, String topic, int partition, LogRecord r, Encoding encoding)
            throws IOException {
        boolean lineBreaks = false;
        g.writeStartObject();
        if (topic != null) {
            g.writeStringField("topic", topic);
            g.writeNumberField("partition", partition);
        }
        g.writeFieldName(OFFSET);
        g.writeNumber(r.offset());
        g.writeFieldName(TIMESTAMP);
        g.writeNumber(r.timestamp());
        g.writeFieldName(KEY);
        if (encoding == Encoding.BASE64) {
            writeBase64OrNull(g, r.key());
            g.writeFieldName(VALUE);
            writeBase64OrNull(g, r.value());
        } else {
            byte[] key = r.key();
            if (key == null) {
                g.writeNull();
            } else if (Utf8.isValid(key, 0, key.length)) {
                g.writeUTF8String(key, 0, key.length);
            } else {
                g.writeBinary(key);
                g.writeStringField("keyEncoding", "base64");
            }
            lineBreaks = writeJsonValue(g, r.value());
        }
        boolean headersAsText = encoding == Encoding.JSON && headerValuesAreUtf8(r);
        g.writeFieldName(HEADERS);
        g.writeStartObject();
        for (Header h : r.headers()) {
            g.writeFieldName(h.name());
            byte[] v = h.value();
            if (headersAsText && v != null) {
                g.writeUTF8String(v, 0, v.length);
            } else {
                writeBase64OrNull(g, v);
            }
        }
        g.writeEndObject();
        if (encoding == Encoding.JSON && !headersAsText) {
            g.writeStringField("headersEncoding", "base64");
        }
        g.writeEndObject();
        return lineBreaks;
    }

    /** Writes the value field; returns whether the value was embedded as is and contains CR or LF. */
    private static boolean writeJsonValue(JsonGenerator g, byte[] value) throws IOException {
        g.writeFieldName(VALUE);
        if (value == null) {
            g.writeNull();
            return false;
        }
        int from = 0;
        int to = value.length;
        while (from < to && isSpace(value[from])) {
            from++;
        }
        while (to > from && isSpace(value[to - 1])) {
            to--;
        }
        boolean plainString = isPlainAsciiJsonString(value, from, to);
        if (plainString || (from < to && Utf8.isValid(value, from, to) && isOneJsonValue(value, from, to))) {
            // Stored values are usually trimmed already (the produce path stores compact JSON text): no copy then.
            g.writeRawValue(new RawUtf8(from == 0 && to == value.length ? value : Arrays.copyOfRange(value, from, to)));
            return !plainString && containsLineBreak(value, from, to);
        }
        g.writeBinary(value);
        g.writeStringField("valueEncoding", "base64");
        return false;
    }

    /**
     * Whether {@code bytes[from, to)} is certainly one valid JSON string of ASCII characters: quoted, no control
     * character, no unescaped quote, only JSON's escapes. One pass, no parser: the common value (a JSON string)
     * needs nothing more. False means "not shown here", and the caller asks the full UTF-8 and JSON checks.
     */
    static boolean isPlainAsciiJsonString(byte[] bytes, int from, int to) {
        int last = to - 1;
        if (to - from < 2 || bytes[from] != '"' || bytes[last] != '"') {
            return false;
        }
        for (int i = from + 1; i < last; i++) {
            // Eight bytes at a time while none of them is a control character, non-ASCII, a quote or a backslash.
            while (i + 8 <= last && plainWord((long) LONGS.get(bytes, i))) {
                i += 8;
            }
            if (i >= last) {
                break;
            }
            byte c = bytes[i];
            if (c < 0x20 || c == '"') {
                return false;     // control character, non-ASCII (negative) byte, or a quote ending it early
            }
            if (c == '\\') {
                if (i + 1 >= last) {
                    return false;
                }
                byte e = bytes[++i];
                if (e == 'u') {
                    if (i + 4 >= last) {
                        return false;
                    }
                    for (int k = 1; k <= 4; k++) {
                        if (Character.digit(bytes[i + k], 16) < 0) {
                            return false;
                        }
                    }
                    i += 4;
                } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r'
                        && e != 't') {
                    return false;
                }
            }
        }
        return true;
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    /**
     * Whether none of the 8 bytes of {@code w} is below 0x20, above 0x7F, {@code "} or {@code \}: the SWAR forms
     * of "has a byte below n" and "has a zero byte", exact in answering whether any byte matches.
     */
    private static boolean plainWord(long w) {
        long below20 = (w - ONES * 0x20) & ~w;
        long quote = w ^ (ONES * '"');
        long backslash = w ^ (ONES * '\\');
        long zeroQuote = (quote - ONES) & ~quote;
        long zeroBackslash = (backslash - ONES) & ~backslash;
        return ((below20 | zeroQuote | zeroBackslash | w) & HIGHS) == 0;
    }

    private static boolean containsLineBreak(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == '\n' || bytes[i] == '\r') {
                return true;
            }
        }
        return false;
    }

    /**
     * Valid UTF-8 JSON text for {@link JsonGenerator#writeRawValue(SerializableString)}, which copies it into the
     * output as it is. Only the unquoted forms are offered: it is never written as a quoted string.
     */
    private record RawUtf8(byte[] utf8) implements SerializableString {
        @Override
        public String getValue() {
            return new String(utf8, StandardCharsets.UTF_8);
        }

        @Override
        public int charLength() {
            return getValue().length();
        }

        @Override
        public byte[] asUnquotedUTF8() {
            return utf8;
        }

        @Override
        public int appendUnquotedUTF8(byte[] buffer, int offset) {
            if (offset + utf8.length > buffer.length) {
                return -1;
            }
            System.arraycopy(utf8, 0, buffer, offset, utf8.length);
            return utf8.length;
        }

        @Override
        public int writeUnquotedUTF8(OutputStream out) throws IOException {
            out.write(utf8);
            return utf8.length;
        }

        @Override
        public int putUnquotedUTF8(ByteBuffer buffer) {
            if (buffer.remaining() < utf8.length) {
                return -1;
            }
            buffer.put(utf8);
            return utf8.length;
        }

        @Override
        public int appendUnquoted(char[] buffer, int offset) {
            String s = getValue();
            if (offset + s.length() > buffer.length) {
                return -1;
            }
            s.getChars(0, s.length(), buffer, offset);
            return s.length();
        }

        @Override
        public char[] asQuotedChars() {
            throw quotedUnsupported();
        }

        @Override
        public byte[] asQuotedUTF8() {
            throw quotedUnsupported();
        }

        @Override
        public int appendQuotedUTF8(byte[] buffer, int offset) {
            throw quotedUnsupported();
        }

        @Override
        public int appendQuoted(char[] buffer, int offset) {
            throw quotedUnsupported();
        }

        @Override
        public int writeQuotedUTF8(OutputStream out) {
            throw quotedUnsupported();
        }

        @Override
        public int putQuotedUTF8(ByteBuffer buffer) {
            throw quotedUnsupported();
        }

        private static UnsupportedOperationException quotedUnsupported() {
            return new UnsupportedOperationException("raw JSON text is never written as a quoted string");
        }
    }

    private static boolean headerValuesAreUtf8(LogRecord r) {
        for (Header h : r.headers()) {
            byte[] v = h.value();
            if (v != null && !Utf8.isValid(v, 0, v.length)) {
                return false;
            }
        }
        return true;
    }

    private static void writeBase64OrNull(JsonGenerator g, byte[] bytes) throws IOException {
        if (bytes == null) {
            g.writeNull();
        } else {
            g.writeBinary(bytes);
        }
    }

    /** Whether {@code bytes[from, to)} (valid UTF-8) is exactly one JSON value. */
    static boolean isOneJsonValue(byte[] bytes, int from, int to) {
        try (JsonParser p = FACTORY.createParser(bytes, from, to - from)) {
            if (p.nextToken() == null) {
                return false;
            }
            p.skipChildren();
            return p.nextToken() == null;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
