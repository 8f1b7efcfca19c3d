package io.tierlog.ingest.function;

import com.fasterxml.jackson.databind.JsonNode;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.Events.Response;
import io.tierlog.ingest.function.harness.FreshArtifactHandler;
import io.tierlog.ingest.function.harness.RecordBatchBodies;
import io.tierlog.ingest.function.harness.RecordBatchBodies.Producer;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import org.apache.kafka.common.compress.Compression;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The built artifact, target/tierlog-ingest-function.jar, loaded by its handler string in a class loader that
 * sees only the JDK and the jar, answering real API Gateway v2 events. Failsafe gives this JVM the function's
 * environment (TIERLOG_DATA_DIR, TIERLOG_MAX_REQUEST_BYTES=4096), which the handler's no-arg constructor reads as
 * it does in Lambda; the test prepares and inspects that data directory with the storage library directly.
 */
class ArtifactFreshClassLoaderIT {
    static final Path JAR = Path.of("target", "tierlog-ingest-function.jar");
    static final String HANDLER = "io.tierlog.ingest.function.ApiGatewayIngestHandler::handleRequest";
    static Path dataDir;
    static FreshArtifactHandler function;

    @BeforeAll
    static void loadArtifact() throws Exception {
        dataDir = Path.of(System.getenv("TIERLOG_DATA_DIR"));
        deleteRecursively(dataDir);
        TopicStore topics = new TopicStore(dataDir, Clock.systemUTC());
        topics.create("orders", 2, TopicConfig.DEFAULTS);
        topics.create("tiny", 1, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, 64)));
        topics.create("broken", 1, TopicConfig.DEFAULTS);
        // A file where the partition directory belongs: the append fails with an I/O error the contract has no
        // name for, which must become a 500 internal-error that leaks nothing.
        Files.writeString(dataDir.resolve("broken-0"), "not a directory");
        function = new FreshArtifactHandler(JAR, HANDLER);
    }

    @AfterAll
    static void close() throws Exception {
        if (function != null) {
            function.close();
        }
    }

    @Test
    void artifactIsSelfContainedAndCarriesNoHeavyDependency() throws Exception {
        ClassLoader loader = function.loader();
        assertThat(function.handler().getClass().getClassLoader()).isSameAs(loader);
        assertThat(loader.loadClass("org.apache.kafka.common.record.internal.MemoryRecordsBuilder").getClassLoader())
                .isSameAs(loader);
        assertThat(loader.loadClass("org.apache.kafka.common.utils.Utils").getClassLoader())
                .isSameAs(loader);
        for (String absent : new String[]{"org.rocksdb.RocksDB", "io.quarkus.runtime.Quarkus",
                "software.amazon.awssdk.services.s3.S3Client"}) {
            assertThatThrownBy(() -> loader.loadClass(absent)).as(absent).isInstanceOf(ClassNotFoundException.class);
        }
        // The codecs of compressed batches, with the natives of Lambda's two architectures and no other.
        for (String codec : new String[]{"com.github.luben.zstd.Zstd", "org.xerial.snappy.Snappy",
                "net.jpountz.lz4.LZ4Factory"}) {
            assertThat(loader.loadClass(codec).getClassLoader()).as(codec).isSameAs(loader);
        }
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(JAR.toFile())) {
            List<String> natives = jar.stream().map(java.util.jar.JarEntry::getName)
                    .filter(n -> n.endsWith(".so") || n.endsWith(".dll") || n.endsWith(".dylib") || n.endsWith(".a"))
                    .toList();
            assertThat(natives).hasSize(6).allMatch(n -> n.matches(".*(amd64|x86_64|aarch64)/[^/]+\\.so"));
        }
        assertThat(Files.size(JAR)).isLessThan(10L * 1024 * 1024);
    }

    @Test
    void producesJsonEncodedRecords() throws Throwable {
        Response r = invoke("produce-json.json", "req-json");

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        JsonNode offsets = r.body().get("offsets");
        assertThat(offsets).hasSize(3);
        int p0 = Partitioner.forKey("user-42".getBytes(StandardCharsets.UTF_8), 2);
        assertThat(offsets.get(0).get("partition").asInt()).isEqualTo(p0);
        assertThat(offsets.get(1).get("partition").asInt())
                .isEqualTo(Partitioner.forKey("user-7".getBytes(StandardCharsets.UTF_8), 2));
        assertThat(offsets.get(2).get("partition").asInt()).isEqualTo(1);
        assertThat(r.body().get("duplicate").asBoolean()).isFalse();

        LogRecord first = read("orders", p0, offsets.get(0).get("offset").asLong());
        assertThat(new String(first.key(), StandardCharsets.UTF_8)).isEqualTo("user-42");
        assertThat(new String(first.value(), StandardCharsets.UTF_8)).isEqualTo("{\"action\":\"login\",\"ok\":true}");
        assertThat(first.timestamp()).isEqualTo(1732867200000L);
        assertThat(first.headers()).hasSize(1);
        assertThat(first.headers().get(0).name()).isEqualTo("trace");
        assertThat(read("orders", 1, offsets.get(2).get("offset").asLong()).value()).isNull();
    }

    @Test
    void producesBase64EncodedBodyOfBase64Records() throws Throwable {
        Response r = invoke("produce-base64-body.json", "req-b64");

        assertThat(r.status()).isEqualTo(200);
        JsonNode o = r.body().get("offsets").get(0);
        assertThat(o.get("partition").asInt()).isEqualTo(0);
        LogRecord stored = read("orders", 0, o.get("offset").asLong());
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        assertThat(stored.key()).isEqualTo(new byte[]{0, 1, 'k', 'e', 'y'});
        assertThat(stored.value()).isEqualTo(all);
        assertThat(stored.headers().get(0).value()).isEqualTo(new byte[]{(byte) 0xff, (byte) 0xfe});
    }

    @Test
    void producesKafkaRecordBatchesSentAsABase64Body() throws Throwable {
        byte[] batch = RecordBatchBodies.batch(Producer.NONE, 1732867200000L, "sensor-9", "{\"temp\":21.5}",
                "{\"temp\":21.7}", "{\"temp\":21.9}");
        long[] before = ends("orders", 2);

        Response r = Events.response(function.invoke(Events.recordBatches("orders", 1, batch, "api-batches"), "req-batches"));

        assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        assertThat(r.body().get("duplicate").asBoolean()).isFalse();
        JsonNode offsets = r.body().get("offsets");
        assertThat(offsets).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(offsets.get(i).get("partition").asInt()).isEqualTo(1);
            assertThat(offsets.get(i).get("offset").asLong()).isEqualTo(before[1] + i);
        }
        assertThat(ends("orders", 2)).containsExactly(before[0], before[1] + 3);
        for (int i = 0; i < 3; i++) {
            LogRecord stored = read("orders", 1, before[1] + i);
            assertThat(new String(stored.key(), StandardCharsets.UTF_8)).isEqualTo("sensor-9");
            assertThat(new String(stored.value(), StandardCharsets.UTF_8)).isEqualTo("{\"temp\":21." + (5 + 2 * i) + "}");
            assertThat(stored.timestamp()).isEqualTo(1732867200000L + i);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "snappy", "lz4", "zstd"})
    void producesCompressedKafkaRecordBatches(String codec) throws Throwable {
        byte[] batch = RecordBatchBodies.batch(Compression.of(codec).build(), Producer.NONE, 1732867200000L, "sensor-9",
                "{\"temp\":21.5}", "{\"temp\":21.7}");
        long[] before = ends("orders", 2);

        Response r = Events.response(function.invoke(Events.recordBatches("orders", 0, batch, "api-" + codec),
                "req-" + codec));

        assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
        assertThat(r.body().get("offsets")).hasSize(2);
        assertThat(ends("orders", 2)).containsExactly(before[0] + 2, before[1]);
        for (int i = 0; i < 2; i++) {
            LogRecord stored = read("orders", 0, before[0] + i);
            assertThat(new String(stored.value(), StandardCharsets.UTF_8)).isEqualTo("{\"temp\":21." + (5 + 2 * i) + "}");
        }
    }

    @Test
    void aProducerRetryIsAnsweredWithTheOriginalOffsetsAndAppendsNothing() throws Throwable {
        Response first = invoke("produce-producer-seq0.json", "req-p1");
        long[] endBefore = ends("orders", 2);
        Response retry = invoke("produce-producer-seq0.json", "req-p2");

        assertThat(first.status()).isEqualTo(200);
        assertThat(first.body().get("duplicate").asBoolean()).isFalse();
        assertThat(retry.status()).isEqualTo(200);
        assertThat(retry.body().get("duplicate").asBoolean()).isTrue();
        assertThat(retry.body().get("offsets")).isEqualTo(first.body().get("offsets"));
        assertThat(ends("orders", 2)).isEqualTo(endBefore);

        Response gap = invoke("produce-producer-gap.json", "req-p3");
        assertThat(gap.status()).isEqualTo(409);
        assertThat(gap.body().get("type").asText()).isEqualTo("out-of-order-sequence");
        assertThat(gap.body().get("expectedSequence").asInt()).as("two records took 0 and 1").isEqualTo(2);
        Response fenced = invoke("produce-producer-fenced.json", "req-p4");
        assertThat(fenced.status()).isEqualTo(409);
        assertThat(fenced.body().get("type").asText()).isEqualTo("fenced-producer");
        assertThat(ends("orders", 2)).isEqualTo(endBefore);
    }

    @ParameterizedTest(name = "{0} -> {1} {2}")
    @CsvSource({
            "bad-json.json,                 400, bad-request,            body",
            "bad-field-type.json,           400, bad-request,            records[0].partition",
            "bad-base64-body.json,          400, bad-request,            body",
            "invalid-topic.json,            400, invalid-topic,          ",
            "unknown-topic.json,            404, unknown-topic,          ",
            "unknown-partition.json,        404, unknown-partition,      ",
            "not-found-path.json,           404, not-found,              ",
            "method-not-allowed.json,       405, method-not-allowed,     ",
            "record-too-large.json,         413, record-too-large,       records[0]",
            "request-too-large.json,        413, request-too-large,      ",
            "request-too-large-base64.json, 413, request-too-large,      ",
            "unsupported-media-type.json,   415, unsupported-media-type, Content-Type",
            "bad-record-batches-body.json,     400, bad-request,         body",
            "record-batches-no-partition.json, 400, bad-request,         partition",
            "record-batches-not-base64.json,   400, bad-request,         body",
    })
    void everyClientErrorIsProblemJsonAndChangesNothing(String event, int status, String type, String field)
            throws Throwable {
        long[] orders = ends("orders", 2);
        long[] tiny = ends("tiny", 1);

        Response r = invoke(event, "req-" + event);

        assertThat(r.status()).isEqualTo(status);
        assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(r.body().get("type").asText()).isEqualTo(type);
        assertThat(r.body().get("status").asInt()).isEqualTo(status);
        assertThat(r.body().get("title").asText()).isNotBlank();
        assertThat(r.body().get("detail").asText()).isNotBlank();
        if (field != null) {
            assertThat(r.body().get("field").asText()).isEqualTo(field);
        }
        if (status == 405) {
            assertThat(r.header("Allow")).isEqualTo("POST");
        }
        assertThat(ends("orders", 2)).isEqualTo(orders);
        assertThat(ends("tiny", 1)).isEqualTo(tiny);
    }

    @Test
    void anUnexpectedFailureIs500WithTheRequestIdAndNoInternals() throws Throwable {
        String event = Events.produce("broken", "{\"records\":[{\"value\":1}]}", "api-broken");

        Response r = Events.response(function.invoke(event, "req-broken-1"));

        assertThat(r.status()).isEqualTo(500);
        assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(r.body().get("type").asText()).isEqualTo("internal-error");
        assertThat(r.body().get("requestId").asText()).isEqualTo("req-broken-1");
        assertThat(r.body().toString()).doesNotContain("Exception").doesNotContain("broken-0").doesNotContain("\tat ");
    }

    private static Response invoke(String eventFile, String requestId) throws Throwable {
        return Events.response(function.invoke(Events.load(eventFile), requestId));
    }

    private static LogRecord read(String topic, int partition, long offset) {
        var result = new HotLog(dataDir).reader(new TopicPartition(topic, partition)).read(offset, null, 1, 1 << 20);
        assertThat(result.records()).isNotEmpty();
        assertThat(result.records().get(0).offset()).isEqualTo(offset);
        return result.records().get(0);
    }

    private static long[] ends(String topic, int partitions) {
        long[] ends = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            ends[p] = new HotLog(dataDir).reader(new TopicPartition(topic, p)).end(null).offset();
        }
        return ends;
    }

    static void deleteRecursively(Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
