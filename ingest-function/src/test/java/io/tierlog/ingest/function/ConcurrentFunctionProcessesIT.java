package io.tierlog.ingest.function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.Events.Response;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi.Outcome;
import io.tierlog.ingest.function.harness.RicFunctionProcess;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several function instances (separate JVMs under the runtime interface client, each with its own loopback Runtime
 * API, as Lambda gives each environment its own) append to one data directory at once, as Lambda instances share
 * one EFS volume. Idempotent producers spread their requests over the instances and retry some requests on a
 * different instance; a keyed producer without idempotence runs alongside.
 *
 * <p>Then every partition is read back with {@link PartitionReader}: offsets are dense from 0, every acknowledged
 * record is at its acknowledged offset with its own value, and nothing unacknowledged or duplicated is present.
 * Work is bounded: {@value #PRODUCERS} producers x {@value #REQUESTS} requests.
 */
class ConcurrentFunctionProcessesIT {
    static final int INSTANCES = 3;
    static final int PARTITIONS = 3;
    static final int PRODUCERS = 4;
    static final int REQUESTS = 20;
    static final Path WORK = Path.of("target", "it", "concurrent").toAbsolutePath();
    static final String TOPIC = "events";

    static Path data;
    static final List<LoopbackRuntimeApi> apis = new ArrayList<>();
    static final List<RicFunctionProcess> functions = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        ArtifactFreshClassLoaderIT.deleteRecursively(WORK);
        data = Files.createDirectories(WORK.resolve("data"));
        new TopicStore(data, Clock.systemUTC()).create(TOPIC, PARTITIONS, TopicConfig.DEFAULTS);
        Path taskRoot = RicFunctionProcess.unpack(ArtifactFreshClassLoaderIT.JAR.toAbsolutePath(), WORK.resolve("task"));
        for (int i = 0; i < INSTANCES; i++) {
            LoopbackRuntimeApi api = new LoopbackRuntimeApi();
            apis.add(api);
            functions.add(RicFunctionProcess.start(taskRoot, api.address(),
                    Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", "always"),
                    WORK.resolve("function-" + i + ".log")));
        }
    }

    @AfterAll
    static void stop() {
        functions.forEach(RicFunctionProcess::close);
        apis.forEach(LoopbackRuntimeApi::close);
    }

    /** An acknowledged record: where the function said it is, and the value it must hold. */
    record Acked(int partition, long offset, String value) {
    }

    @Test
    void everyAcknowledgedRecordIsStoredOnceAtItsOffsetAndOffsetsAreDense() throws Exception {
        Map<String, Acked> acked = new ConcurrentHashMap<>();
        ExecutorService clients = Executors.newFixedThreadPool(PRODUCERS + 1);
        List<Future<Integer>> results = new ArrayList<>();
        for (int c = 0; c < PRODUCERS; c++) {
            int client = c;
            results.add(clients.submit(() -> idempotentProducer(client, acked)));
        }
        results.add(clients.submit(() -> keyedProducer(acked)));
        int duplicates = 0;
        for (Future<Integer> f : results) {
            duplicates += f.get(3, TimeUnit.MINUTES);
        }
        clients.shutdown();

        assertThat(duplicates).as("retries answered as duplicates").isGreaterThan(0);
        Map<String, Acked> stored = new java.util.HashMap<>();
        long total = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            PartitionReader reader = new HotLog(data).reader(new TopicPartition(TOPIC, p));
            long end = reader.end(null).offset();
            long expected = 0;
            while (expected < end) {
                ReadResult r = reader.read(expected, null, 500, 1 << 20);
                for (LogRecord rec : r.records()) {
                    assertThat(rec.offset()).as("dense offsets in partition %d", p).isEqualTo(expected);
                    String value = new String(rec.value(), StandardCharsets.UTF_8);
                    assertThat(stored.put(value, new Acked(p, rec.offset(), value))).as("stored twice: %s", value).isNull();
                    expected++;
                }
            }
            total += end;
        }
        assertThat(stored).as("every stored record was acknowledged, at the acknowledged place").isEqualTo(acked);
        assertThat(total).isEqualTo(acked.size());
        for (RicFunctionProcess f : functions) {
            assertThat(f.isAlive()).isTrue();
            assertThat(f.logText()).doesNotContain("\"level\":\"ERROR\"");
        }
    }

    /** Requests of 1..3 unkeyed records with producer fields; every 4th is retried on another instance. */
    private int idempotentProducer(int client, Map<String, Acked> acked) throws Exception {
        String producerId = "producer-" + client;
        int duplicates = 0;
        int sequence = 0; // Kafka's numbering: counts the records sent to the producer's one partition
        for (int seq = 0; seq < REQUESTS; seq++) {
            ObjectNode body = Events.JSON.createObjectNode();
            ArrayNode records = body.putArray("records");
            int count = 1 + (seq % 3);
            List<String> values = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String v = "\"" + producerId + "/" + seq + "/" + i + "\"";
                values.add(v);
                records.addObject().set("value", Events.JSON.readTree(v));
            }
            body.putObject("producer").put("id", producerId).put("epoch", 0).put("sequence", sequence);
            sequence += count;
            String event = Events.produce(TOPIC, body.toString(), producerId + "-" + seq);
            int instance = (client + seq) % INSTANCES;
            Response r = send(instance, event);
            assertThat(r.status()).as("%s seq %d: %s", producerId, seq, r.body()).isEqualTo(200);
            assertThat(r.body().get("duplicate").asBoolean()).isFalse();
            record(r.body(), values, acked);
            if (seq % 4 == 3) {
                Response retry = send((instance + 1) % INSTANCES, event);
                assertThat(retry.status()).isEqualTo(200);
                assertThat(retry.body().get("duplicate").asBoolean()).as("retry of %s seq %d", producerId, seq).isTrue();
                assertThat(retry.body().get("offsets")).isEqualTo(r.body().get("offsets"));
                duplicates++;
            }
        }
        return duplicates;
    }

    /** Keyed records without producer fields, spread over partitions by murmur2 and over instances. */
    private int keyedProducer(Map<String, Acked> acked) throws Exception {
        for (int n = 0; n < REQUESTS; n++) {
            ObjectNode body = Events.JSON.createObjectNode();
            ArrayNode records = body.putArray("records");
            List<String> values = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String v = "\"keyed/" + n + "/" + i + "\"";
                values.add(v);
                records.addObject().put("key", "user-" + (n * 3 + i)).set("value", Events.JSON.readTree(v));
            }
            Response r = send(n % INSTANCES, Events.produce(TOPIC, body.toString(), "keyed-" + n));
            assertThat(r.status()).as("keyed %d: %s", n, r.body()).isEqualTo(200);
            record(r.body(), values, acked);
        }
        return 0;
    }

    private static void record(JsonNode body, List<String> values, Map<String, Acked> acked) {
        JsonNode offsets = body.get("offsets");
        assertThat(offsets).hasSize(values.size());
        for (int i = 0; i < values.size(); i++) {
            Acked a = new Acked(offsets.get(i).get("partition").asInt(), offsets.get(i).get("offset").asLong(), values.get(i));
            assertThat(acked.put(a.value(), a)).isNull();
        }
    }

    private static Response send(int instance, String event) throws Exception {
        Outcome o = apis.get(instance).invoke(event).get(60, TimeUnit.SECONDS);
        assertThat(o.error()).as("instance %d reported %s", instance, o.body()).isFalse();
        return Events.response(o.body());
    }
}
