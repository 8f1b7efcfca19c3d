package io.tierlog.bench.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.bench.batches.RecordBatchDecoder;
import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.http.JsonFetchPage;
import io.tierlog.bench.kafka.KafkaSystem;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Drives one {@link TierlogService} over its HTTP API (docs/api.md). Produce and consume go through
 * {@link BlockingHttp} (the JDK's blocking {@code HttpURLConnection}, HTTP/1.1, keep-alive: the async
 * {@code java.net.http.HttpClient} read bodies at about half its speed here, see that class); topic admin and
 * offset look-ups use the JDK's {@link HttpClient}:
 * <ul>
 *   <li>produce: each concurrent producer keeps up to {@value #MAX_IN_FLIGHT} requests in flight (Kafka's
 *   {@code max.in.flight.requests.per.connection}; one HTTP/1.1 connection and one blocking sender thread per
 *   in-flight request, since HTTP/1.1 has no pipelining), each a {@code POST /v1/topics/{t}/records} of up to {@code batchRecords}
 *   unkeyed records to one explicit partition, either JSON ({@code encoding=json}, the partition on every record) or
 *   one Kafka record batch ({@code ?partition=P}, {@link ProduceBody#RECORD_BATCHES}): the client rotates
 *   requests over the topic's partitions (sticky per request, as Kafka's sticky partitioner per batch) and never
 *   has two in flight to one partition, so per-partition order holds ({@link PipelinedProducer}). Full requests at
 *   full throttle; when paced, whatever has arrived when a slot is free;</li>
 *   <li>consume: one fetch loop per partition from offset 0 ({@code maxRecords}, {@code maxBytes}) up to the end
 *   offset it had at the start, either JSON parsed with a streaming parser ({@link #consume}) or the stored record
 *   batches ({@code Accept: application/vnd.tierlog.record-batches}) CRC-checked and decoded with kafka-clients
 *   ({@link #consumeBatches}).</li>
 * </ul>
 * Durability is the service's fsync policy; topics get 1 GiB segments, as Kafka's default. Used from one thread.
 */
public final class TierlogSystem implements SystemUnderTest {
    static final int FETCH_MAX_RECORDS = 2000;
    static final int FETCH_MAX_BYTES = 4 << 20;
    /** Produce requests in flight per producer: the same number as Kafka's producer per connection. */
    static final int MAX_IN_FLIGHT = KafkaSystem.MAX_IN_FLIGHT;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private final TierlogService service;
    private final Clock clock;
    /** {@code Authorization: Bearer <token>} on every request, or nothing (auth mode {@code none}). */
    private final String[] auth;
    private final HttpClient admin = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ObjectMapper json = new ObjectMapper();

    public TierlogSystem(TierlogService service) {
        this(service, Clock.systemUTC());
    }

    /** @param clock the record timestamps (CreateTime) of binary produce requests */
    public TierlogSystem(TierlogService service, Clock clock) {
        this(service, clock, null);
    }

    /**
     * @param clock       the record timestamps (CreateTime) of binary produce requests
     * @param bearerToken sent as {@code Authorization: Bearer <token>} on every request (a service in auth mode
     *                    {@code token}); null sends no {@code Authorization} (mode {@code none})
     */
    public TierlogSystem(TierlogService service, Clock clock, String bearerToken) {
        this.service = service;
        this.clock = clock;
        this.auth = BlockingHttp.bearer(bearerToken);
    }

    /** An admin request to {@code u}, with the Authorization header if this system has a token. */
    private HttpRequest.Builder request(URI u) {
        HttpRequest.Builder b = HttpRequest.newBuilder(u);
        return auth.length == 0 ? b : b.headers(auth);
    }

    @Override
    public String name() {
        return "Tierlog";
    }

    @Override
    public boolean supports(Durability durability) {
        return service.durability() == durability;
    }

    @Override
    public void createTopic(String topic, int partitions, Durability durability) throws Exception {
        ObjectNode config = json.createObjectNode().put("segment.bytes", 1L << 30);
        createTopic(topic, partitions, config);
    }

    /** Creates a topic with the given config (api.md's keys), failing on anything but 201. */
    public void createTopic(String topic, int partitions, ObjectNode config) throws Exception {
        ObjectNode body = json.createObjectNode().put("name", topic).put("partitions", partitions);
        body.set("config", config);
        HttpResponse<String> r = admin.send(request(uri("/v1/topics"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        expect(r, 201, "create topic " + topic);
    }

    /** Produces with JSON bodies ({@link ProduceBody#JSON}). */
    @Override
    public ProduceStats produce(String topic, ProduceSpec spec) throws Exception {
        return produce(topic, spec, ProduceBody.JSON);
    }

    /**
     * Produces the spec's records with the given request body: JSON bodies are built before the clock starts (full
     * ones; a paced run's partial ones are built when sent), record batches are built for each request when it is
     * sent, inside the timed region, as Kafka's producer builds its batches.
     */
    public ProduceStats produce(String topic, ProduceSpec spec, ProduceBody bodyKind) throws Exception {
        int partitions = describe(topic).get("partitions").asInt();
        // Never two requests of one producer in flight to one partition, so a topic with fewer partitions than
        // the window caps it.
        int inFlight = Math.min(MAX_IN_FLIGHT, partitions);
        PipelinedProducer.Requests requests = bodyKind == ProduceBody.JSON
                ? jsonRequests(topic, spec, partitions) : batchRequests(topic, spec, partitions);
        List<Histogram> histograms = new ArrayList<>();
        List<PipelinedProducer> producers = new ArrayList<>();
        long elapsed;
        try {
            // Producers (and their sender threads) start before the clock, as Kafka's producers are created first.
            for (int i = 0; i < spec.producers(); i++) {
                histograms.add(new Histogram(TimeUnit.MINUTES.toMicros(10), 3));
                producers.add(new PipelinedProducer(requests, spec, i, partitions, inFlight, histograms.get(i),
                        REQUEST_TIMEOUT));
            }
            elapsed = Workers.runTimed(spec.producers(), (worker, startNanos) ->
                    producers.get(worker).run(startNanos));
        } finally {
            producers.forEach(PipelinedProducer::close);
        }
        Histogram all = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
        histograms.forEach(all::add);
        if (all.getTotalCount() != spec.records()) {
            throw new IllegalStateException("Tierlog acknowledged " + all.getTotalCount() + " of " + spec.records());
        }
        return new ProduceStats(spec.records(), spec.records() * spec.payload().valueBytes(), elapsed, all);
    }

    private PipelinedProducer.Requests jsonRequests(String topic, ProduceSpec spec, int partitions) {
        URI target = uri("/v1/topics/" + enc(topic) + "/records");
        // Full request bodies are built before the clock starts, as Kafka's values are ready byte arrays.
        byte[][] fullBodies = new byte[partitions][];
        for (int p = 0; p < partitions; p++) {
            fullBodies[p] = body(spec.payload(), 0, spec.batchRecords(), p);
        }
        return (partition, first, count) -> new PipelinedProducer.Post(target, "application/json",
                count == spec.batchRecords() ? fullBodies[partition] : body(spec.payload(), first, count, partition),
                auth);
    }

    private PipelinedProducer.Requests batchRequests(String topic, ProduceSpec spec, int partitions) {
        URI[] targets = new URI[partitions];
        for (int p = 0; p < partitions; p++) {
            targets[p] = uri("/v1/topics/" + enc(topic) + "/records?partition=" + p);
        }
        return (partition, first, count) -> {
            // Built here, on the producer's thread and on the clock, stamped with the time it is built (CreateTime),
            // as Kafka's producer stamps a record when send() is called.
            ByteBuffer batch = RecordBatchBody.build(spec.payload(), first, count, clock.millis());
            return new PipelinedProducer.Post(targets[partition], RecordBatchDecoder.MEDIA_TYPE, batch.array(),
                    batch.arrayOffset() + batch.position(), batch.remaining(), auth);
        };
    }

    /** A produce body of {@code count} unkeyed records of the payload from index {@code first}, all to {@code partition}. */
    static byte[] body(Payload payload, long first, int count, int partition) {
        StringBuilder sb = new StringBuilder(count * (payload.valueBytes() + 32) + 64);
        sb.append("{\"encoding\":\"json\",\"records\":[");
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append("{\"partition\":").append(partition).append(",\"value\":").append(payload.jsonText(first + i))
                    .append('}');
        }
        sb.append("]}");
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public ConsumeStats consume(String topic, int partitions, long expectedRecords, Duration timeout) throws Exception {
        return consume(topic, partitions, expectedRecords, timeout, false);
    }

    /**
     * As {@link #consume}, but each fetch asks for {@code Accept: application/vnd.tierlog.record-batches}: the
     * stored Kafka record batches, whose CRCs the client checks and whose records it decodes with kafka-clients
     * ({@link RecordBatchDecoder}), skipping records below the requested offset and checking that offsets are dense.
     */
    public ConsumeStats consumeBatches(String topic, int partitions, long expectedRecords, Duration timeout)
            throws Exception {
        return consume(topic, partitions, expectedRecords, timeout, true);
    }

    private ConsumeStats consume(String topic, int partitions, long expectedRecords, Duration timeout,
                                 boolean batches) throws Exception {
        long[] starts = new long[partitions];
        long[] ends = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            starts[p] = offsetAt(topic, p, "earliest");
            ends[p] = offsetAt(topic, p, "latest");
        }
        long[] counts = new long[partitions];
        long[] bytes = new long[partitions];
        long deadline = System.nanoTime() + timeout.toNanos();
        long elapsed = Workers.runTimed(partitions, (p, startNanos) -> {
            RecordBatchDecoder decoder = batches ? new RecordBatchDecoder(starts[p], ends[p]) : null;
            long offset = starts[p];
            while (offset < ends[p]) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Tierlog consume of " + topic + "/" + p + " timed out at offset "
                            + offset + " of " + ends[p]);
                }
                URI u = uri("/v1/topics/" + enc(topic) + "/partitions/" + p + "/records?offset=" + offset
                        + "&maxRecords=" + FETCH_MAX_RECORDS + "&maxBytes=" + FETCH_MAX_BYTES);
                long next;
                try (BlockingHttp.Response r = batches
                        ? BlockingHttp.get(u, BlockingHttp.CONNECT_TIMEOUT, REQUEST_TIMEOUT,
                                BlockingHttp.headers(auth, "Accept", RecordBatchDecoder.MEDIA_TYPE))
                        : BlockingHttp.get(u, BlockingHttp.CONNECT_TIMEOUT, REQUEST_TIMEOUT, auth)) {
                    InputStream in = r.body();
                    if (r.status() != 200) {
                        throw new IllegalStateException("Tierlog fetch " + u + " answered " + r.status() + ": "
                                + r.text(4000));
                    }
                    if (batches) {
                        RecordBatchDecoder.requireMediaType(r.header("Content-Type"), "Tierlog fetch " + u);
                        decoder.decode(ByteBuffer.wrap(r.bytes()));
                        next = decoder.next();
                        checkNextOffsetHeader(r, decoder, u);
                    } else {
                        JsonFetchPage page = JsonFetchPage.read(in, offset, null);
                        counts[p] += page.records();
                        bytes[p] += page.valueBytes();
                        next = page.nextOffset();
                    }
                }
                if (next <= offset) {
                    throw new IllegalStateException("Tierlog fetch " + u + " made no progress");
                }
                offset = next;
            }
            if (batches) {
                counts[p] = decoder.records();
                bytes[p] = decoder.valueBytes();
            }
        });
        long total = 0;
        long totalBytes = 0;
        for (int p = 0; p < partitions; p++) {
            total += counts[p];
            totalBytes += bytes[p];
        }
        if (total != expectedRecords) {
            throw new IllegalStateException("Tierlog consumed " + total + " records of " + topic + ", expected "
                    + expectedRecords);
        }
        return new ConsumeStats(total, totalBytes, elapsed);
    }

    /** The service's Tierlog-Next-Offset must be where the last batch it sent ends. */
    private static void checkNextOffsetHeader(BlockingHttp.Response r, RecordBatchDecoder decoder, URI u) {
        String header = r.header("Tierlog-Next-Offset");
        if (header != null && decoder.batchesEnd() >= 0 && Long.parseLong(header) != decoder.batchesEnd()) {
            throw new IllegalStateException("Tierlog fetch " + u + ": Tierlog-Next-Offset " + header
                    + " but the last batch ends at " + decoder.batchesEnd());
        }
    }

    private long offsetAt(String topic, int partition, String at) throws Exception {
        HttpResponse<String> r = admin.send(request(uri("/v1/topics/" + enc(topic) + "/partitions/"
                + partition + "/offsets?at=" + at)).build(), HttpResponse.BodyHandlers.ofString());
        expect(r, 200, "offsets of " + topic + "/" + partition);
        return json.readTree(r.body()).get("offset").asLong();
    }

    /** GET /q/metrics: the service's Prometheus scrape. */
    public String metrics() throws Exception {
        HttpResponse<String> r = admin.send(request(uri("/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        expect(r, 200, "metrics");
        return r.body();
    }

    /** GET /v1/topics/{topic}: the topic with its partitionStates. */
    public JsonNode describe(String topic) throws Exception {
        HttpResponse<String> r = admin.send(request(uri("/v1/topics/" + enc(topic))).build(),
                HttpResponse.BodyHandlers.ofString());
        expect(r, 200, "describe " + topic);
        return json.readTree(r.body());
    }

    @Override
    public int[] partitionsForKeys(String topic, List<String> keys) throws Exception {
        int[] partitions = new int[keys.size()];
        int chunk = 1000;
        for (int from = 0; from < keys.size(); from += chunk) {
            ObjectNode body = json.createObjectNode().put("encoding", "json");
            var records = body.putArray("records");
            for (int i = from; i < Math.min(keys.size(), from + chunk); i++) {
                records.addObject().put("key", keys.get(i)).put("value", "k");
            }
            HttpResponse<String> r = admin.send(request(uri("/v1/topics/" + enc(topic) + "/records"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build(),
                    HttpResponse.BodyHandlers.ofString());
            expect(r, 200, "keyed produce to " + topic);
            JsonNode offsets = json.readTree(r.body()).get("offsets");
            for (int i = 0; i < offsets.size(); i++) {
                partitions[from + i] = offsets.get(i).get("partition").asInt();
            }
        }
        return partitions;
    }

    @Override
    public void deleteTopic(String topic) throws Exception {
        HttpResponse<String> r = admin.send(request(uri("/v1/topics/" + enc(topic))).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
        expect(r, 204, "delete " + topic);
    }

    @Override
    public List<Long> serverPids() {
        return List.of(service.pid());
    }

    @Override
    public void close() {
        // the HttpClients hold no resources beyond idle connections, which end with the service
    }

    private URI uri(String pathAndQuery) {
        return service.baseUri().resolve(pathAndQuery);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static void expect(HttpResponse<String> r, int status, String what) {
        if (r.statusCode() != status) {
            throw new IllegalStateException("Tierlog " + what + " answered " + r.statusCode() + " (expected " + status
                    + "): " + r.body());
        }
    }
}
