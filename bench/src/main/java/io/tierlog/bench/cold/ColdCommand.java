package io.tierlog.bench.cold;

import com.fasterxml.jackson.databind.JsonNode;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.Payload;
import io.tierlog.bench.compare.ProcessCpu;
import io.tierlog.bench.compare.RunOptions;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.log.TopicPartition;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.FaultInjectingProxy;
import io.tierlog.tiering.ColdSegment;
import io.tierlog.tiering.Manifest;
import io.tierlog.tiering.ManifestStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code cold}: cold replay of one partition through the packaged index-service's HTTP API, beside the raw ranged
 * GET rate of the same S3 server, in one run (issue #4's benchmark). Starts on 127.0.0.1: an S3Proxy that counts
 * requests ({@link CountingS3}), the test kit's {@link FaultInjectingProxy} in front of it (to add first-byte
 * latency), and the index-service from {@code index-service/target/quarkus-app} with {@code tierlog.cold.store=s3}
 * through the proxy. Fills the topics, waits until they are cold, then per injected latency and per run measures:
 * <ol>
 *   <li>SSE replay from offset 0 ({@link SseReplay});</li>
 *   <li>paged fetch replay, JSON ({@link FetchReplay});</li>
 *   <li>binary stream replay, record batches ({@link BatchStreamReplay});</li>
 *   <li>binary paged fetch replay, record batches ({@link BatchFetchReplay});</li>
 *   <li>raw ranged GETs of the same segment objects, same chunk size, {@code fetch-threads} in flight;</li>
 *   <li>raw ranged GETs of {@code range-bytes}, {@code read-ahead-bytes / range-bytes} in flight (the service's
 *   sequential GETs and bytes in flight);</li>
 *   <li>the same one GET at a time.</li>
 * </ol>
 * The HTTP replays all go to one index-service, started after the fill with an empty index directory and tiering
 * off, as a long-running service would serve them: warm (the HTTP readers first replay a separate warm-up topic,
 * unmeasured, in rounds until the service's JIT compiler is quiet: see {@link JitWarmup}), but cold for the data
 * read. Every measured HTTP replay reads its own topic, filled alike and never read before, so no chunk of it is in
 * the service's chunk cache or its in-memory sidecar and manifest caches. (A freshly started service per replay, as
 * before, spent a third of its CPU in its JIT compiler threads during the measured replay.) The HTTP readers take
 * turns going first from run to run. Writes
 * {@code bench/results/cold-<timestamp>.json|md} and the generated block of {@code docs/BENCHMARKS.md}.
 */
@Command(name = "cold", mixinStandardHelpOptions = true,
        description = "Cold replay through the index-service's SSE stream, paged fetch and binary record-batch stream "
                + "and fetch vs raw ranged S3 GETs "
                + "(starts and stops S3Proxy, a latency proxy and the index-service itself).")
public final class ColdCommand implements Callable<Integer> {
    private static final String BUCKET = "tierlog-bench";
    private static final String PREFIX = "cold";
    private static final String TOPIC = "replay";
    private static final String WARMUP_TOPIC = "warmup";
    private static final Duration REPLAY_TIMEOUT = Duration.ofMinutes(5);

    @Mixin
    RunOptions run;

    @Option(names = "--mib", defaultValue = "128", description = "MiB of record values produced to the measured topic (default: ${DEFAULT-VALUE}).")
    int mib;

    @Mixin
    ReplayRuns replay;

    @Option(names = "--segment-mib", defaultValue = "8", description = "segment.bytes of the topics, MiB (default: ${DEFAULT-VALUE}).")
    int segmentMib;

    @Option(names = "--warmup-mib", defaultValue = "640", description = "MiB of the warm-up topic the HTTP readers replay, unmeasured, in rounds until the service's JIT is quiet, before the measured replays; larger than the chunk cache, so that every warm-up replay reads from S3 (default: ${DEFAULT-VALUE}).")
    int warmupMib;

    // 300 s: with all four HTTP readers a round takes about 17 s, and the 150 s used until 2026-11-30 stopped after 8-9
    // rounds with the service's JIT still compiling for 9-22% of the last round, i.e. during the measured replays.
    @Option(names = "--warmup-seconds", defaultValue = "300", description = "Most seconds of JIT warm-up rounds before the measured replays (default: ${DEFAULT-VALUE}).")
    int warmupSeconds;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Record value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--produce-batch", defaultValue = "1000", description = "Records per produce request (default: ${DEFAULT-VALUE}).")
    int produceBatch;

    @Option(names = "--chunk-bytes", defaultValue = "1048576", description = "tierlog.tiering.chunk-bytes, and the raw and serial readers' GET size (default: the service's, ${DEFAULT-VALUE}).")
    int chunkBytes;

    @Option(names = "--read-ahead-bytes", defaultValue = "33554432", description = "tierlog.tiering.read-ahead-bytes (default: the service's, ${DEFAULT-VALUE}).")
    long readAheadBytes;

    @Option(names = "--range-bytes", defaultValue = "8388608", description = "tierlog.tiering.range-bytes, and the raw-ranges reader's GET size, read-ahead-bytes / range-bytes in flight (default: the service's, ${DEFAULT-VALUE}).")
    int rangeBytes;

    @Option(names = "--fetch-threads", defaultValue = "8", description = "tierlog.tiering.fetch-threads, and the raw reader's GETs in flight (default: the service's, ${DEFAULT-VALUE}).")
    int fetchThreads;

    @Option(names = "--cache-bytes", defaultValue = "536870912", description = "tierlog.tiering.cache-bytes (default: the service's, ${DEFAULT-VALUE}).")
    long cacheBytes;

    @Option(names = "--fetch-max-records", defaultValue = "2000", description = "maxRecords of the paged fetch (default: ${DEFAULT-VALUE}).")
    int fetchMaxRecords;

    @Option(names = "--fetch-max-bytes", defaultValue = "4194304", description = "maxBytes of the paged fetch (default: ${DEFAULT-VALUE}).")
    int fetchMaxBytes;

    @Option(names = "--readers", split = ",", defaultValue = "sse,fetch,batch-stream,batch-fetch",
            description = "HTTP readers to measure, each replay on its own unread topic (default: ${DEFAULT-VALUE}); "
                    + "the raw and serial GET readers always run.")
    List<String> readers;

    private List<ColdResults.Reader> httpReaders;
    private Path runJar;
    private Path work;
    private int serviceStarts;
    private final List<Long> startMillis = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (replay.runs < 1 || segmentMib < 1 || replay.latenciesMs.isEmpty()) {
            throw new IllegalArgumentException("--runs and --segment-mib must be >= 1 and --latency-ms not empty");
        }
        if (mib <= segmentMib || warmupMib <= segmentMib) {
            // Only sealed segments go cold: a topic smaller than one segment would never have a cold range.
            throw new IllegalArgumentException("--mib and --warmup-mib must be larger than --segment-mib ("
                    + segmentMib + ")");
        }
        httpReaders = readers.stream().map(String::trim).map(ColdResults.Reader::httpReader).distinct().toList();
        Path root = run.repo();
        work = run.createWorkDir("tierlog-cold-");
        Instant started = Instant.now();
        String timestamp = DateTimeFormatter.ISO_INSTANT.format(started.truncatedTo(ChronoUnit.SECONDS));
        Map<String, String> machine = new LinkedHashMap<>(MachineInfo.describe(work));
        machine.put("loadavg at start", MachineInfo.loadAverage());
        Workspace.log("work dir " + work + "; machine " + machine);
        ColdResults results = new ColdResults();
        Map<String, Object> settings = settings(root);
        try (CountingS3 s3 = CountingS3.start(work.resolve("s3"));
             FaultInjectingProxy proxy = FaultInjectingProxy.start(s3.endpoint())) {
            s3.createBucket(BUCKET);
            runJar = snapshotApp(root.resolve("index-service/target/quarkus-app"), work.resolve("index-service-app"),
                    settings);
            Workspace.log("S3Proxy on " + s3.endpoint() + ", latency proxy on " + proxy.endpoint());
            List<Cold> topics = fill(s3, proxy, results);
            try (ObjectStore store = S3ObjectStore.builder().endpointOverride(proxy.endpoint())
                    .region(EmbeddedS3.REGION).credentials(EmbeddedS3.ACCESS_KEY, EmbeddedS3.SECRET_KEY)
                    .pathStyle(true).bucket(BUCKET).keyPrefix(PREFIX).build();
                 ColdService service = startService(proxy, false)) {
                List<RangedGets.Segment> warmSegments = segments(store, WARMUP_TOPIC, null);
                // This JVM's clients warm up once on the warm-up topic's objects, and the service's with each reader.
                RangedGets.read(store, warmSegments, chunkBytes, fetchThreads);
                RangedGets.read(store, warmSegments, chunkBytes, 1);
                long warmupLast = topics.get(0).warmupLastOffset();
                JitWarmup.Outcome warm = JitWarmup.untilQuiet(List.of(service.pid()), Duration.ofSeconds(warmupSeconds), round -> {
                    for (ColdResults.Reader reader : httpReaders) {
                        replay(reader, service.baseUri(), WARMUP_TOPIC, warmupLast, 0);
                    }
                });
                settings.put("warmUp", warm.toString());
                Workspace.log("index-service warm-up: " + warm);
                Iterator<Cold> unread = topics.iterator();
                for (int latency : replay.latenciesMs) {
                    proxy.delayResponses(Duration.ofMillis(latency));
                    for (int run = 1; run <= replay.runs; run++) {
                        measureRun(s3, service, store, unread, latency, run, results);
                    }
                }
            }
        } finally {
            machine.put("loadavg at end", MachineInfo.loadAverage());
            if (run.deleteWorkDir()) {
                Workspace.deleteTree(work);
            }
        }
        settings.put("serviceStartMillis", startMillis);
        settings.put("measuredTopics", measuredTopics());
        settings.put("wallClockSeconds", Duration.between(started, Instant.now()).toSeconds());
        ColdReport report = new ColdReport(results, machine, settings, timestamp);
        Path dir = root.resolve("bench/results");
        Files.createDirectories(dir);
        String name = "cold-" + timestamp.replace(":", "");
        Files.writeString(dir.resolve(name + ".json"), report.json(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(name + ".md"), "# Cold replay through the HTTP stream, " + timestamp + "\n\n"
                + report.markdown(), StandardCharsets.UTF_8);
        Workspace.log("results: " + dir.resolve(name + ".json") + " and .md");
        if (run.updateDocs()) {
            ColdDocs.SECTION.update(root.resolve("docs/BENCHMARKS.md"), report.markdown());
            Workspace.log("updated " + root.resolve("docs/BENCHMARKS.md"));
        }
        System.out.println(report.markdown());
        return 0;
    }

    /** A measured topic's cold range: offsets {@code [0, lastOffset]}, {@code bytes} of segment objects. */
    record Cold(String topic, long lastOffset, long bytes, int segments, long warmupLastOffset) {
        /** Whether both topics hold the same cold range, so their replays measure the same work. */
        boolean sameRangeAs(Cold other) {
            return lastOffset == other.lastOffset && bytes == other.bytes && segments == other.segments;
        }
    }

    /** Measured topics needed: one per HTTP replay, since a replay leaves its topic in the service's chunk cache. */
    private int measuredTopics() {
        return replay.latenciesMs.size() * replay.runs * httpReaders.size();
    }

    /**
     * Fills the warm-up topic, then the measured ones, with a tiering service (S3 without latency), and returns the
     * measured topics' cold ranges. S3 requests are counted from the first measured topic's creation until it is
     * cold; the others are filled after it, uncounted.
     */
    private List<Cold> fill(CountingS3 s3, FaultInjectingProxy proxy, ColdResults results) throws Exception {
        proxy.delayResponses(Duration.ZERO);
        Payload payload = new Payload(valueBytes, 42);
        long segmentBytes = (long) segmentMib << 20;
        long records = ((long) mib << 20) / valueBytes;
        List<Cold> out = new ArrayList<>();
        try (ColdService service = startService(proxy, true)) {
            TopicFiller filler = new TopicFiller(service.baseUri());
            filler.create(WARMUP_TOPIC, segmentBytes);
            filler.produce(WARMUP_TOPIC, ((long) warmupMib << 20) / valueBytes, produceBatch, payload);
            JsonNode warm = filler.awaitCold(WARMUP_TOPIC, Duration.ofMinutes(3));
            Workspace.log("warm-up topic cold: " + warm);
            long warmupLast = warm.path("hotStartOffset").asLong() - 1;

            int count = Math.max(1, measuredTopics());
            for (int i = 1; i <= count; i++) {
                String topic = TOPIC + "-" + i;
                if (i == 1) {
                    s3.reset();
                }
                long t0 = System.nanoTime();
                filler.create(topic, segmentBytes);
                filler.produce(topic, records, produceBatch, payload);
                long produced = System.nanoTime() - t0;
                JsonNode state = filler.awaitCold(topic, Duration.ofMinutes(5));
                long tiered = System.nanoTime() - t0;
                Cold cold = new Cold(topic, state.path("hotStartOffset").asLong() - 1, state.path("coldBytes").asLong(),
                        state.path("segments").path("cold").asInt(), warmupLast);
                if (i == 1) {
                    CountingS3.Counts counts = s3.counts();
                    results.fill(records, produced, tiered, state, counts);
                    Workspace.log(String.format("%s: produced %d records in %.1f s; cold after %.1f s: %s; S3 requests %d = %s per GiB tiered",
                            topic, records, produced / 1e9, tiered / 1e9, state, counts.requests(),
                            counts.perGibText(cold.bytes())));
                } else if (!cold.sameRangeAs(out.get(0))) {
                    throw new IllegalStateException(topic + " went cold as " + state + ", unlike " + out.get(0));
                }
                out.add(cold);
            }
            Workspace.log(count + " measured topics cold (" + out.get(0).bytes() + " bytes of segment objects each)");
            return out;
        }
    }

    /** The topic's cold segment objects in offset order, from its manifest; checked against the service's view. */
    private static List<RangedGets.Segment> segments(ObjectStore store, String topic, Cold expected) {
        Manifest m = new ManifestStore(store, Clock.systemUTC(), 10, Duration.ofHours(1), Runnable::run)
                .load(new TopicPartition(topic, 0));
        if (expected != null && (m.totalBytes() != expected.bytes() || m.coldEnd() != expected.lastOffset() + 1)) {
            throw new IllegalStateException("manifest of " + topic + " (" + m.totalBytes() + " bytes up to offset "
                    + m.coldEnd() + ") does not match the service's partition state (" + expected + ")");
        }
        List<RangedGets.Segment> out = new ArrayList<>();
        for (ColdSegment s : m.segments()) {
            out.add(new RangedGets.Segment(s.segmentKey(), s.sizeBytes()));
        }
        return out;
    }

    private void measureRun(CountingS3 s3, ColdService service, ObjectStore store, Iterator<Cold> unread,
                            int latency, int run, ColdResults results) throws Exception {
        String where = "latency " + latency + " ms, run " + run + ": ";
        // The HTTP readers take turns going first, so a drift in machine load does not always hit the same one.
        List<ColdResults.Reader> order = new ArrayList<>(httpReaders);
        Collections.rotate(order, -((run - 1) % order.size()));
        Cold last = null;
        for (ColdResults.Reader reader : order) {
            Cold topic = unread.next();
            measure(results, latency, reader, where, service.pid(), () -> measuredReplay(s3, service, topic, reader));
            last = topic;
        }
        // The raw readers GET the objects of the topic replayed last (S3Proxy serves every topic from the page cache).
        List<RangedGets.Segment> segments = segments(store, last.topic(), last);
        measure(results, latency, ColdResults.Reader.RAW, where, service.pid(), () -> {
            s3.reset();
            return RangedGets.read(store, segments, chunkBytes, fetchThreads).withCounts(s3.counts());
        });
        int rangesInFlight = (int) Math.max(1, readAheadBytes / rangeBytes);
        measure(results, latency, ColdResults.Reader.RAW_RANGES, where, service.pid(), () -> {
            s3.reset();
            return RangedGets.read(store, segments, rangeBytes, rangesInFlight).withCounts(s3.counts());
        });
        measure(results, latency, ColdResults.Reader.SERIAL, where, service.pid(), () -> {
            s3.reset();
            return RangedGets.read(store, segments, chunkBytes, 1).withCounts(s3.counts());
        });
    }

    /**
     * Runs one measurement with the CPU the service and this JVM used during it; a failure goes into the report's
     * notes and the run goes on with the next reader.
     */
    private static void measure(ColdResults results, int latency, ColdResults.Reader reader, String where,
                                long servicePid, Callable<Replay> measurement) {
        long benchmarkPid = ProcessHandle.current().pid();
        try {
            double serviceBefore = ProcessCpu.seconds(servicePid);
            double benchmarkBefore = ProcessCpu.seconds(benchmarkPid);
            Replay r = measurement.call();
            if (serviceBefore >= 0 && benchmarkBefore >= 0) {
                r = r.withCpu(new Replay.Cpu(ProcessCpu.seconds(servicePid) - serviceBefore,
                        ProcessCpu.seconds(benchmarkPid) - benchmarkBefore));
            }
            results.add(latency, reader, r);
            Workspace.log(where + describe(reader.label, r));
        } catch (Exception e) {
            String why = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
            results.note(where + reader.label + " failed: " + why);
            Workspace.log("FAILED " + where + reader.label + ": " + e);
        }
    }

    /** One measured replay of a topic no reader has read before, with the service's counters around it. */
    private Replay measuredReplay(CountingS3 s3, ColdService service, Cold topic, ColdResults.Reader reader)
            throws Exception {
        HttpClient metricsClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        Map<String, Double> before = ServiceMetrics.scrape(metricsClient, service.baseUri());
        s3.reset();
        // Every replay opens its own connection and closes it at the end, as a new consumer would.
        Replay r = replay(reader, service.baseUri(), topic.topic(), topic.lastOffset(), topic.bytes());
        if (r.records() != topic.lastOffset() + 1) {
            throw new IllegalStateException("replay of " + topic.topic() + " read " + r.records()
                    + " records, expected " + (topic.lastOffset() + 1));
        }
        CountingS3.Counts counts = s3.counts();
        return r.withCounts(counts).withService(ServiceMetrics.delta(before,
                ServiceMetrics.scrape(metricsClient, service.baseUri())));
    }

    /** One replay of {@code topic} from offset 0 through {@code last} by the given HTTP reader. */
    private Replay replay(ColdResults.Reader reader, URI base, String topic, long last,
                          long objectBytes) throws Exception {
        return switch (reader) {
            case SSE -> SseReplay.run(base, topic, 0, last, objectBytes, REPLAY_TIMEOUT);
            case FETCH -> FetchReplay.run(base, topic, 0, last, fetchMaxRecords, fetchMaxBytes, objectBytes,
                    REPLAY_TIMEOUT);
            case BATCH_STREAM -> BatchStreamReplay.run(base, topic, 0, last, objectBytes, REPLAY_TIMEOUT);
            case BATCH_FETCH -> BatchFetchReplay.run(base, topic, 0, last, fetchMaxRecords, fetchMaxBytes,
                    objectBytes, REPLAY_TIMEOUT);
            case RAW, RAW_RANGES, SERIAL -> throw new IllegalArgumentException(reader + " does not read over HTTP");
        };
    }

    /**
     * A service on the shared hot volume: the filling one with tiering on, or a measuring one with tiering off and a
     * fresh index directory (the previous one is deleted, so cache files do not pile up on the disk).
     */
    private ColdService startService(FaultInjectingProxy proxy, boolean tiering) throws IOException {
        int n = serviceStarts++;
        Path index = work.resolve("index-" + n);
        if (n > 0) {
            Workspace.deleteTree(work.resolve("index-" + (n - 1)));
        }
        long t = System.nanoTime();
        ColdService s = ColdService.start("tierlog-cold-" + n, runJar, work.resolve("hot"), index,
                work.resolve("logs/index-service-" + n + ".log"), proxy.endpoint(), BUCKET, PREFIX,
                new ColdService.ReadConfig(chunkBytes, readAheadBytes, rangeBytes, fetchThreads, cacheBytes), tiering);
        startMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t));
        return s;
    }

    private Map<String, Object> settings(Path root) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("mib", mib);
        s.put("runs", replay.runs);
        s.put("latenciesMs", replay.latenciesMs);
        s.put("segmentBytes", (long) segmentMib << 20);
        s.put("warmupMib", warmupMib);
        s.put("warmupSeconds", warmupSeconds);
        s.put("valueBytes", valueBytes);
        s.put("produceBatchRecords", produceBatch);
        s.put("chunkBytes", chunkBytes);
        s.put("readAheadBytes", readAheadBytes);
        s.put("rangeBytes", rangeBytes);
        s.put("fetchThreads", fetchThreads);
        s.put("cacheBytes", cacheBytes);
        s.put("fetchMaxRecords", fetchMaxRecords);
        s.put("fetchMaxBytes", fetchMaxBytes);
        s.put("httpReaders", httpReaders.stream().map(r -> r.option).toList());
        s.put("git", Workspace.gitDescribe(root));
        return s;
    }

    private static String describe(String reader, Replay r) {
        return String.format("%s: %.1f MB/s of segment bytes%s, first %.1f ms, %d S3 requests",
                reader, r.objectMbps(), r.valueBytes() > 0 ? String.format(" (%.1f MB/s of values)", r.valueMbps()) : "",
                r.firstMillis(), r.s3().requests());
    }

    /**
     * Copies the built index-service into the work directory and runs it from there, so that a rebuild of
     * {@code index-service/target} during the benchmark cannot swap jars under the running services.
     */
    private static Path snapshotApp(Path app, Path copy, Map<String, Object> settings) throws IOException {
        Path jar = app.resolve("quarkus-run.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("Tierlog index-service not built: " + jar + " is missing; build it with "
                    + "`mvn -B -q -pl index-service -am install -DskipTests`");
        }
        settings.put("index-service build (quarkus-run.jar mtime)", Files.getLastModifiedTime(jar).toString());
        return Workspace.copyApp(app, copy);
    }
}
