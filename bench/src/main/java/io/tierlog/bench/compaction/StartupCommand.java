package io.tierlog.bench.compaction;

import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.MachineInfo;
import io.tierlog.bench.compare.ManagedProcess;
import io.tierlog.bench.compare.Ports;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.Workspace;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import org.apache.kafka.common.utils.Utils;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code compaction-startup}: the start-up time of the index-service (process start to {@code /q/health/ready}) with
 * many group commits in {@code __consumer_offsets}, before and after the commit log is compacted
 * (docs/BENCHMARKS.md, "Compaction"). The service folds the commit log into memory before it is ready, so without
 * compaction its start grows with every commit ever made, and with it with the live (group, topic, partition) keys.
 *
 * <p>One volume gets {@code --commits} offset commits, {@code --partitions} at a time (one commit request naming
 * every partition of one topic), with tiering (and so compaction) off: appended to the stopped volume's commit log in
 * the service's record format ({@code --fill direct}, the default; the service then reads a group's offsets back), or
 * over HTTP ({@code PUT /v1/groups/{g}/offsets}, about 900 commits/s on the loaded 2-core machine).
 * A copy of it is then served with tiering and compaction on until its sealed commit segments are tiered and
 * cleaned on both tiers. Then the service is restarted {@code --restarts} times on each volume, and on an empty one
 * for the fixed cost of a start, in turn, so that the machine's load falls alike on all three. Every measured start
 * has tiering off (no background pass competes with the start) and the same JVM settings as the other benchmarks.
 */
@Command(name = "compaction-startup", mixinStandardHelpOptions = true,
        description = "Start-up time of the index-service with many group commits, before and after compaction.")
public final class StartupCommand implements Callable<Integer> {
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(10);
    private static final String OFFSETS = "__consumer_offsets";

    @Option(names = "--commits", defaultValue = "1000000", description = "offset commits (default ${DEFAULT-VALUE})")
    int commits;

    @Option(names = "--groups", defaultValue = "10", description = "consumer groups (default ${DEFAULT-VALUE})")
    int groups;

    @Option(names = "--partitions", defaultValue = "100",
            description = "partitions of the committed topic, i.e. commits per request (default ${DEFAULT-VALUE})")
    int partitions;

    @Option(names = "--threads", defaultValue = "4", description = "committing threads (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--restarts", defaultValue = "3", description = "measured starts per case (default ${DEFAULT-VALUE})")
    int restarts;

    @Option(names = "--segment-bytes", defaultValue = "1048576",
            description = "segment.bytes of __consumer_offsets, so the commits seal segments (default ${DEFAULT-VALUE})")
    long segmentBytes;

    @Option(names = "--fill", defaultValue = "direct",
            description = "direct: the commit records are appended to the stopped volume's commit log in the service's "
                    + "format; http: PUT /v1/groups/{g}/offsets (slow on a loaded machine) (default ${DEFAULT-VALUE})")
    String fillMode;

    @Option(names = "--work-dir", description = "work directory (default: a new temporary one, deleted at the end)")
    Path workDir;

    private Path runJar;
    private int started;
    private final Map<ManagedProcess, Integer> ports = new HashMap<>();

    @Override
    public Integer call() throws Exception {
        Path root = Workspace.findRepo();
        runJar = root.resolve("index-service/target/quarkus-app/quarkus-run.jar");
        TierlogService.requireBuilt(runJar, "");
        Path work = workDir != null ? workDir : Files.createTempDirectory("tierlog-bench-startup-");
        try (LoadSampler load = LoadSampler.start()) {
            Path plain = work.resolve("uncompacted");
            Path compacted = work.resolve("compacted");
            Path empty = work.resolve("empty");
            long fillNanos = fill(plain);
            copyTree(plain, compacted);
            long compactNanos = compact(compacted);
            stop(start(empty, false)); // creates the empty volume's internal topics; not measured

            List<Long> plainStarts = new ArrayList<>();
            List<Long> compactedStarts = new ArrayList<>();
            List<Long> emptyStarts = new ArrayList<>();
            List<String> loads = new ArrayList<>();
            for (int r = 0; r < restarts; r++) {
                loads.add(MachineInfo.loadAverage());
                plainStarts.add(timedStart(plain));
                compactedStarts.add(timedStart(compacted));
                emptyStarts.add(timedStart(empty));
            }
            print(fillNanos, compactNanos, offsetsBytes(plain), offsetsBytes(compacted), plainStarts,
                    compactedStarts, emptyStarts, loads, load.summary());
        } finally {
            if (workDir == null) {
                Workspace.deleteTree(work);
            }
        }
        return 0;
    }

    /** A volume with a topic of {@code --partitions} partitions and {@code --commits} commits of its offsets. */
    private long fill(Path dir) throws Exception {
        Workspace.log("startup: creating the volume");
        ManagedProcess first = start(dir, false);
        URI base = baseOf(first);
        HttpClient http = HttpClient.newHttpClient();
        send(http, HttpRequest.newBuilder(base.resolve("/v1/topics")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"src\",\"partitions\":" + partitions + "}")), 201);
        StringBuilder records = new StringBuilder("{\"records\":[");
        for (int p = 0; p < partitions; p++) {
            records.append(p == 0 ? "" : ",").append("{\"partition\":").append(p).append(",\"value\":1}");
        }
        send(http, HttpRequest.newBuilder(base.resolve("/v1/topics/src/records"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(records.append("]}").toString())), 200);
        stop(first);
        // Small segments, so the commit log seals segments the cleaner may compact (the service keeps the rest).
        new TopicStore(dir.resolve("hot"), Clock.systemUTC()).updateConfig(OFFSETS,
                Map.of(TopicConfig.SEGMENT_BYTES, segmentBytes));

        int requests = (commits + partitions - 1) / partitions;
        if (fillMode.equals("direct")) {
            long t0 = System.nanoTime();
            appendCommits(dir.resolve("hot"), requests);
            long nanos = System.nanoTime() - t0;
            // The service reads them back as commits (and indexes them) before the volume is measured.
            ManagedProcess check = start(dir, false);
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    baseOf(check).resolve("/v1/groups/g0/offsets")).build(), HttpResponse.BodyHandlers.ofString());
            int committed = r.body().split("\"partition\"").length - 1;
            stop(check);
            if (r.statusCode() != 200 || committed != partitions) {
                throw new IllegalStateException("the service does not read the appended commits: " + r.body());
            }
            return nanos;
        }
        ManagedProcess service = start(dir, false);
        URI groupsBase = baseOf(service);
        Workspace.log("startup: " + commits + " commits in " + requests + " requests");
        AtomicLong next = new AtomicLong();
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    HttpClient client = HttpClient.newHttpClient();
                    for (long i = next.getAndIncrement(); i < requests; i = next.getAndIncrement()) {
                        long offset = (i / groups) % 2; // each partition holds one record: offsets 0 and 1
                        StringBuilder body = new StringBuilder("{\"offsets\":[");
                        for (int p = 0; p < partitions; p++) {
                            body.append(p == 0 ? "" : ",").append("{\"topic\":\"src\",\"partition\":").append(p)
                                    .append(",\"offset\":").append(offset).append('}');
                        }
                        send(client, HttpRequest.newBuilder(groupsBase.resolve("/v1/groups/g" + (i % groups)
                                + "/offsets")).header("Content-Type", "application/json")
                                .PUT(HttpRequest.BodyPublishers.ofString(body.append("]}").toString())), 204);
                        if (i % 1000 == 0) {
                            Workspace.log("startup: " + i + " of " + requests + " commit requests");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        long fillNanos = System.nanoTime() - t0;
        stop(service);
        return fillNanos;
    }

    /**
     * Appends the commits to the stopped volume's {@code __consumer_offsets} as the service's {@code GroupOffsets}
     * writes them: key {@code group \0 topic \0 partition}, value {@code {"offset":N,"commitTimestamp":ms}}, all of a
     * group's commits in partition {@code murmur2(group) % partitions}, one batch per request.
     */
    private void appendCommits(Path hot, int requests) throws Exception {
        Workspace.log("startup: appending " + commits + " commits in " + requests + " batches");
        Clock clock = Clock.systemUTC();
        TopicStore topics = new TopicStore(hot, clock);
        TopicMetadata offsets = topics.get(OFFSETS);
        Map<Integer, PartitionWriter> writers = new HashMap<>();
        try {
            for (long i = 0; i < requests; i++) {
                String group = "g" + (i % groups);
                int target = Utils.toPositive(Utils.murmur2(group.getBytes(StandardCharsets.UTF_8))) % offsets.partitions();
                PartitionWriter w = writers.computeIfAbsent(target, p -> new HotLog(hot).writer(
                        new TopicPartition(OFFSETS, p), FsyncPolicy.NEVER, Duration.ZERO, clock));
                long now = clock.millis();
                long offset = (i / groups) % 2;
                List<AppendRecord> batch = new ArrayList<>(partitions);
                for (int p = 0; p < partitions; p++) {
                    batch.add(new AppendRecord((group + "\0src\0" + p).getBytes(StandardCharsets.UTF_8),
                            ("{\"offset\":" + offset + ",\"commitTimestamp\":" + now + "}")
                                    .getBytes(StandardCharsets.UTF_8), List.of(), now));
                }
                w.append(batch, ProducerIdentity.NONE, offsets.config());
            }
        } finally {
            for (PartitionWriter w : writers.values()) {
                w.close();
            }
        }
    }

    /** Serves the volume with tiering and compaction on until the commit log's sealed segments are cleaned. */
    private long compact(Path dir) throws Exception {
        Workspace.log("startup: compacting " + OFFSETS);
        long t0 = System.nanoTime();
        ManagedProcess service = start(dir, true);
        URI metrics = baseOf(service).resolve("/q/metrics");
        HttpClient http = HttpClient.newHttpClient();
        double passesWhenTiered = -1;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        while (true) {
            String text = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
                    .body();
            double pending = metric(text, "tierlog_tiering_pending_segments");
            double passes = metric(text, "tierlog_cold_compaction_passes_total");
            // The gauge reads 0 before the first tiering pass too: wait for uploads (the commits sealed segments).
            if (pending == 0 && passesWhenTiered < 0 && metric(text, "tierlog_tiering_uploaded_segments_total") > 0) {
                passesWhenTiered = passes;
            }
            // Two whole passes (hot, then cold) after everything sealed was tiered: every cleanable segment cleaned.
            if (passesWhenTiered >= 0 && passes >= passesWhenTiered + 2) {
                Workspace.log("startup: compacted; hot " + metric(text, "tierlog_compaction_cleaned_bytes_total")
                        + " bytes cleaned, cold " + metric(text, "tierlog_cold_compaction_cleaned_bytes_total"));
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("compaction did not finish within 20 minutes; log "
                        + service.logFile());
            }
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
        }
        long nanos = System.nanoTime() - t0;
        stop(service);
        return nanos;
    }

    private long timedStart(Path dir) {
        long t0 = System.nanoTime();
        ManagedProcess p = start(dir, false);
        long nanos = System.nanoTime() - t0;
        stop(p);
        return nanos;
    }

    /** Starts the service on {@code dir} (cold tier on the filesystem beside it) and waits until it is ready. */
    private ManagedProcess start(Path dir, boolean tiering) {
        int port = Ports.freeLoopbackPort();
        List<String> cmd = TierlogService.jvmCommand(port, dir.resolve("hot"), dir.resolve("index"));
        cmd.addAll(List.of("-Dtierlog.fsync=never",
                "-Dtierlog.cold.store=filesystem",
                "-Dtierlog.cold.filesystem.dir=" + dir.resolve("cold").toAbsolutePath(),
                "-Dtierlog.tiering.enabled=" + tiering,
                "-Dtierlog.tiering.interval=1s",
                "-Dtierlog.retention.check-interval=1s",
                "-jar", runJar.toAbsolutePath().toString()));
        ManagedProcess p = ManagedProcess.start("tierlog-" + dir.getFileName() + "-" + started++, cmd, dir,
                dir.resolve("service.log"));
        try {
            p.awaitHttpOk(URI.create("http://127.0.0.1:" + port + "/q/health/ready"), READY_TIMEOUT);
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
        ports.put(p, port);
        return p;
    }

    private URI baseOf(ManagedProcess p) {
        return URI.create("http://127.0.0.1:" + ports.get(p));
    }

    private void stop(ManagedProcess p) {
        p.close();
        ports.remove(p);
    }

    private static void send(HttpClient http, HttpRequest.Builder request, int status) {
        try {
            HttpResponse<String> r = http.send(request.timeout(Duration.ofMinutes(2)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != status) {
                throw new IllegalStateException(request.build().uri() + " answered " + r.statusCode() + ": " + r.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A meter's value in the Prometheus text (the sum over its tags); 0 if absent. */
    static double metric(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$").matcher(text);
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(2));
        }
        return sum;
    }

    /** Bytes of the commit log's hot segment files. */
    private static long offsetsBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve("hot"))) {
            return files.filter(f -> f.getParent().getFileName().toString().startsWith(OFFSETS + "-")
                            && f.getFileName().toString().endsWith(".log"))
                    .mapToLong(f -> f.toFile().length()).sum();
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path f : paths.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else if (!f.getFileName().toString().equals("service.log")) {
                    Files.copy(f, target);
                }
            }
        }
    }

    private void print(long fillNanos, long compactNanos, long plainBytes, long compactedBytes, List<Long> plain,
                       List<Long> compacted, List<Long> empty, List<String> loads, String load) {
        System.out.println();
        System.out.printf("Start-up with %,d group commits (%d groups x %d partitions of one topic) in %s; "
                        + "fill %.1f s, compaction %.1f s; load %s; /proc/loadavg before each round: %s%n%n",
                commits, groups, partitions, OFFSETS, fillNanos / 1e9, compactNanos / 1e9, load, loads);
        System.out.println("| volume | __consumer_offsets hot bytes | starts to ready (s) | median (s) | median minus empty (s) |");
        System.out.println("|---|---:|---|---:|---:|");
        double e = median(empty);
        row("empty (no commits)", -1, empty, e);
        row(String.format("%,d commits, not compacted", commits), plainBytes, plain, e);
        row(String.format("%,d commits, compacted", commits), compactedBytes, compacted, e);
        System.out.printf("%nratio of the medians, not compacted / compacted: %.2f; of the medians minus empty: %.2f%n",
                median(plain) / median(compacted), (median(plain) - e) / Math.max(1e6, median(compacted) - e));
    }

    private static void row(String name, long bytes, List<Long> starts, double empty) {
        StringBuilder all = new StringBuilder();
        for (long s : starts) {
            all.append(all.length() == 0 ? "" : ", ").append(String.format("%.2f", s / 1e9));
        }
        System.out.printf("| %s | %s | %s | %.2f | %.2f |%n", name, bytes < 0 ? "" : String.format("%,d", bytes), all,
                median(starts) / 1e9, (median(starts) - empty) / 1e9);
    }

    private static double median(List<Long> xs) {
        List<Long> sorted = xs.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }
}
