package io.tierlog.http;

import io.tierlog.ingest.Partitioner;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one-pass JSON produce encoder against the old path ({@link ReferenceBatches}): for each body of docs/api.md's
 * forms it makes byte for byte the batches the old path appends (same partitions, same record order, same CRC),
 * and it never takes a body the old path refuses (those go to the old path, which answers them as before).
 */
class ProduceBodyEncoderTest {

    /** Bodies the encoder takes: each must come out identical to the old path's batches. */
    private static final List<String> ENCODED = List.of(
            // the benchmark's shape: explicit partitions, string values, encoding first
            "{\"encoding\":\"json\",\"records\":[{\"partition\":0,\"value\":\"abc\"},{\"partition\":0,\"value\":\"d\"}]}",
            // docs/api.md's example, encoding and producer after the records
            "{\"records\": [{\"key\": \"user-42\", \"value\": {\"any\": \"json\"}, \"headers\": {\"trace\": \"abc\"},\n"
                    + "              \"partition\": 0, \"timestamp\": 1732867200000}],\n \"encoding\": \"json\",\n"
                    + " \"producer\": {\"id\": \"7f1c\", \"epoch\": 0, \"sequence\": 17}}",
            // keyed records over several partitions, values of every JSON kind, whitespace to compact
            "{\"records\": [{\"key\": \"a\", \"value\": 1}, {\"key\": \"b\", \"value\": -0.50e+3},"
                    + " {\"key\": \"c\", \"value\": true}, {\"key\": \"d\", \"value\": [1, 2, {\"x\" : \"y z\"}]},"
                    + " {\"key\": \"e\", \"value\": null}, {\"key\": \"f\", \"value\": \"s\\\"q\\\\ \\u00e9\"  ,"
                    + " \"headers\": null}, {\"key\": \"g\", \"value\": false, \"headers\": {}}]}",
            // keys and header values that need decoding: escapes, non-ASCII, a surrogate pair, a lone surrogate
            "{\"records\": [{\"key\": \"ключ\", \"value\": 1, \"headers\": {\"h\": \"\\ud83d\\ude00\", \"n\": null}},"
                    + " {\"key\": \"\\ud800x\", \"value\": 2}, {\"key\": \"a\\tb\", \"value\": 3,"
                    + " \"headers\": {\"ключ\": \"значение\", \"\": \"\"}}, {\"key\": \"\", \"value\": 4}]}",
            // unkeyed records only, some with timestamps (0 included), fields in any order
            "{\"records\": [{\"value\": {\"i\": 1}}, {\"timestamp\": 0, \"value\": 2},"
                    + " {\"value\": \"x\", \"timestamp\": 1700000000123}]}",
            // unkeyed records whose partition also takes keyed and explicit records: request order in the batch
            "{\"records\": [{\"value\": 1}, {\"key\": \"" + keyFor(ReferenceBatches.UNKEYED_PARTITION)
                    + "\", \"value\": 2}, {\"value\": 3}, {\"partition\": 2, \"value\": 4}, {\"partition\": 1, \"value\": 5}]}",
            // base64 before and after the records (the second is read twice), header values included
            "{\"encoding\": \"base64\", \"records\": [{\"key\": \"AAE=\", \"value\": \"AgME\", \"headers\": {\"h\": \"BQ==\"}},"
                    + " {\"value\": null, \"headers\": {\"n\": null}}]}",
            "{\"records\": [{\"key\": \"AAE=\", \"value\": \"AgME\", \"partition\": 3}, {\"value\": \"\", \"partition\": 3}],"
                    + " \"encoding\": \"BASE64\"}",
            // an idempotent producer over several partitions, and one after unkeyed records
            "{\"producer\": {\"id\": \"p-1\", \"epoch\": 3, \"sequences\": {\"0\": 5, \"1\": 9}},"
                    + " \"records\": [{\"partition\": 1, \"value\": 1}, {\"partition\": 0, \"value\": 2}]}",
            "{\"records\": [{\"value\": 1}, {\"value\": 2}], \"producer\": {\"id\": \"42\", \"epoch\": 0, \"sequence\": 0}}",
            // null partition and timestamp mean absent
            "{\"records\": [{\"value\": 1, \"partition\": null, \"timestamp\": null, \"key\": null}]}");

    /** Bodies the old path refuses: the encoder must decline them all, so that the old path answers. */
    private static final List<String> REFUSED = List.of(
            "{\"records\": [{\"value\": 1}, {\"value\": 2}, {\"value\": 3, \"partition\": \"x\"}]}",
            "{\"records\": [{\"value\": 1}, {\"value\": 2, \"partiton\": 1}]}",
            "{\"records\": [{\"value\": 1}, {\"key\": \"k\"}]}",
            "{\"records\": [{\"value\": 1}, {\"value\": 2, \"partition\": 4}]}",
            "{\"records\": [{\"value\": 1}, {\"value\": \"" + "x".repeat(2000) + "\"}]}",
            "{\"records\": [{\"value\": 1, \"key\": 5}]}",
            "{\"records\": [{\"value\": 1}], \"encoding\": \"hex\"}",
            "{\"records\": [{\"value\": \"not base64!\"}], \"encoding\": \"base64\"}",
            "{\"records\": [{\"partition\": 0, \"value\": 1}, {\"partition\": 1, \"value\": 2}],"
                    + " \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 1}}",
            "{\"records\": []}",
            "{\"records\": [{\"value\": 1}]} trailing",
            "{\"records\": [{\"value\": 1}, {\"value\": 2}",
            "{\"records\": [{\"value\": 1, \"value\": 2}]}",
            "[1, 2]");

    @Test
    void encodesEveryFormExactlyAsTheOldPathDoes() {
        for (String body : ENCODED) {
            assertThat(ReferenceBatches.assertSameAsReference(bytes(body))).as("encoded: %s", body).isTrue();
        }
    }

    @Test
    void declinesEveryBodyTheOldPathRefuses() {
        for (String body : REFUSED) {
            assertThat(ReferenceBatches.reference(bytes(body))).as("the old path refuses %s", body).isEmpty();
            assertThat(ReferenceBatches.onePass(bytes(body))).as("declined: %s", body).isEmpty();
        }
    }

    @Test
    void aLargeRequestGrowsItsBuffersAndStillMatches() {
        StringBuilder body = new StringBuilder("{\"records\": [");
        for (int i = 0; i < 3000; i++) {
            body.append(i == 0 ? "" : ",").append("{\"key\": \"k").append(i).append("\", \"value\": {\"i\": ").append(i)
                    .append(", \"s\": \"").append("v".repeat(i % 700)).append("\"}, \"headers\": {\"n\": \"").append(i)
                    .append("\"}}");
        }
        body.append("]}");
        // twice: the second request reuses the pooled buffers the first one grew
        assertThat(ReferenceBatches.assertSameAsReference(bytes(body.toString()))).isTrue();
        assertThat(ReferenceBatches.assertSameAsReference(bytes(body.toString()))).isTrue();
    }

    private static String keyFor(int partition) {
        for (int i = 0; ; i++) {
            String k = "k" + i;
            if (Partitioner.forKey(bytes(k), ReferenceBatches.TOPIC.partitions()) == partition) {
                return k;
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
