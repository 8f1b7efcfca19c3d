package io.tierlog.ingest;

import io.tierlog.http.JsonProduce;
import io.tierlog.http.ProduceRequestParser;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.TierlogException;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * JSON produce through {@link JsonProduce} (the one-pass encoder, docs/adr/0027-one-pass-json-produce.md) against
 * the old path ({@link ProduceRequestParser}, then {@link IngestService#produce(String, ProduceRequest)}) on real
 * logs: the same requests leave byte-identical segment files and the same answers, and a body with a bad record
 * anywhere, the last one included, appends nothing and names the field.
 */
class OnePassJsonProduceTest {
    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path oldDir;
    @TempDir
    Path newDir;

    @Test
    void storesByteIdenticalBatchesAndAnswersAsTheOldPath() {
        List<String> bodies = List.of(
                "{\"encoding\":\"json\",\"records\":[{\"partition\":0,\"value\":\"abc\"},{\"partition\":5,\"value\":\"d\"}]}",
                "{\"records\": [{\"key\": \"user-42\", \"value\": {\"item\": \"book\", \"qty\": 1}},"
                        + " {\"key\": \"user-42\", \"value\": {\"item\": \"pen\", \"qty\": 2}, \"headers\": {\"trace\": \"abc\"}}]}",
                // unkeyed: the rotation of the two services runs alike (same seed)
                "{\"records\": [{\"value\": 1}, {\"value\": [1, 2]}]}",
                "{\"records\": [{\"value\": 3}, {\"key\": \"k\", \"value\": null}, {\"value\": \"x\", \"timestamp\": 5}]}",
                "{\"records\": [{\"value\": \"AQI=\"}], \"encoding\": \"base64\"}",
                "{\"records\": [{\"value\": 1, \"partition\": 3}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0}}",
                "{\"records\": [{\"value\": 2, \"partition\": 3}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 1}}",
                // a retry: a duplicate, answered with the original offsets
                "{\"records\": [{\"value\": 2, \"partition\": 3}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 1}}");
        ProduceRequestParser parser = new ProduceRequestParser();
        try (IngestService old = service(oldDir); IngestService onePass = service(newDir)) {
            for (String body : bodies) {
                ProduceResult expected = old.produce("t", parser.parse(bytes(body)));
                ProduceResult actual = JsonProduce.produce(onePass, "t", bytes(body));
                assertThat(actual).as(body).isEqualTo(expected);
            }
        }
        Map<String, byte[]> expected = segments(oldDir);
        Map<String, byte[]> actual = segments(newDir);
        assertThat(expected).isNotEmpty();
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
        expected.forEach((file, content) -> assertThat(actual.get(file)).as(file).isEqualTo(content));
    }

    /**
     * The route gives a pooled body back as soon as it is encoded, before the append, and the next request may then
     * overwrite it: the callback runs for every body the encoder takes, and nothing after it reads the body (here it
     * scribbles over the whole array, and the segments must still match the old path's).
     */
    @Test
    void theBodyIsNoLongerReadOnceGivenBack() {
        List<String> bodies = List.of(
                "{\"encoding\":\"json\",\"records\":[{\"partition\":0,\"value\":\"abc\"},{\"partition\":5,\"value\":\"d\"}]}",
                "{\"records\": [{\"key\": \"user-42\", \"value\": {\"item\": \"book\"}, \"headers\": {\"trace\": \"abc\"}},"
                        + " {\"key\": \"k2\", \"value\": {\"qty\":2}}, {\"value\": [1, 2]}]}",
                "{\"records\": [{\"value\": \"AQI=\", \"key\": \"AQ==\"}], \"encoding\": \"base64\"}",
                "{\"records\": [{\"value\": 1, \"partition\": 3}], \"producer\": {\"id\": \"p\", \"epoch\": 0, \"sequence\": 0}}");
        ProduceRequestParser parser = new ProduceRequestParser();
        try (IngestService old = service(oldDir); IngestService onePass = service(newDir)) {
            for (String body : bodies) {
                ProduceResult expected = old.produce("t", parser.parse(bytes(body)));
                byte[] pooled = Arrays.copyOf(bytes(body), bytes(body).length + 64);
                boolean[] givenBack = {false};
                ProduceResult actual = JsonProduce.produce(onePass, "t", pooled, bytes(body).length, () -> {
                    givenBack[0] = true;
                    Arrays.fill(pooled, (byte) '}');   // the next request's bytes
                });
                assertThat(givenBack[0]).as("given back before the append: %s", body).isTrue();
                assertThat(actual).as(body).isEqualTo(expected);
            }
        }
        assertThat(segments(newDir)).isNotEmpty();
        Map<String, byte[]> expected = segments(oldDir);
        segments(newDir).forEach((file, content) -> assertThat(content).as(file).isEqualTo(expected.get(file)));
    }

    @Test
    void aBodyWhoseLastRecordIsBadAppendsNothing() {
        String good = "{\"value\": {\"i\": 1}, \"partition\": 0}, {\"key\": \"k\", \"value\": \"v\"}, {\"value\": 3}, ";
        Map<String, String> badLast = new TreeMap<>(Map.of(
                "records[3].partition", "{\"value\": 4, \"partition\": \"x\"}",
                "records[3].value", "{\"key\": \"k\"}",
                "records[3].partiton", "{\"value\": 4, \"partiton\": 1}",
                "records[3].key", "{\"value\": 4, \"key\": 7}"));
        try (IngestService service = service(newDir)) {
            for (Map.Entry<String, String> e : badLast.entrySet()) {
                TierlogException refused = catchThrowableOfType(() -> JsonProduce.produce(service, "t",
                        bytes("{\"records\": [" + good + e.getValue() + "]}")), TierlogException.class);
                assertThat(refused.type()).isEqualTo(ErrorType.BAD_REQUEST);
                assertThat(refused.extra()).containsEntry("field", e.getKey());
            }
            TierlogException unknown = catchThrowableOfType(() -> JsonProduce.produce(service, "t",
                    bytes("{\"records\": [" + good + "{\"value\": 4, \"partition\": 8}]}")), TierlogException.class);
            assertThat(unknown.type()).isEqualTo(ErrorType.UNKNOWN_PARTITION);
            TierlogException tooLarge = catchThrowableOfType(() -> JsonProduce.produce(service, "t",
                    bytes("{\"records\": [" + good + "{\"value\": \"" + "x".repeat(1000) + "\"}]}")), TierlogException.class);
            assertThat(tooLarge.type()).isEqualTo(ErrorType.RECORD_TOO_LARGE);
            assertThat(tooLarge.extra()).containsEntry("field", "records[3]");
            TierlogException notJson = catchThrowableOfType(() -> JsonProduce.produce(service, "t",
                    bytes("{\"records\": [" + good + "{\"value\": 4}")), TierlogException.class);
            assertThat(notJson.extra()).containsEntry("field", "body");
            // Nothing of any of them was appended: the next record is each partition's first.
            assertThat(segments(newDir).values()).allSatisfy(content -> assertThat(content).isEmpty());
            ProduceResult next = JsonProduce.produce(service, "t", bytes("{\"records\": [{\"value\": 1, \"partition\": 0}]}"));
            assertThat(next.offsets()).containsExactly(new PartitionOffset(0, 0));
        }
    }

    private static IngestService service(Path dir) {
        IngestService s = new IngestService(new IngestConfig(dir, FsyncPolicy.NEVER, Duration.ofSeconds(1), 1 << 20),
                new ManualClock(NOW), 11);
        s.topics().create("t", 8, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, 512)));
        return s;
    }

    /** Every segment file under {@code dir}, by its path relative to it. */
    private static Map<String, byte[]> segments(Path dir) {
        Map<String, byte[]> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".log"))::iterator) {
                out.put(dir.relativize(f).toString(), Files.readAllBytes(f));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
