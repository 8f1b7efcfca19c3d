package io.tierlog.service.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.http.Encoding;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.http.Utf8;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class RecordJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void validJsonValuesAreEmbeddedByteForByteAndTrimmed() throws Exception {
        assertThat(valueText("{\"a\":[1,2.50,\"x y\"]}")).isEqualTo("{\"a\":[1,2.50,\"x y\"]}");
        assertThat(valueText(" \n 12345678901234567890123 \t")).isEqualTo("12345678901234567890123");
        assertThat(valueText("\"caf\u00e9 \\u00e9\"")).isEqualTo("\"caf\u00e9 \\u00e9\"");
        JsonNode r = render(record(bytes("{\"a\":1}")), Encoding.JSON);
        assertThat(r.get("value").get("a").asInt()).isEqualTo(1);
        assertThat(r.has("valueEncoding")).isFalse();
    }

    @Test
    void anythingButOneValidJsonValueIsBase64AndFlagged() throws Exception {
        for (byte[] v : List.of(bytes("not json"), bytes("{\"a\":1} {\"b\":2}"), bytes("{\"a\":"), bytes("  "),
                new byte[0], new byte[]{'"', (byte) 0xC3, '"'}, bytes("\"\t\""), new byte[]{'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'})) {
            JsonNode r = render(record(v), Encoding.JSON);
            assertThat(r.get("valueEncoding").asText()).as("value %s", Base64.getEncoder().encodeToString(v)).isEqualTo("base64");
            assertThat(Base64.getDecoder().decode(r.get("value").asText())).isEqualTo(v);
        }
    }

    @Test
    void keysAndHeadersAreStringsWhenValidUtf8ElseBase64AndFlagged() throws Exception {
        byte[] bad = {(byte) 0xFF, 1};
        LogRecord text = new LogRecord(7, 1234, bytes("k\"\u00e9\n"), null,
                List.of(new Header("h", bytes("v\\")), new Header("n", null)));
        JsonNode t = render(text, Encoding.JSON);
        assertThat(t.get("offset").asLong()).isEqualTo(7);
        assertThat(t.get("timestamp").asLong()).isEqualTo(1234);
        assertThat(t.get("key").asText()).isEqualTo("k\"\u00e9\n");
        assertThat(t.get("value").isNull()).isTrue();
        assertThat(t.get("headers").get("h").asText()).isEqualTo("v\\");
        assertThat(t.get("headers").get("n").isNull()).isTrue();
        assertThat(t.has("headersEncoding")).isFalse();
        assertThat(t.has("keyEncoding")).isFalse();

        // One header value that is not UTF-8: every header value of the record is base64, and the record says so.
        LogRecord rec = new LogRecord(8, 1234, bytes("k"), null,
                List.of(new Header("h", bytes("v\\")), new Header("b", bad), new Header("n", null)));
        JsonNode r = render(rec, Encoding.JSON);
        assertThat(r.get("headersEncoding").asText()).isEqualTo("base64");
        assertThat(Base64.getDecoder().decode(r.get("headers").get("h").asText())).isEqualTo(bytes("v\\"));
        assertThat(Base64.getDecoder().decode(r.get("headers").get("b").asText())).isEqualTo(bad);
        assertThat(r.get("headers").get("n").isNull()).isTrue();
        assertThat(r.get("key").asText()).as("the key keeps its own encoding").isEqualTo("k");
        JsonNode badKey = render(new LogRecord(0, 0, bad, bytes("1"), List.of()), Encoding.JSON);
        assertThat(badKey.get("keyEncoding").asText()).isEqualTo("base64");
        assertThat(Base64.getDecoder().decode(badKey.get("key").asText())).isEqualTo(bad);
    }

    @Test
    void base64EncodingRendersEveryByteFieldAsBase64() throws Exception {
        LogRecord rec = new LogRecord(1, 2, bytes("k"), bytes("{\"a\":1}"), List.of(new Header("h", bytes("v"))));
        JsonNode r = render(rec, Encoding.BASE64);
        assertThat(r.get("key").asText()).isEqualTo(Base64.getEncoder().encodeToString(bytes("k")));
        assertThat(r.get("value").asText()).isEqualTo(Base64.getEncoder().encodeToString(bytes("{\"a\":1}")));
        assertThat(r.get("headers").get("h").asText()).isEqualTo(Base64.getEncoder().encodeToString(bytes("v")));
        assertThat(r.has("valueEncoding")).isFalse();
        assertThat(r.has("headersEncoding")).isFalse();
    }

    @Test
    void utf8CheckAgreesWithTheJdkDecoderOnRandomBytes() {
        Random random = new Random(42);
        int valid = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[1 + random.nextInt(6)];
            for (int j = 0; j < b.length; j++) {
                // Bias towards lead and continuation bytes, where the edge cases are.
                b[j] = (byte) (random.nextInt(4) == 0 ? random.nextInt(128) : 0x80 + random.nextInt(128));
            }
            boolean expected = jdkValid(b);
            assertThat(Utf8.isValid(b, 0, b.length)).as("%s", java.util.HexFormat.of().formatHex(b)).isEqualTo(expected);
            valid += expected ? 1 : 0;
        }
        assertThat(valid).as("the sample has valid multi-byte sequences too").isGreaterThan(1000);
    }

    @Test
    void theFastStringCheckNeverAcceptsWhatTheParserRejects() {
        Random random = new Random(7);
        byte[] alphabet = "ab\"\\/unrt0F9 \u0001\t".getBytes(StandardCharsets.ISO_8859_1);
        int accepted = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[2 + random.nextInt(10)];
            b[0] = '"';
            b[b.length - 1] = '"';
            for (int j = 1; j < b.length - 1; j++) {
                b[j] = random.nextInt(50) == 0 ? (byte) 0xC3 : alphabet[random.nextInt(alphabet.length)];
            }
            if (RecordJson.isPlainAsciiJsonString(b, 0, b.length)) {
                accepted++;
                assertThat(RecordJson.isOneJsonValue(b, 0, b.length)).as("%s", new String(b, StandardCharsets.ISO_8859_1))
                        .isTrue();
            }
        }
        assertThat(accepted).as("the sample has plain strings too").isGreaterThan(1000);
        byte[] plain = bytes("\"plain \\\"text\\u00e9\"");
        assertThat(RecordJson.isPlainAsciiJsonString(plain, 0, plain.length)).isTrue();
        byte[] open = bytes("\"x\\\"");
        assertThat(RecordJson.isPlainAsciiJsonString(open, 0, open.length)).as("escaped closing quote").isFalse();
    }

    private static boolean jdkValid(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static String valueText(String stored) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            RecordJson.write(g, null, 0, record(bytes(stored)), Encoding.JSON);
        }
        String json = out.toString(StandardCharsets.UTF_8);
        int start = json.indexOf("\"value\":") + "\"value\":".length();
        int end = json.lastIndexOf(",\"headers\"");
        return json.substring(start, end);
    }

    private static JsonNode render(LogRecord r, Encoding encoding) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            RecordJson.write(g, null, 0, r, encoding);
        }
        return JSON.readTree(out.toByteArray());
    }

    private static LogRecord record(byte[] value) {
        return new LogRecord(0, 0, null, value, List.of());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
