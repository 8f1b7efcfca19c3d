package io.tierlog.http;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.ingest.ProducerRef;

class ProduceRequestParserTest {
    private final ProduceRequestParser parser = new ProduceRequestParser();

    @Test
    void parsesTheApiExample() {
        ProduceRequest r = parse("{\"records\": [{\"key\": \"user-42\", \"value\": {\"any\": \"json\"}, "
                + "\"headers\": {\"trace\": \"abc\"}, \"partition\": 0, \"timestamp\": 1732867200000}], "
                + "\"encoding\": \"json\", \"producer\": {\"id\": \"7f1c\", \"epoch\": 0, \"sequence\": 17}}");
        assertThat(r.records()).hasSize(1);
        ProduceRecord rec = r.records().get(0);
        assertThat(text(rec.key())).isEqualTo("user-42");
        assertThat(text(rec.value())).as("compact JSON text").isEqualTo("{\"any\":\"json\"}");
        assertThat(rec.headers()).singleElement().satisfies(h -> {
            assertThat(h.name()).isEqualTo("trace");
            assertThat(text(h.value())).isEqualTo("abc");
        });
        assertThat(rec.partition()).isZero();
        assertThat(rec.timestamp()).isEqualTo(1732867200000L);
        assertThat(r.producer()).contains(new ProducerRef("7f1c", 0, 17));
    }

    @Test
    void jsonValuesAreStoredAsTheirJsonTextWithoutLosingPrecision() {
        ProduceRequest r = parse("{\"records\": [{\"value\": \"abc\"}, {\"value\": 42}, {\"value\": [1, {\"b\": true}]},"
                + " {\"value\": 3.14159265358979323846264338327950288}, {\"value\": 123456789012345678901234567890}]}");
        assertThat(r.records()).extracting(x -> text(x.value()))
                .containsExactly("\"abc\"", "42", "[1,{\"b\":true}]", "3.14159265358979323846264338327950288",
                        "123456789012345678901234567890");
        assertThat(r.records()).allSatisfy(x -> {
            assertThat(x.key()).isNull();
            assertThat(x.partition()).isNull();
            assertThat(x.timestamp()).isNull();
            assertThat(x.headers()).isEmpty();
        });
        assertThat(r.producer()).isEmpty();
    }

    @Test
    void objectAndArrayValuesAreCompactedWithoutTouchingTheirStrings() {
        ProduceRequest r = parse("{\"records\": [{\"value\": { \"a b\" : [ 1 ,\t2 ],\n \"s\": \"x \\\" y\" } },"
                + " {\"value\": \"tab\\tquote\\\"\"}, {\"value\": [ ]}, {\"value\": 1e2}, {\"value\": true}]}");
        assertThat(r.records()).extracting(x -> text(x.value())).containsExactly(
                "{\"a b\":[1,2],\"s\":\"x \\\" y\"}", "\"tab\\tquote\\\"\"", "[]", "1e2", "true");
    }

    @Test
    void encodingMayFollowTheRecords() {
        byte[] raw = {1, 2, (byte) 0xFE};
        String b64 = Base64.getEncoder().encodeToString(raw);
        ProduceRequest r = parse("{\"records\": [{\"key\": \"" + b64 + "\", \"value\": \"" + b64 + "\"}], \"encoding\": \"base64\"}");
        assertThat(r.records().get(0).key()).containsExactly(raw);
        assertThat(r.records().get(0).value()).containsExactly(raw);
    }

    @Test
    void escapedStringsAreDecodedForKeysHeadersAndBase64() {
        ProduceRequest r = parse("{\"records\": [{\"key\": \"a\\u00e9\\n\", \"value\": \"\\u00e9\","
                + " \"headers\": {\"h\": \"\\\"q\\\"\"}}]}");
        assertThat(text(r.records().get(0).key())).isEqualTo("a\u00e9\n");
        assertThat(text(r.records().get(0).value())).as("stored as written").isEqualTo("\"\\u00e9\"");
        assertThat(text(r.records().get(0).headers().get(0).value())).isEqualTo("\"q\"");
        ProduceRequest b = parse("{\"encoding\": \"base64\", \"records\": [{\"value\": \"AQ\\/=\"}]}");
        assertThat(b.records().get(0).value()).containsExactly(Base64.getDecoder().decode("AQ/="));
    }

    @Test
    void duplicateFieldsAreRejected() {
        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> parse("{\"records\": [{\"value\": 1, \"value\": 2}]}"));
        assertThat(e.extra()).containsEntry("field", "body");
        assertThat(e.getMessage()).contains("value");
    }

    @Test
    void anExplicitNullValueIsATombstone() {
        ProduceRequest r = parse("{\"records\": [{\"key\": \"k\", \"value\": null}]}");
        assertThat(r.records()).allSatisfy(x -> assertThat(x.value()).isNull());
    }

    @Test
    void aRecordWithoutValueIsRejectedNotStoredAsATombstone() {
        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> parse("{\"records\": [{\"value\": 1}, {\"key\": \"k\"}]}"));
        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(e.extra()).containsEntry("field", "records[1].value");
        assertThat(e.getMessage()).contains("records[1].value").contains("\"value\": null");
    }

    @Test
    void producerSequencesPerPartition() {
        ProduceRequest r = parse("{\"records\": [{\"value\": 1, \"partition\": 0}, {\"value\": 2, \"partition\": 2}],"
                + " \"producer\": {\"id\": \"p\", \"epoch\": 1, \"sequences\": {\"0\": 5, \"2\": 0}}}");
        assertThat(r.producer()).contains(new ProducerRef("p", 1, java.util.Map.of(0, 5, 2, 0)));
    }

    @Test
    void jsonNestedDeeperThanTheLimitIsABadRequestNamingTheBody() {
        int depth = 1_000;
        String body = "{\"records\": [{\"value\": " + "[".repeat(depth) + "]".repeat(depth) + "}]}";
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> parse(body));
        assertThat(e).isNotNull();
        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(e.extra()).containsEntry("field", "body");
        assertThat(e.getMessage()).contains("nests deeper than the limit of 500");
        // At the limit itself it parses (the record array and object are two of the levels).
        int fits = JsonLimits.MAX_NESTING_DEPTH - 3;
        assertThat(parse("{\"records\": [{\"value\": " + "[".repeat(fits) + "]".repeat(fits) + "}]}").records())
                .hasSize(1);
    }

    @Test
    void base64DecodesKeysValuesAndHeaderValuesToRawBytes() {
        byte[] raw = {0, (byte) 0xFF, 10, 13, (byte) 0x80};
        String b64 = Base64.getEncoder().encodeToString(raw);
        ProduceRequest r = parse("{\"encoding\": \"base64\", \"records\": [{\"key\": \"" + b64 + "\", \"value\": \"" + b64
                + "\", \"headers\": {\"h\": \"" + b64 + "\"}}, {\"value\": null}]}");
        assertThat(r.records().get(0).key()).containsExactly(raw);
        assertThat(r.records().get(0).value()).containsExactly(raw);
        assertThat(r.records().get(0).headers().get(0).value()).containsExactly(raw);
        assertThat(r.records().get(1).value()).isNull();
        assertThat(parse("{\"encoding\": \"BASE64\", \"records\": [{\"value\": \"\"}]}").records().get(0).value()).isEmpty();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"records\": [ |body",
            "{\"records\": [{\"value\": \"abc|body",
            "{\"records\": [{\"value\": \"ab\\|body",
            "{\"records\": [{\"key\": \"ab\\\"|body",
            "not json|body",
            "{\"records\": []} trailing|body",
            "[]|body",
            "\"records\"|body",
            "null|body",
            "|body",
            "{}|records",
            "{\"records\": {}}|records",
            "{\"records\": \"x\"}|records",
            "{\"records\": []}|records",
            "{\"recordz\": [{}]}|recordz",
            "{\"records\": [{}, 5]}|records[1]",
            "{\"records\": [{\"partiton\": 1}]}|records[0].partiton",
            "{\"records\": [{\"key\": 5}]}|records[0].key",
            "{\"records\": [{\"key\": {\"a\": 1}}]}|records[0].key",
            "{\"records\": [{\"headers\": [\"a\"]}]}|records[0].headers",
            "{\"records\": [{\"headers\": {\"trace\": 1}}]}|records[0].headers.trace",
            "{\"records\": [{\"partition\": \"1\"}]}|records[0].partition",
            "{\"records\": [{\"partition\": 1.5}]}|records[0].partition",
            "{\"records\": [{\"partition\": -1}]}|records[0].partition",
            "{\"records\": [{\"partition\": 2147483648}]}|records[0].partition",
            "{\"records\": [{\"timestamp\": \"now\"}]}|records[0].timestamp",
            "{\"records\": [{\"timestamp\": -5}]}|records[0].timestamp",
            "{\"records\": [{\"timestamp\": 1e3}]}|records[0].timestamp",
            "{\"records\": [{}], \"encoding\": \"xml\"}|encoding",
            "{\"records\": [{}], \"encoding\": 1}|encoding",
            "{\"records\": [{\"value\": 5}], \"encoding\": \"base64\"}|records[0].value",
            "{\"records\": [{\"value\": \"not base64!\"}], \"encoding\": \"base64\"}|records[0].value",
            "{\"records\": [{\"key\": \"%%%\"}], \"encoding\": \"base64\"}|records[0].key",
            "{\"records\": [{\"headers\": {\"h\": \"*\"}}], \"encoding\": \"base64\"}|records[0].headers.h",
            "{\"records\": [{}], \"producer\": 5}|producer",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0, \"x\": 1}}|producer.x",
            "{\"records\": [{}], \"producer\": {\"epoch\": 0, \"sequence\": 0}}|producer.id",
            "{\"records\": [{}], \"producer\": {\"id\": \"\", \"epoch\": 0, \"sequence\": 0}}|producer.id",
            "{\"records\": [{}], \"producer\": {\"id\": 7, \"epoch\": 0, \"sequence\": 0}}|producer.id",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"sequence\": 0}}|producer.epoch",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": -1, \"sequence\": 0}}|producer.epoch",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 32768, \"sequence\": 0}}|producer.epoch",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": \"0\", \"sequence\": 0}}|producer.epoch",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0}}|producer.sequence",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": -1}}|producer.sequence",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0.5}}|producer.sequence",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": 1}}|producer.sequences",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": {}}}|producer.sequences",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": {\"x\": 1}}}|producer.sequences.x",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": {\"01\": 1}}}|producer.sequences.01",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": {\"0\": -1}}}|producer.sequences.0",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequences\": {\"0\": null}}}|producer.sequences.0",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0, \"sequences\": {\"0\": 0}}}|producer.sequences",
            "{\"records\": [{\"key\": \"k\"}]}|records[0].value",
            // an empty member name is shown as "" (found by ProduceRequestParserJazzerTest: the field was blank)
            "{\"\": [{\"key\": \"k\"}]}|\"\"",
            "{\"records\": [{\"value\": 1, \"\": 2}]}|records[0].\"\"",
            "{\"records\": [{}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0, \"\": 1}}|producer.\"\"",
            "{\"records\": [{\"value\": 1, \"headers\": {\"\": 5}}]}|records[0].headers.\"\"",
    })
    void everyBadRequestNamesItsField(String body, String field) {
        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> parser.parse(body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8)));
        assertThat(e).as("parse of %s", body).isNotNull();
        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(ProblemType.of(e.type()).status()).isEqualTo(400);
        assertThat(e.extra()).containsEntry("field", field);
        assertThat(e.getMessage()).contains(field);
    }

    /** Seen while writing ProduceRequestParserJazzerTest: a UTF-16 body was an ArrayIndexOutOfBoundsException (a 500). */
    @ParameterizedTest
    @CsvSource({"UTF-16LE", "UTF-16BE", "UTF-16", "UTF-32LE", "UTF-32BE"})
    void aBodyInAnotherUnicodeEncodingThanUtf8IsABadRequestNamingTheBody(String charset) {
        byte[] body = "{\"records\": [{\"value\": {\"a\": 1}, \"key\": \"k\"}]}".getBytes(java.nio.charset.Charset.forName(charset));
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> parser.parse(body));
        assertThat(e).as(charset).isNotNull();
        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(e.extra()).containsEntry("field", "body");
        assertThat(e.getMessage()).contains("UTF-8");
        // A UTF-8 byte order mark is still UTF-8: Jackson skips it.
        byte[] bom = "\uFEFF{\"records\": [{\"value\": {\"a\": 1}}]}".getBytes(StandardCharsets.UTF_8);
        assertThat(text(parser.parse(bom).records().get(0).value())).isEqualTo("{\"a\":1}");
    }

    @Test
    void producerIdLongerThan256CharactersIsRejected() {
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> parse(
                "{\"records\": [{}], \"producer\": {\"id\": \"" + "p".repeat(257) + "\", \"epoch\": 0, \"sequence\": 0}}"));
        assertThat(e.extra()).containsEntry("field", "producer.id");
        assertThat(parse("{\"records\": [{\"value\": 1}], \"producer\": {\"id\": \"" + "p".repeat(256)
                + "\", \"epoch\": 32767, \"sequence\": 2147483647}}").producer()).isPresent();
    }

    @Test
    void stringValuesKeepTheirExactSpanWhereverTheyStandInTheRecord() {
        // A string value's end is taken from where the parser's next token starts: whitespace, commas, escaped
        // quotes and backslashes before it, a value last in its record or followed by other fields.
        ProduceRequest r = parse("{\"records\": [{\"value\" : \"x\\\"y\\\\\" ,\n \"key\":\"k\"},"
                + " {\"key\": \"k\", \"value\":\"\\\\\"\t},{\"value\":\"\"},"
                + " {\"value\": \"caf\u00e9 \\u00e9\", \"headers\": {\"h\": \"v\"}, \"partition\": 1}]}");
        assertThat(r.records()).extracting(x -> text(x.value()))
                .containsExactly("\"x\\\"y\\\\\"", "\"\\\\\"", "\"\"", "\"caf\u00e9 \\u00e9\"");
        assertThat(text(r.records().get(0).key())).isEqualTo("k");
        assertThat(r.records().get(3).partition()).isEqualTo(1);
        // base64 values may escape their slashes (JSON allows "\/"); they decode as the unescaped text.
        ProduceRequest b = parse("{\"encoding\": \"base64\", \"records\": [{\"value\": \"YS\\/j\"}, {\"value\": \"YWJj\"}]}");
        assertThat(b.records().get(0).value()).isEqualTo(Base64.getDecoder().decode("YS/j"));
        assertThat(text(b.records().get(1).value())).isEqualTo("abc");
        ProduceRequest after = parse("{\"records\": [{\"value\": \"YS\\/j\"}], \"encoding\": \"base64\"}");
        assertThat(after.records().get(0).value()).as("encoding after the records").isEqualTo(Base64.getDecoder().decode("YS/j"));
    }

    @Test
    void anUnterminatedOrBrokenStringValueIsABadRequestOfTheBody() {
        for (String body : new String[]{"{\"records\": [{\"value\": \"abc", "{\"records\": [{\"value\": \"a\u0001b\"}]}",
                "{\"records\": [{\"value\": \"abc\" \"key\": \"k\"}]}"}) {
            TierlogException e = catchThrowableOfType(TierlogException.class, () -> parse(body));
            assertThat(e).as(body).isNotNull();
            assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
            assertThat(e.extra()).containsEntry("field", "body");
            assertThat(e.getMessage()).startsWith("body is not valid JSON");
        }
    }

    private ProduceRequest parse(String body) {
        return parser.parse(body.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
