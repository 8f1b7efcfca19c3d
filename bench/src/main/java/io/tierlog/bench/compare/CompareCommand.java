package io.tierlog.bench.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.bench.kafka.KafkaBroker;
import io.tierlog.bench.kafka.KafkaSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code compare}: Tierlog against Apache Kafka on this machine, one command. Starts an S3Proxy (cold tier), a
 * single-node Kafka 4.4.0 and two Tierlog index-services (fsync always / never) on 127.0.0.1, runs the same
 * workload on both, and writes {@code bench/results/<timestamp>.json} and {@code .md} plus the "Tierlog vs Kafka"
 * section of {@code docs/BENCHMARKS.md}. Every server is stopped at the end, also on failure or Ctrl-C.
 *
 * <p>Phases, each repeated {@code --runs} times, the two systems alternating who goes first:
 * produce (each durability x each producer count; Tierlog once with JSON bodies and once with Kafka record-batch
 * bodies), hot consume (on Tierlog both as JSON and as record batches), produce paced at half of each side's own
 * peak with fsync always, cold replay of Tierlog topics whose hot segments were evicted to S3 (read as JSON and as
 * record batches; with the raw S3 GET rate of the same objects), and once a key-partitioning check. Between steps the servers are left to go quiet (CPU), so one
 * system's background work is not billed to the other. A failing phase is noted in the report, not hidden.
 */
@Command(name = "compare", mixinStandardHelpOptions = true,
        description = "Side-by-side benchmark of Tierlog and Apache Kafka 4.4.0 (starts and stops everything itself).")
public final class CompareCommand implements Callable<Integer> {
    private static final String BUCKET = "tierlog-bench";
    static final String HOT_CONSUME = "hot-consume";
    static final String HOT_CONSUME_BATCHES = "hot-consume-batches";
    static final String COLD_REPLAY = "cold-replay";
    static final String COLD_REPLAY_BATCHES = "cold-replay-batches";

    @Mixin
    RunOptions run;

    @Option(names = "--quick", description = "100k records instead of 1M (finishes in under 5 minutes).")
    boolean quick;

    @Option(names = "--records", description = "Records per produce run (default: 1000000, or 100000 with --quick).")
    Long records;

    @Option(names = "--runs", defaultValue = "3", description = "Runs per measurement; medians are reported (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--partitions", defaultValue = "8", description = "Partitions per topic (default: ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--producers", split = ",", defaultValue = "1,8", description = "Concurrent producer counts (default: ${DEFAULT-VALUE}).")
    List<Integer> producerCounts;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size in bytes (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--tierlog-batch", defaultValue = "1000", description = "Records per Tierlog produce request (default: ${DEFAULT-VALUE}).")
    int tierlogBatch;

    @Option(names = "--skip-tierlog", description = "Run the Kafka side only.")
    boolean skipTierlog;

    @Option(names = "--skip-kafka", description = "Run the Tierlog side only.")
    boolean skipKafka;

    private final Results results = new Results();
    /** How each system's warm-up ended, for the report's settings. */
    private final List<String> warmups = new ArrayList<>();
    private final Map<String, String> buildInfo = new LinkedHashMap<>();
    private final List<SystemUnderTest> allSystems = new ArrayList<>();
    private Payload payload;
    private long recordCount;

    @Override
    public Integer call() throws Exception {
        recordCount = records != null ? records : quick ? 100_000 : 1_000_000;
        payload = new Payload(valueBytes, 42);
        Path root = run.repo();
        Path work = run.createWorkDir("tierlog-bench-");
        Instant started = Instant.now();
        String timestamp = DateTimeFormatter.ISO_INSTANT.format(started.truncatedTo(ChronoUnit.SECONDS));
        Map<String, String> machine = MachineInfo.describe(work);
        Workspace.log("work dir " + work + "; machine " + machine);

        KafkaSystem kafka = null;
        Map<Durability, TierlogSystem> tierlog = new EnumMap<>(Durability.class);
        List<AutoCloseable> toClose = new ArrayList<>();
        try {
            EmbeddedS3 s3 = EmbeddedS3.start(work.resolve("s3"));
            toClose.add(s3);
            s3.createBucket(BUCKET);
            Workspace.log("S3Proxy on " + s3.endpoint());
            // The three server JVMs start in parallel: each spends most of its start-up waiting on itself.
            CompletableFuture<KafkaBroker> brokerStart = skipKafka ? CompletableFuture.completedFuture(null)
                    : CompletableFuture.supplyAsync(() -> KafkaBroker.start(root.resolve("bench/target/kafka-libs"),
                            work.resolve("kafka"), Map.of()));
            Map<Durability, CompletableFuture<TierlogService>> tierlogStarts = new EnumMap<>(Durability.class);
            if (!skipTierlog) {
                Path runJar = snapshotApp(root.resolve("index-service/target/quarkus-app"), work.resolve("index-service-app"));
                for (Durability d : Durability.values()) {
                    tierlogStarts.put(d, CompletableFuture.supplyAsync(() -> {
                        try {
                            return TierlogService.start(runJar, work.resolve("tierlog-" + d.tierlogFsync()), d, s3, BUCKET);
                        } catch (Exception e) {
                            throw new CompletionException(e);
                        }
                    }));
                }
            }
            for (Map.Entry<Durability, CompletableFuture<TierlogService>> e : tierlogStarts.entrySet()) {
                Durability d = e.getKey();
                try {
                    TierlogService service = e.getValue().join();
                    toClose.add(service);
                    TierlogSystem system = new TierlogSystem(service);
                    tierlog.put(d, system);
                    allSystems.add(system);
                    Workspace.log("Tierlog index-service (" + d.tierlogSetting() + ") on " + service.baseUri() + " (pid " + service.pid() + ")");
                } catch (CompletionException failed) {
                    Throwable cause = failed.getCause() == null ? failed : failed.getCause();
                    results.note("Tierlog with " + d.tierlogSetting() + " could not be started, so its side was not measured: "
                            + firstLine(cause));
                    Workspace.log("Tierlog " + d + " not started: " + cause.getMessage());
                }
            }
            KafkaBroker broker = null;
            try {
                broker = brokerStart.join();
            } catch (CompletionException failed) {
                Throwable cause = failed.getCause() == null ? failed : failed.getCause();
                results.note("Kafka could not be started, so its side was not measured: " + firstLine(cause));
                Workspace.log("Kafka not started: " + cause.getMessage());
            }
            if (broker != null) {
                toClose.add(broker);
                kafka = new KafkaSystem(broker);
                toClose.add(kafka);
                allSystems.add(kafka);
                Workspace.log("Kafka 4.4.0 on " + broker.bootstrapServers() + " (pid " + broker.pid() + ")");
            }
            warmUp(kafka, tierlog);
            producePhase(kafka, tierlog);
            checkpoint(root, timestamp, machine, started, "produce and hot consume");
            halfPeakPhase(kafka, tierlog);
            keyPhase(kafka, tierlog.get(Durability.NEVER));
            checkpoint(root, timestamp, machine, started, "produce, hot consume, half-peak latency, key partitioning");
            coldPhase(tierlog.get(Durability.NEVER), s3);
        } finally {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                try {
                    toClose.get(i).close();
                } catch (Exception e) {
                    Workspace.log("closing " + toClose.get(i) + " failed: " + e);
                }
            }
            machine.put("loadavg at end", MachineInfo.loadAverage());
            if (run.deleteWorkDir()) {
                Workspace.deleteTree(work);
            }
        }
        writeOutputs(root, timestamp, machine, Duration.between(started, Instant.now()), null);
        return 0;
    }

    /**
     * Writes the results files so far (not docs/BENCHMARKS.md), marked incomplete, so that a run cut short keeps
     * the phases it finished. The final write replaces them.
     */
    private void checkpoint(Path root, String timestamp, Map<String, String> machine, Instant started, String done) {
        try {
            writeOutputs(root, timestamp, machine, Duration.between(started, Instant.now()), done);
        } catch (Exception e) {
            Workspace.log("could not write the checkpoint: " + e);
        }
    }

    /**
     * Unmeasured produce and consume on every system first, in rounds until its server's JIT compiler is quiet
     * ({@link JitWarmup}), so that the servers (and this JVM's clients) are warm before the first measured run,
     * whichever system that is. Each round: produce, consume (on Tierlog also as record batches, and a produce of
     * record batches: that path has its own server and client code to compile), each into a fresh topic.
     */
    private void warmUp(KafkaSystem kafka, Map<Durability, TierlogSystem> tierlog) {
        long n = Math.max(20_000, recordCount / 10);
        int producers = producerCounts.stream().max(Integer::compare).orElse(1);
        // --quick must finish in under 5 minutes (issue #7), so its servers get a shorter warm-up.
        Duration limit = quick ? Duration.ofSeconds(15) : Duration.ofSeconds(150);
        for (Durability d : Durability.values()) {
            for (SystemUnderTest system : order(1, d == Durability.ALWAYS ? kafka : null, tierlog.get(d))) {
                try {
                    JitWarmup.Outcome outcome = JitWarmup.untilQuiet(system.serverPids(), limit, round -> {
                        String topic = "warmup-" + d.tierlogFsync() + "-" + round;
                        try {
                            system.createTopic(topic, partitions, d);
                            system.produce(topic, new ProduceSpec(n, producers, tierlogBatch, 0, payload));
                            system.consume(topic, partitions, n, Duration.ofMinutes(5));
                            if (system instanceof TierlogSystem tierlogSystem) {
                                tierlogSystem.consumeBatches(topic, partitions, n, Duration.ofMinutes(5));
                                tierlogSystem.produce(topic, new ProduceSpec(n, producers, tierlogBatch, 0, payload),
                                        ProduceBody.RECORD_BATCHES);
                            }
                        } finally {
                            deleteQuietly(system, topic);
                        }
                    });
                    String what = system.name() + " (" + d.label() + ") warm-up: " + outcome + ", " + n
                            + " records per round";
                    warmups.add(what);
                    Workspace.log(what);
                } catch (Exception e) {
                    results.note(system.name() + " (" + d.label() + ") warm-up failed: " + firstLine(e));
                    Workspace.log("FAILED warm-up " + system.name() + ": " + e);
                }
            }
        }
        settle();
    }

    /**
     * Per run, durability and producer count: Kafka, Tierlog with JSON bodies and Tierlog with record-batch bodies,
     * each into its own fresh topic, in an order that rotates from run to run. The hot consume follows the Kafka
     * and the Tierlog JSON produce of the 8-producer page-cache runs, as before the binary rows existed.
     */
    private void producePhase(KafkaSystem kafka, Map<Durability, TierlogSystem> tierlog) {
        int maxProducers = producerCounts.stream().max(Integer::compare).orElse(1);
        for (int run = 1; run <= runs; run++) {
            for (Durability d : Durability.values()) {
                for (int producers : producerCounts) {
                    for (Producer producer : producers(run, kafka, tierlog.get(d))) {
                        SystemUnderTest system = producer.system();
                        String topic = "produce-" + producer.topicTag() + d.tierlogFsync() + "-p" + producers + "-r" + run;
                        boolean consumeToo = d == Durability.NEVER && producers == maxProducers && !producer.isBinary();
                        try {
                            system.createTopic(topic, partitions, d);
                            settle();
                            ProduceStats s = producer.produce(topic, new ProduceSpec(recordCount, producers, tierlogBatch, 0, payload));
                            results.add(new Results.Key(producer.producePhase(), system.name(), d, producers), Map.of(
                                    "mbps", s.megabytesPerSecond(), "rps", s.recordsPerSecond(),
                                    "p50ms", s.p50Millis(), "p99ms", s.p99Millis(), "seconds", s.seconds()));
                            Workspace.log(String.format("run %d produce %-22s %-5s producers=%d: %.1f MB/s, %.0f rec/s, p50 %.2f ms, p99 %.2f ms",
                                    run, producer.label(), d, producers, s.megabytesPerSecond(), s.recordsPerSecond(), s.p50Millis(), s.p99Millis()));
                            if (consumeToo) {
                                hotConsume(system, topic, run);
                            }
                        } catch (Exception e) {
                            results.note("run " + run + ": " + producer.label() + " produce" + (consumeToo ? "/consume" : "")
                                    + " (" + d.label() + ", " + producers + " producers) failed: " + firstLine(e));
                            Workspace.log("FAILED " + producer.label() + " " + d + " p=" + producers + ": " + e);
                        } finally {
                            deleteQuietly(system, topic);
                        }
                    }
                }
            }
        }
    }

    /**
     * One producing side of the comparison: Kafka's producer ({@code body} null), or Tierlog's with the given
     * request body. Tierlog's record-batch rows are their own phases in the results, beside the JSON ones.
     */
    private record Producer(SystemUnderTest system, ProduceBody body) {
        boolean isBinary() {
            return body == ProduceBody.RECORD_BATCHES;
        }

        String label() {
            return body == null ? system.name() : system.name() + ", " + body.label();
        }

        String producePhase() {
            return body == null ? "produce" : body.producePhase();
        }

        String halfPeakPhase() {
            return body == null ? "half-peak" : body.halfPeakPhase();
        }

        String topicTag() {
            return isBinary() ? "batches-" : "";
        }

        ProduceStats produce(String topic, ProduceSpec spec) throws Exception {
            return body == null ? system.produce(topic, spec) : ((TierlogSystem) system).produce(topic, spec, body);
        }
    }

    /**
     * Kafka, Tierlog JSON and Tierlog record batches, rotated by one place per run, so that a slow drift in machine
     * load does not always hit the same one (with Kafka alone or Tierlog alone, just those present).
     */
    private static List<Producer> producers(int run, SystemUnderTest kafka, TierlogSystem tierlog) {
        List<Producer> list = new ArrayList<>();
        if (tierlog != null) {
            list.add(new Producer(tierlog, ProduceBody.JSON));
            list.add(new Producer(tierlog, ProduceBody.RECORD_BATCHES));
        }
        if (kafka != null) {
            list.add(new Producer(kafka, null));
        }
        if (!list.isEmpty()) {
            Collections.rotate(list, -((run - 1) % list.size()));
        }
        return list;
    }

    /**
     * Reads the topic from offset 0 with the system's consumer; on Tierlog twice, once as JSON and once as record
     * batches, the two taking turns going first from run to run.
     */
    private void hotConsume(SystemUnderTest system, String topic, int run) throws Exception {
        if (!(system instanceof TierlogSystem tierlog)) {
            settle();
            ConsumeStats c = system.consume(topic, partitions, recordCount, Duration.ofMinutes(10));
            recordConsume(HOT_CONSUME, system.name(), run, "", c);
            return;
        }
        for (boolean batches : run % 2 == 1 ? new boolean[] {false, true} : new boolean[] {true, false}) {
            String how = batches ? ", record batches" : ", JSON";
            settle();
            try {
                ConsumeStats c = readFromStart(tierlog, topic, batches);
                recordConsume(batches ? HOT_CONSUME_BATCHES : HOT_CONSUME, system.name(), run, how, c);
            } catch (Exception e) {
                // One read format failing (e.g. a build without binary reads) must not cost the other its row.
                results.note("run " + run + ": Tierlog hot consume" + how + " failed: " + firstLine(e));
                Workspace.log("FAILED hot consume Tierlog" + how + ": " + e);
            }
        }
    }

    private void recordConsume(String phase, String system, int run, String how, ConsumeStats c) {
        results.add(new Results.Key(phase, system, Durability.NEVER, 0), Map.of(
                "mbps", c.megabytesPerSecond(), "rps", c.recordsPerSecond()));
        Workspace.log(String.format("run %d hot consume %-7s%s: %.1f MB/s, %.0f rec/s", run, system, how,
                c.megabytesPerSecond(), c.recordsPerSecond()));
    }

    /** Results hold numbers JSON can carry: a quantile of no observations (NaN) or past the last bucket is left out. */
    private static void putFinite(Map<String, Double> sample, String metric, double value) {
        if (Double.isFinite(value)) {
            sample.put(metric, value);
        }
    }

    private static ServiceHistogram histogramSince(String before, String after, String name) {
        return ServiceHistogram.parse(after, name).since(ServiceHistogram.parse(before, name));
    }

    /**
     * Paced at half of each side's own peak (fsync always): Kafka with the producer count that reached its peak;
     * Tierlog's two bodies both with the producer count that reached the JSON peak, each at half of its own
     * full-throttle rate with that count. One count for both bodies, so that their latencies compare like with like:
     * until 2026-12-02 each body took its own best count, and as the two counts are close at full throttle, the pick
     * flipped from run to run (JSON with 8 producers against record batches with 1 in one run, 1 against 8 in the
     * one before), and with it the JSON/record-batch p99 ratio (2.29x, 1.19x).
     */
    private void halfPeakPhase(KafkaSystem kafka, Map<Durability, TierlogSystem> tierlog) {
        double seconds = quick ? 5 : 20;
        for (int run = 1; run <= runs; run++) {
            for (Producer producer : producers(run, kafka, tierlog.get(Durability.ALWAYS))) {
                SystemUnderTest system = producer.system();
                int bestProducers = bestProducers(producer.body() == null ? producer
                        : new Producer(system, ProduceBody.JSON));
                if (bestProducers < 0) {
                    continue;
                }
                double peak = results.median(new Results.Key(producer.producePhase(), system.name(), Durability.ALWAYS,
                        bestProducers), "rps").orElse(0);
                if (peak <= 0) {
                    continue;
                }
                double target = peak / 2;
                long n = Math.max((long) bestProducers * tierlogBatch, Math.min(recordCount, (long) (target * seconds)));
                String topic = "halfpeak-" + producer.topicTag() + "r" + run;
                try {
                    system.createTopic(topic, partitions, Durability.ALWAYS);
                    settle();
                    String writeback = MachineInfo.pendingWriteback();
                    TierlogSystem tierlogSide = system instanceof TierlogSystem t ? t : null;
                    String before = tierlogSide != null ? tierlogSide.metrics() : null;
                    ProduceStats s = producer.produce(topic, new ProduceSpec(n, bestProducers, tierlogBatch, target, payload));
                    Map<String, Double> sample = new LinkedHashMap<>(Map.of(
                            "targetRps", target, "rps", s.recordsPerSecond(), "p50ms", s.p50Millis(), "p99ms", s.p99Millis()));
                    String serverSide = "";
                    if (before != null) {
                        // What the service saw of the same requests: its own latency, and the part of it spent
                        // waiting for the fsync that made each append durable.
                        String after = tierlogSide.metrics();
                        ServiceHistogram latency = histogramSince(before, after, "tierlog_produce_latency_seconds");
                        ServiceHistogram wait = histogramSince(before, after, "tierlog_produce_durable_wait_seconds");
                        putFinite(sample, "serviceP50ms", latency.quantileMillis(0.5));
                        putFinite(sample, "serviceP99ms", latency.quantileMillis(0.99));
                        putFinite(sample, "fsyncWaitP50ms", wait.quantileMillis(0.5));
                        putFinite(sample, "fsyncWaitP99ms", wait.quantileMillis(0.99));
                        serverSide = String.format("; in the service, %.0f requests: p50 <= %.2f ms, p99 <= %.2f ms, "
                                + "of which waiting for fsync p50 <= %.2f ms, p99 <= %.2f ms", latency.count(),
                                latency.quantileMillis(0.5), latency.quantileMillis(0.99), wait.quantileMillis(0.5),
                                wait.quantileMillis(0.99));
                    }
                    results.add(new Results.Key(producer.halfPeakPhase(), system.name(), Durability.ALWAYS, bestProducers), sample);
                    Workspace.log(String.format("run %d half-peak %-22s producers=%d at %.0f rec/s: achieved %.0f, p50 %.2f ms, p99 %.2f ms%s (at its start: %s)",
                            run, producer.label(), bestProducers, target, s.recordsPerSecond(), s.p50Millis(), s.p99Millis(), serverSide, writeback));
                } catch (Exception e) {
                    results.note("run " + run + ": " + producer.label() + " half-peak latency run failed: " + firstLine(e));
                    Workspace.log("FAILED half-peak " + producer.label() + ": " + e);
                } finally {
                    deleteQuietly(system, topic);
                }
            }
        }
    }

    /** The producer count of this producer's highest full-throttle median rate (fsync always), or -1 if none. */
    private int bestProducers(Producer producer) {
        int best = -1;
        double peak = 0;
        for (int p : producerCounts) {
            OptionalDouble rps = results.median(new Results.Key(producer.producePhase(), producer.system().name(),
                    Durability.ALWAYS, p), "rps");
            if (rps.isPresent() && rps.getAsDouble() > peak) {
                peak = rps.getAsDouble();
                best = p;
            }
        }
        return best;
    }

    private void keyPhase(KafkaSystem kafka, TierlogSystem tierlog) {
        if (kafka == null || tierlog == null) {
            results.note("Key partitioning check not run: it needs both Kafka and Tierlog.");
            return;
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            keys.add("user-" + i);
        }
        try {
            kafka.createTopic("keys", partitions, Durability.NEVER);
            tierlog.createTopic("keys", partitions, Durability.NEVER);
            settle();
            int[] k = kafka.partitionsForKeys("keys", keys);
            int[] t = tierlog.partitionsForKeys("keys", keys);
            int mismatches = 0;
            for (int i = 0; i < keys.size(); i++) {
                if (k[i] != t[i]) {
                    mismatches++;
                }
            }
            results.add(new Results.Key("key-partitioning", "both", Durability.NEVER, 0),
                    Map.of("keys", (double) keys.size(), "mismatches", (double) mismatches));
            Workspace.log("key partitioning: " + mismatches + " of " + keys.size() + " keys on different partitions");
        } catch (Exception e) {
            results.note("Key partitioning check failed: " + firstLine(e));
        } finally {
            deleteQuietly(kafka, "keys");
            deleteQuietly(tierlog, "keys");
        }
    }

    /**
     * Per run: two fresh Tierlog topics with small segments and {@code local.retention.ms=0}, filled alike (JSON
     * produce), then left until every partition's sealed segments are in S3 and gone from the hot volume; then one
     * is read from offset 0 as JSON and the other as record batches (cold segments by ranged GETs, the active
     * segment hot), the two reads taking turns going first; then the raw GET rate of the JSON topic's S3 objects.
     * Each read has its own topic because the service caches the cold chunks it fetched: a second read of the same
     * topic would be served from that cache, not from S3.
     */
    private void coldPhase(TierlogSystem tierlog, EmbeddedS3 s3) {
        if (tierlog == null) {
            results.note("Cold replay not run: no Tierlog index-service with fsync never.");
            return;
        }
        long segmentBytes = Math.max(1 << 20, recordCount * valueBytes / partitions / 16);
        ObjectMapper json = new ObjectMapper();
        for (int run = 1; run <= runs; run++) {
            String topic = "cold-r" + run;
            String batchTopic = "cold-batches-r" + run;
            try {
                ObjectNode config = json.createObjectNode().put("segment.bytes", segmentBytes)
                        .put("local.retention.ms", 0).put("retention.ms", -1);
                int producers = producerCounts.stream().max(Integer::compare).orElse(1);
                for (String t : List.of(topic, batchTopic)) {
                    tierlog.createTopic(t, partitions, config);
                    tierlog.produce(t, new ProduceSpec(recordCount, producers, tierlogBatch, 0, payload));
                }
                long evictStart = System.nanoTime();
                Duration evictTimeout = Duration.ofSeconds(quick ? 90 : 240);
                awaitEvicted(tierlog, topic, evictTimeout);
                double evictSeconds = (System.nanoTime() - evictStart) / 1e9;
                awaitEvicted(tierlog, batchTopic, evictTimeout);
                for (boolean batches : run % 2 == 1 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                    coldRead(tierlog, batches ? batchTopic : topic, batches, run, evictSeconds);
                }
                settle();
                S3GetRate.Result g = S3GetRate.measure(s3.endpoint(), BUCKET,
                        Durability.NEVER.tierlogFsync() + "/" + topic + "/", ".log", partitions);
                results.add(new Results.Key("s3-get", "S3Proxy", Durability.NEVER, 0), Map.of(
                        "mbps", g.megabytesPerSecond(), "getsPerSecond", g.getsPerSecond(), "objects", (double) g.objects()));
                Workspace.log(String.format("run %d raw S3 GET: %.1f MB/s, %.0f GET/s over %d objects", run, g.megabytesPerSecond(),
                        g.getsPerSecond(), g.objects()));
            } catch (TieringStalled e) {
                results.note("Cold replay not measured: " + e.getMessage());
                Workspace.log("cold replay skipped: " + e.getMessage());
                return; // later runs would wait for the same missing tiering
            } catch (Exception e) {
                results.note("run " + run + ": cold replay failed: " + firstLine(e));
                Workspace.log("FAILED cold replay: " + e);
            } finally {
                deleteQuietly(tierlog, topic);
                deleteQuietly(tierlog, batchTopic);
            }
        }
    }

    /** Reads every partition of {@code topic} from its start, as JSON or as record batches. */
    private ConsumeStats readFromStart(TierlogSystem tierlog, String topic, boolean batches) throws Exception {
        return batches
                ? tierlog.consumeBatches(topic, partitions, recordCount, Duration.ofMinutes(10))
                : tierlog.consume(topic, partitions, recordCount, Duration.ofMinutes(10));
    }

    /** One cold read of an evicted topic from offset 0, as JSON or as record batches; a failure is a note. */
    private void coldRead(TierlogSystem tierlog, String topic, boolean batches, int run, double evictSeconds) {
        String how = batches ? ", record batches" : ", JSON";
        settle();
        try {
            ConsumeStats c = readFromStart(tierlog, topic, batches);
            results.add(new Results.Key(batches ? COLD_REPLAY_BATCHES : COLD_REPLAY, "Tierlog", Durability.NEVER, 0),
                    Map.of("mbps", c.megabytesPerSecond(), "rps", c.recordsPerSecond(), "evictSeconds", evictSeconds));
            Workspace.log(String.format("run %d cold replay Tierlog%s: %.1f MB/s, %.0f rec/s (eviction took %.1f s)", run,
                    how, c.megabytesPerSecond(), c.recordsPerSecond(), evictSeconds));
        } catch (Exception e) {
            // One read format failing must not cost the other its row.
            results.note("run " + run + ": Tierlog cold replay" + how + " failed: " + firstLine(e));
            Workspace.log("FAILED cold replay Tierlog" + how + ": " + e);
        }
    }

    /** The tierer uploaded nothing for a while: tiering is off or missing in this build. */
    static final class TieringStalled extends Exception {
        TieringStalled(String message) {
            super(message);
        }
    }

    private void awaitEvicted(TierlogSystem tierlog, String topic, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long stallLimit = TimeUnit.SECONDS.toNanos(30); // 30 tiering intervals of 1 s
        long lastProgress = System.nanoTime();
        long lastCold = -1;
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = tierlog.describe(topic);
            JsonNode states = last.get("partitionStates");
            long cold = 0;
            for (int i = 0; states != null && i < states.size(); i++) {
                cold += states.get(i).path("coldBytes").asLong() + states.get(i).path("segments").path("cold").asLong();
            }
            if (cold != lastCold) {
                lastCold = cold;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > stallLimit) {
                throw new TieringStalled("tiering of " + topic + " made no progress for "
                        + TimeUnit.NANOSECONDS.toSeconds(stallLimit) + " s with tierlog.tiering.interval=1s and "
                        + "local.retention.ms=0 (partition 0: " + (states == null || states.isEmpty() ? "no state" : states.get(0))
                        + "); upload or hot eviction is not active in the index-service build under test");
            }
            boolean evicted = states != null && states.size() == partitions;
            for (int i = 0; evicted && i < states.size(); i++) {
                JsonNode s = states.get(i);
                JsonNode segments = s.get("segments");
                evicted = segments != null && segments.path("cold").asLong() > 0 && segments.path("hot").asLong() <= 1
                        && s.path("hotStartOffset").asLong() > 0;
            }
            if (evicted) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        }
        throw new IllegalStateException("hot segments of " + topic + " were not tiered and evicted within " + timeout
                + "; partition 0 state: " + (last == null ? "none" : last.path("partitionStates").path(0)));
    }

    /**
     * Copies the built index-service into the work directory and runs it from there, so that a rebuild of
     * {@code index-service/target} by someone else during the benchmark cannot swap or delete its jars under
     * the running services. Records when the copied build was made. Returns the copy's run jar (which
     * {@link TierlogService} checks for, so a missing build is reported there).
     */
    private Path snapshotApp(Path app, Path copy) throws IOException {
        Path runJar = app.resolve("quarkus-run.jar");
        if (!Files.isRegularFile(runJar)) {
            return runJar;
        }
        buildInfo.put("index-service build (quarkus-run.jar mtime)", Files.getLastModifiedTime(runJar).toString());
        return Workspace.copyApp(app, copy);
    }

    /** Alternates which system goes first, so a slow drift in machine load does not always hit the same one. */
    private static List<SystemUnderTest> order(int run, SystemUnderTest kafka, SystemUnderTest tierlog) {
        List<SystemUnderTest> list = new ArrayList<>();
        if (kafka != null) {
            list.add(kafka);
        }
        if (tierlog != null) {
            list.add(run % 2 == 1 ? list.size() : 0, tierlog);
        }
        return list;
    }

    private void settle() {
        List<Long> pids = allSystems.stream().flatMap(s -> s.serverPids().stream()).toList();
        if (!ProcessCpu.awaitQuiet(pids, 0.15, Duration.ofSeconds(quick ? 15 : 30))) {
            Workspace.log("servers still busy after the settle timeout; measuring anyway");
        }
    }

    private void deleteQuietly(SystemUnderTest system, String topic) {
        if (system == null) {
            return;
        }
        try {
            system.deleteTopic(topic);
        } catch (Exception e) {
            Workspace.log("could not delete " + system.name() + " topic " + topic + ": " + e.getMessage());
        }
    }

    /** {@code partialAfter}: null for the final write; else the phases finished so far (docs are then left alone). */
    private void writeOutputs(Path root, String timestamp, Map<String, String> machine, Duration took, String partialAfter)
            throws Exception {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("mode", (quick ? "--quick" : "full") + (partialAfter == null ? "" : ", INCOMPLETE: only " + partialAfter));
        settings.put("records", recordCount);
        settings.put("warmUp", warmups);
        settings.put("valueBytes", valueBytes);
        settings.put("partitions", partitions);
        settings.put("runs", runs);
        settings.put("producers", producerCounts);
        settings.put("tierlogBatchRecords", tierlogBatch);
        settings.put("tierlogProducer", "up to " + TierlogSystem.MAX_IN_FLIGHT + " requests in flight per producer "
                + "(one HTTP/1.1 connection each), each to its own partition (explicit, rotating); bodies either JSON "
                + "(encoding=json, built before the clock starts) or one Kafka RecordBatch v2 per request "
                + "(application/vnd.tierlog.record-batches, built by MemoryRecordsBuilder inside the timed region)");
        settings.put("kafkaProducer", "acks=all, enable.idempotence=true (default), linger.ms=5, batch.size=524288, "
                + "max.in.flight.requests.per.connection=" + KafkaSystem.MAX_IN_FLIGHT + " (default), compression none");
        settings.put("wallClockSeconds", took.toSeconds());
        settings.put("git", Workspace.gitDescribe(root));
        settings.putAll(buildInfo);
        Report report = new Report(results, machine, settings, timestamp);
        Path dir = root.resolve("bench/results");
        Files.createDirectories(dir);
        String name = timestamp.replace(":", "");
        Files.writeString(dir.resolve(name + ".json"), report.json(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(name + ".md"), "# Tierlog vs Kafka, " + timestamp + "\n\n" + report.markdown(),
                StandardCharsets.UTF_8);
        if (partialAfter != null) {
            Workspace.log("checkpoint after " + partialAfter + ": " + dir.resolve(name + ".json"));
            return;
        }
        Workspace.log("results: " + dir.resolve(name + ".json") + " and .md (took " + took.toSeconds() + " s)");
        if (run.updateDocs()) {
            DocsTable.SECTION.update(root.resolve("docs/BENCHMARKS.md"), report.markdown());
            Workspace.log("updated " + root.resolve("docs/BENCHMARKS.md"));
        }
        System.out.println(report.markdown());
    }


    private static String firstLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).replace('|', '/');
    }
}
