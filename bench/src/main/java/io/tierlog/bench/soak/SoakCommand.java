package io.tierlog.bench.soak;

import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.RunOptions;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.Workspace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
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
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * {@code soak}: the packaged index-service under steady mixed load for a long time (default 30 minutes), with the
 * cold tier in an embedded S3Proxy, sampled every 10 s (RSS, heap, heap after GC, direct memory, open files,
 * threads, p99 latencies, rates) into {@code bench/results/soak-<UTC>.csv}; at the end the producers stop, the
 * tail reader must read back every acknowledged record, and {@code soak-<UTC>.md} gets the trend of each figure
 * over the last {@code --trend-minutes}. {@code bench/soak-plot.py} draws the CSV.
 *
 * <p>Every {@code --full-gc-seconds} the sampler asks the service for a full collection ({@code jcmd GC.run}):
 * the heap right after one is the live set, the figure a leak grows; after young collections it also holds old
 * garbage that the next concurrent cycle would free, a sawtooth that hides or fakes a trend.
 */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = "Long steady produce/fetch/long-poll/stream load with tiering to S3, sampling the service "
                + "every 10 s (starts and stops S3Proxy and the index-service itself).")
public final class SoakCommand implements Callable<Integer> {
    private static final String BUCKET = "tierlog-soak";
    private static final String TOPIC = "soak";
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmmss'Z'")
            .withZone(java.time.ZoneOffset.UTC);

    @Mixin
    RunOptions run;

    @Option(names = "--minutes", defaultValue = "30", description = "Length of the load (default: ${DEFAULT-VALUE}).")
    double minutes;

    @Option(names = "--trend-minutes", defaultValue = "20", description = "The window at the end whose trend is judged (default: ${DEFAULT-VALUE}).")
    double trendMinutes;

    @Option(names = "--sample-seconds", defaultValue = "10", description = "Sampling interval (default: ${DEFAULT-VALUE}).")
    int sampleSeconds;

    @Option(names = "--full-gc-seconds", defaultValue = "60", description = "A full GC (jcmd GC.run) this often for the live set; 0: never (default: ${DEFAULT-VALUE}).")
    int fullGcSeconds;

    @Option(names = "--partitions", defaultValue = "4", description = "Partitions of the soak topic (default: ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--producers", defaultValue = "2", description = "Producer threads (default: ${DEFAULT-VALUE}).")
    int producers;

    @Option(names = "--requests-per-second", defaultValue = "10", description = "Produce requests per second per producer (default: ${DEFAULT-VALUE}).")
    double requestsPerSecond;

    @Option(names = "--records-per-request", defaultValue = "100", description = "Records per produce request (default: ${DEFAULT-VALUE}).")
    int recordsPerRequest;

    @Option(names = "--value-bytes", defaultValue = "200", description = "Bytes per record value (default: ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--long-pollers", defaultValue = "1", description = "Long-poll readers (default: ${DEFAULT-VALUE}).")
    int longPollers;

    @Option(names = "--streams", defaultValue = "1", description = "SSE stream readers (default: ${DEFAULT-VALUE}).")
    int streams;

    @Option(names = "--segment-bytes", defaultValue = "1048576", description = "segment.bytes of the topic: small, so segments roll, tier and are evicted all the time (default: ${DEFAULT-VALUE}).")
    long segmentBytes;

    @Option(names = "--nmt", description = "Start the service with -XX:NativeMemoryTracking=summary and record its categories with each full GC.")
    boolean nmt;

    @Option(names = "--heap", defaultValue = "512m", description = "The service's -Xms/-Xmx (default: ${DEFAULT-VALUE}).")
    String heap;

    @Override
    public Integer call() throws Exception {
        Path repo = run.repo();
        Path work = run.createWorkDir("tierlog-soak");
        Instant started = Instant.now();
        String stamp = STAMP.format(started);
        Path results = Files.createDirectories(repo.resolve("bench/results"));
        Path csv = results.resolve("soak-" + stamp + ".csv");
        Path summary = results.resolve("soak-" + stamp + ".md");
        Map<String, String> machine = MachineInfo.describe(work);
        Workspace.log("soak: work dir " + work + ", CSV " + csv);
        Path runJar = Workspace.copyApp(repo.resolve("index-service/target/quarkus-app"), work.resolve("app"));
        Path gcLogFile = work.resolve("gc.log");
        List<Sample> samples = new ArrayList<>();
        String readBack;
        Map<String, Long> errorKinds;
        String finalState;
        long produced;
        try (EmbeddedS3 s3 = EmbeddedS3.start(work.resolve("s3"))) {
            s3.createBucket(BUCKET);
            int port = Ports.freeLoopbackPort();
            List<String> cmd = TierlogService.jvmCommand(port, work.resolve("hot"), work.resolve("index"));
            if (nmt) {
                cmd.add("-XX:NativeMemoryTracking=summary");
            }
            cmd.addAll(List.of("-Xms" + heap, "-Xmx" + heap, "-Xlog:gc:file=" + gcLogFile,
                    "-Dtierlog.tiering.interval=2s", "-Dtierlog.retention.check-interval=5s"));
            TierlogService.Started service = TierlogService.startWithS3Cold("tierlog-soak", cmd, port, s3.endpoint(),
                    BUCKET, "soak", runJar, work, work.resolve("index-service.log"));
            try (var process = service.process()) {
                URI base = service.baseUri();
                createTopic(base);
                SoakLoad load = new SoakLoad(base, TOPIC, new SoakLoad.Settings(partitions, producers,
                        requestsPerSecond, recordsPerRequest, valueBytes, longPollers, streams, true));
                Sampler sampler = new Sampler(base, process.pid(), new GcLog(gcLogFile), load,
                        work.resolve("s3").resolve(BUCKET));
                load.start();
                long t0 = System.nanoTime();
                long end = t0 + (long) (minutes * 60e9);
                long nextFullGc = fullGcSeconds > 0 ? t0 + TimeUnit.SECONDS.toNanos(fullGcSeconds) : Long.MAX_VALUE;
                try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(csv, StandardCharsets.UTF_8))) {
                    out.println(Sample.CSV_HEADER);
                    for (long next = t0 + TimeUnit.SECONDS.toNanos(sampleSeconds); next <= end;
                         next += TimeUnit.SECONDS.toNanos(sampleSeconds)) {
                        LockSupport.parkNanos(next - System.nanoTime());
                        if (!process.isAlive()) {
                            throw new IllegalStateException("the service died; log:\n" + process.logTail(40));
                        }
                        if (System.nanoTime() >= nextFullGc) {
                            fullGc(process.pid());
                            nextFullGc += TimeUnit.SECONDS.toNanos(fullGcSeconds);
                            if (nmt) {
                                sampler.nativeMemory(NativeMemory.committedMib(process.pid()));
                            }
                        }
                        Sample s = sampler.sample((System.nanoTime() - t0) / 1e9);
                        samples.add(s);
                        out.println(s.csv());
                        out.flush();
                        if (samples.size() % 6 == 0) {
                            Workspace.log(String.format(Locale.ROOT, "soak %.0fs: rss %.0f MiB, live %.0f MiB, "
                                            + "files %d, threads %d, %.0f rec/s, p99 %.1f ms, errors %d, load %.1f",
                                    s.elapsedSeconds(), s.rssMib(), s.liveAfterFullGcMib(), s.openFiles(), s.threads(),
                                    s.producedPerSecond(), s.produceP99Ms(), s.errors(), s.load1()));
                        }
                    }
                }
                load.stopProducing();
                boolean caughtUp = load.awaitTailCaughtUp(Duration.ofMinutes(3));
                load.stopAll();
                produced = load.acked.total();
                readBack = readBack(load, caughtUp);
                errorKinds = new java.util.TreeMap<>();
                load.errorKinds.forEach((k, v) -> errorKinds.put(k, v.sum()));
                finalState = describe(base);
            }
        } finally {
            if (run.deleteWorkDir()) {
                Workspace.deleteTree(work);
            }
        }
        String text = summary(machine, started, samples, produced, readBack, errorKinds, finalState, csv, repo);
        Files.writeString(summary, text);
        System.out.println(text);
        Workspace.log("soak: wrote " + csv + " and " + summary);
        return readBack.startsWith("OK") ? 0 : 1;
    }

    private void createTopic(URI base) throws Exception {
        String body = "{\"name\":\"" + TOPIC + "\",\"partitions\":" + partitions + ",\"config\":{\"segment.bytes\":"
                + segmentBytes + ",\"local.retention.ms\":0,\"local.retention.bytes\":0}}";
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/v1/topics"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException("create topic answered " + r.statusCode() + ": " + r.body());
        }
    }

    private static String describe(URI base) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/v1/topics/" + TOPIC)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "(describe failed: " + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    /** {@code jcmd <pid> GC.run}: a full collection in the service, whose result the GC log shows. */
    static void fullGc(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            Workspace.log("soak: jcmd GC.run failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String readBack(SoakLoad load, boolean caughtUp) {
        StringBuilder sb = new StringBuilder();
        boolean ok = caughtUp;
        for (int p = 0; p < load.acked.partitions(); p++) {
            boolean same = load.acked.count(p) == load.read.count(p) && load.acked.sum(p) == load.read.sum(p);
            ok &= same;
            sb.append(String.format(Locale.ROOT, "partition %d: %d acknowledged, %d read back, checksums %s%n", p,
                    load.acked.count(p), load.read.count(p), same ? "equal" : "DIFFER"));
        }
        return (ok ? "OK: every acknowledged record was read back at its offset with its value\n"
                : "FAILED" + (caughtUp ? "" : " (the tail reader did not catch up within 3 minutes)") + "\n") + sb;
    }

    private String summary(Map<String, String> machine, Instant started, List<Sample> samples, long produced,
                           String readBack, Map<String, Long> errorKinds, String finalState, Path csv, Path repo) {
        double total = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).elapsedSeconds();
        double from = total - trendMinutes * 60;
        List<Sample> window = samples.stream().filter(s -> s.elapsedSeconds() >= from).toList();
        StringBuilder sb = new StringBuilder();
        sb.append("# Soak ").append(started.truncatedTo(ChronoUnit.SECONDS)).append("\n\n");
        sb.append(String.format(Locale.ROOT, "Load for %.0f s: %d producers x %.1f requests/s x %d records of %d bytes "
                        + "over %d partitions (segment.bytes %d, local retention 0, tiering to S3Proxy), 1 tail reader, "
                        + "1 replay reader of old (cold) offsets, %d long-poller(s), %d SSE stream(s); service heap %s, "
                        + "full GC every %d s; CSV %s.%n%n", total, producers, requestsPerSecond, recordsPerRequest,
                valueBytes, partitions, segmentBytes, longPollers, streams, heap, fullGcSeconds,
                repo.relativize(csv)));
        sb.append("Machine: ");
        machine.forEach((k, v) -> {
            if (!k.startsWith("fsync")) {
                sb.append(k).append(" = ").append(v.replace('\n', ' ')).append("; ");
            }
        });
        sb.append("\n\n");
        Trend load = Trend.of(samples, Sample::elapsedSeconds, Sample::load1);
        sb.append(String.format(Locale.ROOT, "Load average (1 min) during the run: min %.1f, max %.1f, mean of samples %.1f.%n%n",
                load.min(), load.max(), samples.stream().mapToDouble(Sample::load1).average().orElse(Double.NaN)));
        sb.append(String.format(Locale.ROOT, "Trend over the last %.0f minutes (samples from %.0f s on):%n%n", trendMinutes, Math.max(0, from)));
        sb.append("| figure | samples | first | last | min | max | slope |\n|---|---|---|---|---|---|---|\n");
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::rssMib).row("RSS (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::rssHeapMappingMib).row("RSS of the heap (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, s -> s.rssHeapMappingMib() < 0 || Double.isNaN(s.rssHeapMappingMib())
                ? Double.NaN : s.rssMib() - s.rssHeapMappingMib()).row("RSS outside the heap (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::liveAfterFullGcMib).row("heap after full GC (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::heapAfterGcMib).row("heap after any GC (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::heapUsedMib).row("heap used (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::directMib).row("direct buffers (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nettyDirectMib).row("Netty direct (MiB)", "MiB")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, s -> s.openFiles()).row("open files", "files")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, s -> s.threads()).row("threads", "threads")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::produceP99Ms).row("produce p99 (ms)", "ms")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::fetchP99Ms).row("fetch p99 (ms)", "ms")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::producedPerSecond).row("produced records/s", "rec/s")).append('\n');
        sb.append(Trend.of(window, Sample::elapsedSeconds, s -> s.s3Objects()).row("S3 objects", "objects")).append('\n');
        if (nmt) {
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtNonHeapMib).row("NMT: all but the heap (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtCodeMib).row("NMT: code cache (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtClassMib).row("NMT: class metadata (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtThreadMib).row("NMT: thread stacks (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtGcMib).row("NMT: GC (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtOtherMib).row("NMT: other (direct, MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, Sample::nmtMallocLikeMib).row("NMT: internal+symbol+arena (MiB)", "MiB")).append('\n');
            sb.append(Trend.of(window, Sample::elapsedSeconds, s -> s.rssMib() - s.nmtNonHeapMib())
                    .row("RSS - NMT non-heap: touched heap + native memory outside NMT (MiB)", "MiB")).append('\n');
        }
        sb.append(String.format(Locale.ROOT, "%nRecords produced and acknowledged: %d. Read-back: %s%n", produced, readBack));
        long serverErrors = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).serverErrors();
        sb.append("5xx answers: ").append(serverErrors).append(". Errors by kind: ")
                .append(errorKinds.isEmpty() ? "none" : errorKinds.toString()).append("\n\n");
        sb.append("Topic at the end: `").append(finalState).append("`\n");
        return sb.toString();
    }

    /** Takes one {@link Sample} from the service and the load. Used from the sampling thread only. */
    static final class Sampler {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final URI metrics;
        private final ProcessProbe probe;
        private final GcLog gcLog;
        private final SoakLoad load;
        private final Path s3Bucket;
        private final SoakLoad.Delta produced = new SoakLoad.Delta();
        private final SoakLoad.Delta tail = new SoakLoad.Delta();
        private final SoakLoad.Delta replay = new SoakLoad.Delta();
        private final SoakLoad.Delta longPoll = new SoakLoad.Delta();
        private final SoakLoad.Delta stream = new SoakLoad.Delta();
        private double lastElapsed;
        private double liveAfterFullGc = Double.NaN;
        private Map<String, Double> nativeMemory = Map.of();

        void nativeMemory(Map<String, Double> committedMib) {
            this.nativeMemory = committedMib;
        }

        private double nmt(String... categories) {
            double sum = 0;
            for (String c : categories) {
                Double v = nativeMemory.get(c);
                if (v == null) {
                    return Double.NaN;
                }
                sum += v;
            }
            return sum;
        }

        private long[] heapRange;

        Sampler(URI base, long pid, GcLog gcLog, SoakLoad load, Path s3Bucket) {
            this.metrics = base.resolve("/q/metrics");
            this.probe = new ProcessProbe(pid);
            this.gcLog = gcLog;
            this.load = load;
            this.s3Bucket = s3Bucket;
        }

        Sample sample(double elapsed) {
            double interval = elapsed - lastElapsed;
            lastElapsed = elapsed;
            PrometheusText prom = new PrometheusText(scrape());
            GcLog.Window gc = gcLog.next();
            if (gc.lastFullAfterBytes() >= 0) {
                liveAfterFullGc = mib(gc.lastFullAfterBytes());
            }
            return new Sample(elapsed, Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
                    mib(probe.rssBytes()), mib(prom.sum("jvm_memory_used_bytes", "area=\"heap\"")),
                    gc.lastAfterBytes() < 0 ? Double.NaN : mib(gc.lastAfterBytes()), liveAfterFullGc, gc.pauses(),
                    mib(prom.sum("jvm_buffer_memory_used_bytes", "id=\"direct\"")),
                    mib(prom.sum("netty_allocator_memory_used", "memory_type=\"direct\"")),
                    probe.openFiles(), probe.threads(),
                    SoakLoad.p99Millis(load.produceLatency), SoakLoad.p99Millis(load.fetchLatency),
                    produced.next(load.producedRecords.sum()) / interval, tail.next(load.tailRecords.sum()) / interval,
                    replay.next(load.replayRecords.sum()) / interval, longPoll.next(load.longPollRecords.sum()) / interval,
                    stream.next(load.streamRecords.sum()) / interval, load.errors.sum(), load.serverErrors.sum(),
                    countFiles(s3Bucket), ProcessProbe.loadAverage1(),
                    nmt("Total") - nmt("Java Heap"), nmt("Code"), nmt("Class"), nmt("Thread"), nmt("GC"), nmt("Other"),
                    nmt("Internal") + nmt("Symbol") + nmt("Arena Chunk"),
                    mib(probe.heapRssBytes(heapRange())));
        }

        private long[] heapRange() {
            if (heapRange == null) {
                heapRange = probe.heapRange();
            }
            return heapRange;
        }

        private String scrape() {
            try {
                return http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
            } catch (IOException e) {
                return "";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "";
            }
        }

        private static long countFiles(Path dir) {
            try (Stream<Path> files = Files.walk(dir)) {
                return files.filter(Files::isRegularFile).count();
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }

        private static double mib(double bytes) {
            return bytes < 0 || Double.isNaN(bytes) ? Double.NaN : bytes / (1 << 20);
        }
    }
}
