package io.tierlog.service.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.Events.Response;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi.Outcome;
import io.tierlog.ingest.function.harness.RicFunctionProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue #5's deployment shape on one machine: several ingest function instances and the index-service share one
 * data directory, as Lambda instances and the Fargate task share one EFS volume.
 *
 * <ul>
 *   <li>The index-service is the packaged application ({@code target/quarkus-app/quarkus-run.jar}) in its own JVM,
 *       on a free port of 127.0.0.1, with {@code tierlog.fsync=never} (it appends nothing here; the topic metadata
 *       it writes on create is renamed into place either way).</li>
 *   <li>{@value #INSTANCES} function instances are the shaded deployable ({@code tierlog-ingest-function.jar},
 *       unpacked as a task root) under the real runtime interface client, each against its own loopback Runtime
 *       API, with {@code TIERLOG_DATA_DIR} = the service's data directory and {@code TIERLOG_FSYNC=always}, as
 *       deployed.</li>
 *   <li>The topic is created over the service's HTTP API (small segments, so the functions roll segments while the
 *       service reads them); the functions see it on the shared volume.</li>
 *   <li>Producers send API Gateway v2 events through the instances: {@value #IDEMPOTENT_PRODUCERS} idempotent
 *       producers with keys (each producer's keys hash to one partition, so that each request carries one
 *       {@code producer.sequence}, counting records per (producer, partition) as Kafka does), two per partition,
 *       each spreading its requests over the instances and retrying some
 *       on another instance, at once and a few requests later; and a keyed producer without producer fields whose
 *       requests span every partition.</li>
 *   <li>While they produce, one reader per partition pages through the service's fetch API and long-polls when it
 *       has caught up. After the producers stop, each reader drains to the highWatermark.</li>
 * </ul>
 * Then, per partition: offsets are dense from 0, every acknowledged record (key and value) was fetched exactly once
 * at its acknowledged offset, nothing else was fetched, and the highWatermark equals the acknowledged count.
 *
 * <p>Bounded: {@value #IDEMPOTENT_PRODUCERS} x {@value #REQUESTS} requests of 1..6 records plus {@value #REQUESTS}
 * keyed requests of {@value #KEYED_BATCH} records: about 1,300 records in 280 invocations, plus the retries. The
 * tierer runs on its default schedule, so sealed segments may be uploaded while the readers read; this test claims
 * nothing about the cold tier. Failing runs leave the service's and the functions' logs under
 * {@code target/it/lambda-with-service}.
 */
class LambdaFunctionsWithServiceIT {
    static final int INSTANCES = 3;
    static final int PARTITIONS = 3;
    static final int IDEMPOTENT_PRODUCERS = 6;
    static final int REQUESTS = 40;
    static final int KEYED_BATCH = 12;
    static final String TOPIC = "events";
    static final Duration STARTUP = Duration.ofSeconds(90);
    static final Duration PRODUCE = Duration.ofSeconds(120);

    private final Path work = Path.of("target", "it", "lambda-with-service").toAbsolutePath();
    /** The running service; null until started. */
    private PackagedService app;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<LoopbackRuntimeApi> apis = new ArrayList<>();
    private final List<RicFunctionProcess> functions = new ArrayList<>();
    private ExecutorService threads;

    /** Where a function said a record is, and what it holds. */
    record Place(int partition, long offset) {
    }

    record Content(String key, JsonNode value) {
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (threads != null) {
            threads.shutdownNow();
        }
        functions.forEach(RicFunctionProcess::close);
        apis.forEach(LoopbackRuntimeApi::close);
        if (app != null && app.process().isAlive()) {
            app.process().destroy();
            if (!app.process().waitFor(30, TimeUnit.SECONDS)) {
                app.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // a hard stop for a hung process; the run takes far less
    void everyRecordProducedThroughTheFunctionsIsFetchableFromTheServiceWithDenseOffsets() throws Exception {
        long began = System.nanoTime();
        PackagedService.deleteTree(work);
        Path data = Files.createDirectories(work.resolve("hot"));
        app = PackagedService.start(work, data);
        Path jar = Path.of(System.getProperty("tierlog.ingest-function.jar",
                "../ingest-function/target/tierlog-ingest-function.jar")).toAbsolutePath().normalize();
        assertThat(jar).as("the shaded function artifact; build ingest-function first").isRegularFile();
        Path taskRoot = RicFunctionProcess.unpack(jar, work.resolve("task"));
        for (int i = 0; i < INSTANCES; i++) {
            LoopbackRuntimeApi api = new LoopbackRuntimeApi();
            apis.add(api);
            functions.add(RicFunctionProcess.start(taskRoot, api.address(),
                    Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", "always"),
                    work.resolve("function-" + i + ".log")));
        }
        app.awaitReady(STARTUP);
        for (int i = 0; i < INSTANCES; i++) {
            apis.get(i).firstNext().get(STARTUP.toSeconds(), TimeUnit.SECONDS);
            assertThat(apis.get(i).initError().getNow(null)).as("init error of instance %d", i).isNull();
        }
        HttpResponse<String> created = send("POST", "/v1/topics", "{\"name\":\"" + TOPIC + "\",\"partitions\":"
                + PARTITIONS + ",\"config\":{\"segment.bytes\":16384}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        long ready = System.nanoTime();

        Map<Place, Content> acked = new ConcurrentHashMap<>();
        CompletableFuture<long[]> producedEnds = new CompletableFuture<>();
        AtomicLong duplicates = new AtomicLong();
        threads = Executors.newFixedThreadPool(IDEMPOTENT_PRODUCERS + 1 + PARTITIONS);
        List<Future<FetchedPartition>> readers = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            readers.add(threads.submit(() -> read(partition, producedEnds)));
        }
        List<Future<?>> producers = new ArrayList<>();
        for (int c = 0; c < IDEMPOTENT_PRODUCERS; c++) {
            int client = c;
            producers.add(threads.submit(() -> {
                idempotentProducer(client, acked, duplicates);
                return null;
            }));
        }
        producers.add(threads.submit(() -> {
            keyedProducer(acked);
            return null;
        }));
        try {
            long deadline = System.nanoTime() + PRODUCE.toNanos();
            for (Future<?> f : producers) {
                f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } finally {
            // Readers end only once they know where the partitions must end; tell them even when producing failed.
            long[] ends = new long[PARTITIONS];
            acked.keySet().forEach(pl -> ends[pl.partition()] = Math.max(ends[pl.partition()], pl.offset() + 1));
            producedEnds.complete(ends);
        }
        long produced = System.nanoTime();
        List<FetchedPartition> fetched = new ArrayList<>();
        for (Future<FetchedPartition> f : readers) {
            fetched.add(f.get(60, TimeUnit.SECONDS));
        }

        assertThat(duplicates.get()).as("retries answered as duplicates").isPositive();
        Map<Place, Content> stored = new HashMap<>();
        Set<JsonNode> values = new HashSet<>();
        long fetchedWhileProducing = 0;
        for (FetchedPartition fp : fetched) {
            long count = acked.keySet().stream().filter(pl -> pl.partition() == fp.partition()).count();
            assertThat(fp.highWatermark()).as("highWatermark of partition %d", fp.partition()).isEqualTo(count);
            for (int i = 0; i < fp.records().size(); i++) {
                JsonNode r = fp.records().get(i);
                assertThat(r.get("offset").asLong()).as("dense offsets from 0 in partition %d", fp.partition())
                        .isEqualTo(i);
                Content content = new Content(r.get("key").asText(), r.get("value"));
                assertThat(values.add(content.value())).as("fetched twice: %s", content).isTrue();
                stored.put(new Place(fp.partition(), i), content);
            }
            fetchedWhileProducing += fp.fetchedWhileProducing();
        }
        assertThat(differences(acked, stored)).as("every acknowledged record fetched at its acknowledged offset, "
                + "and nothing else (%d acknowledged, %d fetched)", acked.size(), stored.size()).isEmpty();
        assertThat(fetchedWhileProducing).as("records fetched while the functions produced").isPositive();
        for (int i = 0; i < INSTANCES; i++) {
            assertThat(functions.get(i).isAlive()).as("instance %d alive", i).isTrue();
            assertThat(functions.get(i).logText()).as("instance %d log", i).doesNotContain("\"level\":\"ERROR\"");
        }
        assertThat(app.process().isAlive()).isTrue();
        System.out.printf("%d records (%d duplicate retries) through %d function instances; %d fetched while "
                        + "producing; start %.1f s, produce %.1f s, drain %.1f s; topic: %s%n",
                acked.size(), duplicates.get(), INSTANCES, fetchedWhileProducing, (ready - began) / 1e9,
                (produced - ready) / 1e9, (System.nanoTime() - produced) / 1e9,
                send("GET", "/v1/topics/" + TOPIC, null).body());
    }

    /** What differs between the acknowledged and the fetched records, place by place (the first 20). */
    private static List<String> differences(Map<Place, Content> acked, Map<Place, Content> fetched) {
        Set<Place> places = new HashSet<>(acked.keySet());
        places.addAll(fetched.keySet());
        return places.stream()
                .sorted(Comparator.comparingInt(Place::partition).thenComparingLong(Place::offset))
                .filter(pl -> !Objects.equals(acked.get(pl), fetched.get(pl)))
                .map(pl -> pl + ": acknowledged " + acked.get(pl) + ", fetched " + fetched.get(pl))
                .limit(20)
                .toList();
    }

    /**
     * Producer {@code client}: {@value #REQUESTS} requests of 1..6 records whose keys all hash to partition
     * {@code client % PARTITIONS}, round-robin over the instances. Every 5th request is retried at once on the next
     * instance, and every 7th request (from the 4th on) also retries the request sent 3 before it, on yet another
     * instance: both must answer {@code duplicate: true} with the original offsets.
     */
    private void idempotentProducer(int client, Map<Place, Content> acked, AtomicLong duplicates) throws Exception {
        String producerId = "producer-" + client;
        int partition = client % PARTITIONS;
        KeysFor keys = new KeysFor(producerId, partition);
        List<String> events = new ArrayList<>();
        List<JsonNode> answers = new ArrayList<>();
        int sequence = 0; // Kafka's numbering: the records this producer sent to its partition so far
        for (int seq = 0; seq < REQUESTS; seq++) {
            ObjectNode body = Events.JSON.createObjectNode();
            ArrayNode records = body.putArray("records");
            List<Content> contents = new ArrayList<>();
            for (int i = 0; i < 1 + seq % 6; i++) {
                ObjectNode value = Events.JSON.createObjectNode()
                        .put("producer", producerId).put("seq", seq).put("i", i);
                Content c = new Content(keys.next(), value);
                contents.add(c);
                records.addObject().put("key", c.key()).set("value", value);
            }
            body.putObject("producer").put("id", producerId).put("epoch", 0).put("sequence", sequence);
            sequence += contents.size();
            String event = Events.produce(TOPIC, body.toString(), producerId + "-" + seq);
            int instance = (client + seq) % INSTANCES;
            Response r = invoke(instance, event);
            assertThat(r.status()).as("%s seq %d: %s", producerId, seq, r.body()).isEqualTo(200);
            assertThat(r.body().get("duplicate").asBoolean()).as("%s seq %d", producerId, seq).isFalse();
            acknowledge(r.body(), contents, acked);
            assertThat(r.body().get("offsets").findValues("partition")).allMatch(n -> n.asInt() == partition);
            events.add(event);
            answers.add(r.body().get("offsets"));
            if (seq % 5 == 4) {
                retry(instance + 1, event, r.body().get("offsets"), duplicates);
            }
            if (seq >= 3 && seq % 7 == 3) {
                retry(instance + 2, events.get(seq - 3), answers.get(seq - 3), duplicates);
            }
        }
    }

    private void retry(int instance, String event, JsonNode originalOffsets, AtomicLong duplicates) throws Exception {
        Response retry = invoke(instance % INSTANCES, event);
        assertThat(retry.status()).as("retry: %s", retry.body()).isEqualTo(200);
        assertThat(retry.body().get("duplicate").asBoolean()).as("retry answered as a duplicate").isTrue();
        assertThat(retry.body().get("offsets")).as("retry answers the original offsets").isEqualTo(originalOffsets);
        duplicates.incrementAndGet();
    }

    /** Requests of {@value #KEYED_BATCH} keyed records without producer fields; Kafka's partitioner places them. */
    private void keyedProducer(Map<Place, Content> acked) throws Exception {
        for (int n = 0; n < REQUESTS; n++) {
            ObjectNode body = Events.JSON.createObjectNode();
            ArrayNode records = body.putArray("records");
            List<Content> contents = new ArrayList<>();
            for (int i = 0; i < KEYED_BATCH; i++) {
                ObjectNode value = Events.JSON.createObjectNode().put("keyed", n).put("i", i);
                Content c = new Content("user-" + (n * KEYED_BATCH + i) % 97, value);
                contents.add(c);
                records.addObject().put("key", c.key()).set("value", value);
            }
            Response r = invoke(n % INSTANCES, Events.produce(TOPIC, body.toString(), "keyed-" + n));
            assertThat(r.status()).as("keyed %d: %s", n, r.body()).isEqualTo(200);
            acknowledge(r.body(), contents, acked);
            for (int i = 0; i < KEYED_BATCH; i++) {
                String key = contents.get(i).key();
                assertThat(r.body().get("offsets").get(i).get("partition").asInt()).as("murmur2 partition of %s", key)
                        .isEqualTo(Partitioner.forKey(key.getBytes(StandardCharsets.UTF_8), PARTITIONS));
            }
        }
    }

    private static void acknowledge(JsonNode body, List<Content> contents, Map<Place, Content> acked) {
        JsonNode offsets = body.get("offsets");
        assertThat(offsets).hasSize(contents.size());
        for (int i = 0; i < contents.size(); i++) {
            Place place = new Place(offsets.get(i).get("partition").asInt(), offsets.get(i).get("offset").asLong());
            Content before = acked.put(place, contents.get(i));
            assertThat(before).as("two records acknowledged at %s", place).isNull();
        }
    }

    private Response invoke(int instance, String event) throws Exception {
        Outcome o = apis.get(instance).invoke(event).get(60, TimeUnit.SECONDS);
        assertThat(o.error()).as("instance %d reported %s", instance, o.body()).isFalse();
        return Events.response(o.body());
    }

    /** What one reader fetched from a partition, in fetch order. */
    record FetchedPartition(int partition, List<JsonNode> records, long highWatermark, long fetchedWhileProducing) {
    }

    /**
     * Pages through {@code partition} from offset 0 while the producers run: 500 records a page until
     * {@code nextOffset == highWatermark}, then a long-poll (1 s) for more. Once the producers are done
     * ({@code ends} completes with each partition's acknowledged end), drains until it has reached that end and
     * the highWatermark (long-polling only while short of that end). Checks as it goes that each page continues
     * exactly where the last one ended.
     */
    private FetchedPartition read(int partition, CompletableFuture<long[]> ends) throws Exception {
        List<JsonNode> records = new ArrayList<>();
        long next = 0;
        long whileProducing = 0;
        boolean caughtUp = false;
        long deadline = System.nanoTime() + PRODUCE.toNanos() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            assertThat(System.nanoTime()).as("partition %d read by its deadline; at %d", partition, next)
                    .isLessThan(deadline);
            long[] expectedEnds = ends.getNow(null);
            boolean more = expectedEnds == null || next < expectedEnds[partition];
            String query = "?offset=" + next + "&maxRecords=500" + (caughtUp && more ? "&waitMs=1000" : "");
            HttpResponse<String> r = send("GET", "/v1/topics/" + TOPIC + "/partitions/" + partition + "/records" + query,
                    null);
            assertThat(r.statusCode()).as("fetch %s of partition %d: %s", query, partition, r.body()).isEqualTo(200);
            JsonNode page = Events.JSON.readTree(r.body());
            for (JsonNode record : page.get("records")) {
                assertThat(record.get("offset").asLong()).as("partition %d continues at %d", partition, next)
                        .isEqualTo(next);
                records.add(record);
                next++;
                if (expectedEnds == null) {
                    whileProducing++;
                }
            }
            assertThat(page.get("nextOffset").asLong()).as("nextOffset of partition %d", partition).isEqualTo(next);
            long highWatermark = page.get("highWatermark").asLong();
            caughtUp = next == highWatermark;
            if (caughtUp && expectedEnds != null && next >= expectedEnds[partition]) {
                return new FetchedPartition(partition, records, highWatermark, whileProducing);
            }
        }
    }

    /** Keys of the form {@code <producer>-<n>} that Kafka's partitioner puts in {@code partition}. */
    private static final class KeysFor {
        private final String prefix;
        private final int partition;
        private int n;

        KeysFor(String prefix, int partition) {
            this.prefix = prefix;
            this.partition = partition;
        }

        String next() {
            while (true) {
                String key = prefix + "-" + n++;
                if (Partitioner.forKey(key.getBytes(StandardCharsets.UTF_8), PARTITIONS) == partition) {
                    return key;
                }
            }
        }
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        return app.send(http, method, path, body);
    }
}
