package io.tierlog.bench.scale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.RunOptions;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.bench.http.BlockingHttp;
import io.tierlog.bench.soak.ProcessProbe;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code scale}: one packaged index-service (cold tier in an embedded S3Proxy) with a 10-partition topic and
 * {@code --wide-topics} x {@code --wide-partitions} partitions (default 10 x 100 = 1,000), in one run: produce
 * throughput for a fixed time (at least one full rotation) with every request to the next partition in rotation (so
 * every partition is written),
 * then fetch throughput reading every partition back to its end, first on the 10 partitions, then on the 1,000,
 * then on the 10 again (so drift of a shared machine shows), after an unmeasured warm-up. The service's RSS, open
 * files and threads are sampled every second; the report gives each phase's peak and end. Writes
 * {@code bench/results/scale-<UTC>.md}.
 */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "Produce/fetch throughput and the service's RSS and open files with 10 vs 1,000 active "
                + "partitions, in one run (starts and stops S3Proxy and the index-service itself).")
public final class ScaleCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BUCKET = "tierlog-scale";
    private static final Duration CONNECT = Duration.ofSeconds(10);
    private static final Duration READ = Duration.ofSeconds(60);
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmmss'Z'")
            .withZone(java.time.ZoneOffset.UTC);

    @Mixin
    RunOptions run;

    @Option(names = "--seconds", defaultValue = "60", description = "Produce time per measured phase, longer when a full rotation over the phase's partitions takes longer (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup-seconds", defaultValue = "60", description = "Unmeasured produce and fetch on the 10 partitions first, then one rotation over the wide set (default: ${DEFAULT-VALUE}).")
    int warmupSeconds;

    @Option(names = "--rounds", defaultValue = "2", description = "Alternations of a 10- and a wide phase, followed by one more 10-partition phase (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--fetch-records", defaultValue = "100", description = "maxRecords of a fetch: the same page size for both sets, so fetch rates compare records, not page sizes (default: ${DEFAULT-VALUE}).")
    int fetchRecords;

    @Option(names = "--wide-topics", defaultValue = "10", description = "Topics of the wide set (default: ${DEFAULT-VALUE}).")
    int wideTopics;

    @Option(names = "--wide-partitions", defaultValue = "100", description = "Partitions per topic of the wide set (default: ${DEFAULT-VALUE}).")
    int widePartitions;

    @Option(names = "--producers", defaultValue = "4", description = "Producer threads, one request in flight each (default: ${DEFAULT-VALUE}).")
    int producers;

    @Option(names = "--readers", defaultValue = "2", description = "Reader threads (default: ${DEFAULT-VALUE}).")
    int readers;

    @Option(names = "--records-per-request", defaultValue = "100", description = "Records per produce request (default: ${DEFAULT-VALUE}).")
    int recordsPerRequest;

    @Option(names = "--value-bytes", defaultValue = "200", description = "Bytes per record value (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--heap", defaultValue = "256m", description = "The service's -Xms/-Xmx (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--gc", defaultValue = "G1", description = "The service's garbage collector: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}; G1 as the other benchmarks run it).")
    Collector gc;

    /** The collectors a small service may run; their own native memory differs by tens of MiB (docs/RELIABILITY.md). */
    enum Collector {
        G1("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"),
        PARALLEL("-XX:+UseParallelGC"),
        SERIAL("-XX:+UseSerialGC");

        final List<String> flags;

        Collector(String... flags) {
            this.flags = List.of(flags);
        }
    }

    /** One partition of the benchmark. */
    record Target(String topic, int partition) {
    }

    /** What one phase measured. */
    record Phase(String name, int partitions, long produced, double produceSeconds, long read, double readSeconds,
                 long errors, double rssPeakMib, double rssEndMib, long filesPeak, long filesEnd, long threadsPeak,
                 double loadStart, double loadEnd) {
        double producePerSecond() {
            return produced / produceSeconds;
        }

        double readPerSecond() {
            return read / readSeconds;
        }
    }

    @Override
    public Integer call() throws Exception {
        Path repo = run.repo();
        Path work = run.createWorkDir("tierlog-scale");
        Instant started = Instant.now();
        Map<String, String> machine = MachineInfo.describe(work);
        Path runJar = Workspace.copyApp(repo.resolve("index-service/target/quarkus-app"), work.resolve("app"));
        List<Phase> phases = new ArrayList<>();
        double rssIdle;
        long filesIdle;
        double rssAfterCreate;
        long filesAfterCreate;
        try (EmbeddedS3 s3 = EmbeddedS3.start(work.resolve("s3"))) {
            s3.createBucket(BUCKET);
            int port = Ports.freeLoopbackPort();
            List<String> cmd = TierlogService.jvmCommand(port, work.resolve("hot"), work.resolve("index"));
            cmd.addAll(List.of("-Xms" + heap, "-Xmx" + heap));
            cmd.removeAll(Collector.G1.flags);
            cmd.addAll(1, gc.flags);
            TierlogService.Started service = TierlogService.startWithS3Cold("tierlog-scale", cmd, port, s3.endpoint(),
                    BUCKET, "scale", runJar, work, work.resolve("index-service.log"));
            try (var process = service.process()) {
                URI base = service.baseUri();
                ProcessProbe probe = new ProcessProbe(process.pid());
                rssIdle = probe.rssBytes() / 1048576.0;
                filesIdle = probe.openFiles();
                List<Target> narrow = new ArrayList<>();
                createTopic(base, "narrow", 10);
                for (int p = 0; p < 10; p++) {
                    narrow.add(new Target("narrow", p));
                }
                List<Target> wide = new ArrayList<>();
                for (int t = 0; t < wideTopics; t++) {
                    createTopic(base, "wide-" + t, widePartitions);
                    for (int p = 0; p < widePartitions; p++) {
                        wide.add(new Target("wide-" + t, p));
                    }
                }
                rssAfterCreate = probe.rssBytes() / 1048576.0;
                filesAfterCreate = probe.openFiles();
                Workspace.log("scale: topics created; warm-up " + warmupSeconds + " s");
                // Both sets' code paths compiled before anything counts; the JIT of a loaded 2-core machine is slow.
                runPhase("warm-up 10", base, narrow, warmupSeconds, probe);
                runPhase("warm-up " + wide.size(), base, wide, 0, probe);
                for (int r = 1; r <= rounds; r++) {
                    phases.add(runPhase("10 partitions #" + r, base, narrow, seconds, probe));
                    phases.add(runPhase(wide.size() + " partitions #" + r, base, wide, seconds, probe));
                }
                phases.add(runPhase("10 partitions #" + (rounds + 1), base, narrow, seconds, probe));
            }
        } finally {
            if (run.deleteWorkDir()) {
                Workspace.deleteTree(work);
            }
        }
        String report = report(started, machine, rssIdle, filesIdle, rssAfterCreate, filesAfterCreate, phases);
        Path out = Files.createDirectories(repo.resolve("bench/results")).resolve("scale-" + STAMP.format(started) + ".md");
        Files.writeString(out, report);
        System.out.println(report);
        Workspace.log("scale: wrote " + out);
        return 0;
    }

    private static void createTopic(URI base, String name, int partitions) throws Exception {
        String body = "{\"name\":\"" + name + "\",\"partitions\":" + partitions + "}";
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/v1/topics"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException("create topic " + name + " answered " + r.statusCode() + ": " + r.body());
        }
    }

    /** Produces for {@code seconds} over {@code targets} in rotation, then reads every one of them to its end. */
    private Phase runPhase(String name, URI base, List<Target> targets, int seconds, ProcessProbe probe)
            throws Exception {
        double loadStart = ProcessProbe.loadAverage1();
        long[] startOffsets = new long[targets.size()];
        for (int i = 0; i < targets.size(); i++) {
            startOffsets[i] = highWatermark(base, targets.get(i));
        }
        Peak peak = new Peak(probe);
        peak.start();
        AtomicLong produced = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicInteger next = new AtomicInteger();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        // Every partition of the set is written: the phase goes on past its time until a full rotation is done.
        int rotation = targets.size();
        String value = "\"" + "v".repeat(Math.max(1, valueBytes - 2)) + "\"";
        StringBuilder records = new StringBuilder();
        for (int i = 0; i < recordsPerRequest; i++) {
            records.append(i == 0 ? "" : ",").append("{\"value\":").append(value).append('}');
        }
        long t0 = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            Thread t = new Thread(() -> {
                while (true) {
                    int k = next.getAndIncrement();
                    if (System.nanoTime() >= end && k >= rotation) {
                        break;
                    }
                    Target target = targets.get(Math.floorMod(k, targets.size()));
                    byte[] body = ("{\"records\":[" + records.toString().replace("{\"value\"",
                            "{\"partition\":" + target.partition() + ",\"value\"") + "]}")
                            .getBytes(StandardCharsets.US_ASCII);
                    try {
                        BlockingHttp.Posted r = BlockingHttp.post(base.resolve("/v1/topics/" + target.topic() + "/records"),
                                "application/json", body, 0, body.length, CONNECT, READ);
                        if (r.status() == 200) {
                            produced.addAndGet(recordsPerRequest);
                        } else {
                            errors.incrementAndGet();
                            Workspace.log("scale: produce answered " + r.status() + ": " + r.bodyText());
                        }
                    } catch (IOException e) {
                        errors.incrementAndGet();
                        Workspace.log("scale: produce failed: " + e);
                    }
                }
            }, "scale-producer-" + i);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        double produceSeconds = (System.nanoTime() - t0) / 1e9;
        // read back everything this phase wrote, partitions shared out among the readers
        AtomicLong read = new AtomicLong();
        AtomicInteger nextTarget = new AtomicInteger();
        long r0 = System.nanoTime();
        threads.clear();
        for (int i = 0; i < readers; i++) {
            Thread t = new Thread(() -> {
                for (int k = nextTarget.getAndIncrement(); k < targets.size(); k = nextTarget.getAndIncrement()) {
                    try {
                        read.addAndGet(readToEnd(base, targets.get(k), startOffsets[k], fetchRecords));
                    } catch (IOException | RuntimeException e) {
                        errors.incrementAndGet();
                        Workspace.log("scale: read of " + targets.get(k) + " failed: " + e);
                    }
                }
            }, "scale-reader-" + i);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        double readSeconds = (System.nanoTime() - r0) / 1e9;
        peak.stop();
        Phase phase = new Phase(name, targets.size(), produced.get(), produceSeconds, read.get(), readSeconds,
                errors.get(), peak.rssPeakMib, probe.rssBytes() / 1048576.0, peak.filesPeak, probe.openFiles(),
                peak.threadsPeak, loadStart, ProcessProbe.loadAverage1());
        if (phase.read() != phase.produced()) {
            Workspace.log("scale: " + name + " read " + phase.read() + " records of " + phase.produced() + " produced");
        }
        Workspace.log(String.format(Locale.ROOT, "scale: %s: produce %.0f rec/s, fetch %.0f rec/s, RSS peak %.0f MiB, "
                        + "files peak %d, errors %d", name, phase.producePerSecond(), phase.readPerSecond(),
                phase.rssPeakMib(), phase.filesPeak(), phase.errors()));
        return phase;
    }

    private static long highWatermark(URI base, Target t) throws IOException {
        try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/v1/topics/" + t.topic() + "/partitions/"
                + t.partition() + "/offsets?at=latest"), CONNECT, READ)) {
            JsonNode n = JSON.readTree(r.bytes());
            if (r.status() != 200) {
                throw new IOException("offsets of " + t + " answered " + r.status() + ": " + n);
            }
            return n.path("offset").asLong();
        }
    }

    /** Fetches {@code t} from {@code offset} until a page reaches the high watermark; returns the records read. */
    private static long readToEnd(URI base, Target t, long offset, int maxRecords) throws IOException {
        long n = 0;
        while (true) {
            try (BlockingHttp.Response r = BlockingHttp.get(base.resolve("/v1/topics/" + t.topic() + "/partitions/"
                    + t.partition() + "/records?offset=" + offset + "&maxRecords=" + maxRecords), CONNECT, READ)) {
                JsonNode page = JSON.readTree(r.bytes());
                if (r.status() != 200) {
                    throw new IOException("fetch of " + t + " answered " + r.status() + ": " + page);
                }
                n += page.path("records").size();
                offset = page.path("nextOffset").asLong();
                if (offset >= page.path("highWatermark").asLong()) {
                    return n;
                }
            }
        }
    }

    /** Samples RSS, open files and threads every second and keeps the peaks. */
    private static final class Peak {
        private final ProcessProbe probe;
        private volatile boolean running = true;
        private final Thread thread;
        volatile double rssPeakMib;
        volatile long filesPeak;
        volatile long threadsPeak;

        Peak(ProcessProbe probe) {
            this.probe = probe;
            this.thread = new Thread(() -> {
                while (running) {
                    sample();
                    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
                }
            }, "scale-peak");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
            sample();
        }

        private void sample() {
            rssPeakMib = Math.max(rssPeakMib, probe.rssBytes() / 1048576.0);
            filesPeak = Math.max(filesPeak, probe.openFiles());
            threadsPeak = Math.max(threadsPeak, probe.threads());
        }
    }

    private String report(Instant started, Map<String, String> machine, double rssIdle, long filesIdle,
                          double rssAfterCreate, long filesAfterCreate, List<Phase> phases) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Scale ").append(started.truncatedTo(ChronoUnit.SECONDS)).append("\n\n");
        sb.append(String.format(Locale.ROOT, "One index-service (heap %s, %s, MALLOC_ARENA_MAX %s, fsync always, cold tier S3Proxy), topics: "
                        + "`narrow` (10 partitions) and %d x %d partitions. Each phase: %d producer(s) with one request in "
                        + "flight each, %d records of %d bytes per request, every request to the next partition in "
                        + "rotation, for %d s or until every partition of the set got a request, whichever is later; then %d reader(s) fetch (maxRecords %d) every partition of the phase back "
                        + "to its end. Warm-up (not reported): %d s on the 10 partitions, then one rotation over the wide set. "
                        + "Phases: 10 and wide alternating, %d round(s), then 10 once more.%n%n", heap, gc,
                TierlogService.DEPLOYED_ENVIRONMENT.get("MALLOC_ARENA_MAX"), wideTopics,
                widePartitions, producers, recordsPerRequest, valueBytes, seconds, readers, fetchRecords, warmupSeconds,
                rounds));
        sb.append("Machine: ");
        machine.forEach((k, v) -> {
            if (!k.startsWith("fsync")) {
                sb.append(k).append(" = ").append(v.replace('\n', ' ')).append("; ");
            }
        });
        sb.append(String.format(Locale.ROOT, "%n%nService at start: RSS %.0f MiB, %d open files; after creating the "
                + "topics: RSS %.0f MiB, %d open files.%n%n", rssIdle, filesIdle, rssAfterCreate, filesAfterCreate));
        sb.append("| phase | partitions | produced | produce rec/s | fetch rec/s | RSS peak MiB | RSS end MiB | open files peak | open files end | threads peak | errors | load avg start/end |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Phase p : phases) {
            sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %.0f | %.0f | %.0f | %.0f | %d | %d | %d | %d | %.1f / %.1f |%n",
                    p.name(), p.partitions(), p.produced(), p.producePerSecond(), p.readPerSecond(), p.rssPeakMib(),
                    p.rssEndMib(), p.filesPeak(), p.filesEnd(), p.threadsPeak(), p.errors(), p.loadStart(), p.loadEnd()));
        }
        List<Phase> narrowPhases = phases.stream().filter(p -> p.partitions() == 10).toList();
        List<Phase> widePhases = phases.stream().filter(p -> p.partitions() != 10).toList();
        if (!narrowPhases.isEmpty() && !widePhases.isEmpty()) {
            double np = narrowPhases.stream().mapToDouble(Phase::producePerSecond).average().orElseThrow();
            double nr = narrowPhases.stream().mapToDouble(Phase::readPerSecond).average().orElseThrow();
            double wp = widePhases.stream().mapToDouble(Phase::producePerSecond).average().orElseThrow();
            double wr = widePhases.stream().mapToDouble(Phase::readPerSecond).average().orElseThrow();
            sb.append(String.format(Locale.ROOT, "%nMeans: 10 partitions produce %.0f rec/s, fetch %.0f rec/s; %d "
                            + "partitions produce %.0f rec/s, fetch %.0f rec/s. Ratio %d / 10: produce %.2f, fetch %.2f.%n",
                    np, nr, widePhases.get(0).partitions(), wp, wr, widePhases.get(0).partitions(), wp / np, wr / nr));
        }
        return sb.toString();
    }
}
