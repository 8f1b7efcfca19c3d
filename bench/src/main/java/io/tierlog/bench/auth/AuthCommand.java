package io.tierlog.bench.auth;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.bench.compare.ConsumeStats;
import io.tierlog.bench.compare.Durability;
import io.tierlog.bench.compare.EmbeddedS3;
import io.tierlog.bench.compare.JitWarmup;
import io.tierlog.bench.compare.LoadSampler;
import io.tierlog.bench.compare.BenchRun;
import io.tierlog.bench.compare.PackagedServiceOption;
import io.tierlog.bench.compare.Payload;
import io.tierlog.bench.compare.ProcessCpu;
import io.tierlog.bench.compare.ProduceBody;
import io.tierlog.bench.compare.ProduceSpec;
import io.tierlog.bench.compare.ProduceStats;
import io.tierlog.bench.compare.Samples;
import io.tierlog.bench.compare.TierlogService;
import io.tierlog.bench.compare.TierlogSystem;
import io.tierlog.bench.compare.Workspace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * {@code tierlog-bench auth}: what authentication costs (issue #21). Two index-services of the same build side by
 * side, one in auth mode {@code none} and one in mode {@code token}, where every request carries
 * {@code Authorization: Bearer <token>} of a minted, scoped token (the path an application takes: hash look-up,
 * expiry and scope check per request). Each run produces to and then fetches from both services at once (the same
 * workload, phase by phase), so both see the same load of a shared machine; the report gives medians and the
 * token/none ratio per row, of throughput and of the service's CPU time per record.
 */
@Command(name = "auth", mixinStandardHelpOptions = true,
        description = "Produce and fetch throughput with auth mode token (Bearer token on every request) against "
                + "mode none: one build, two services driven at once, paired trials in one run.")
public final class AuthCommand implements Callable<Integer> {
    static final String SCOPES = "create:topic:auth-* produce:topic:auth-* fetch:topic:auth-* delete:topic:auth-*";
    private static final int PARTITIONS = 8;
    private static final String CPU_UNIT = "CPU ms per 10k records (lower is better)";

    @Mixin
    PackagedServiceOption app;
    @Option(names = "--work-dir", defaultValue = "bench/target/auth", description = "Scratch directory (default: ${DEFAULT-VALUE}).")
    Path work;
    @Option(names = "--runs", defaultValue = "15", description = "Paired trials per row (default: ${DEFAULT-VALUE}).")
    int runs;
    @Option(names = "--records", defaultValue = "300000",
            description = "Records per produce trial with full requests (default: ${DEFAULT-VALUE}).")
    long records;
    @Option(names = "--small-records", defaultValue = "30000",
            description = "Records per produce trial with small requests (default: ${DEFAULT-VALUE}).")
    long smallRecords;
    @Option(names = "--batch", defaultValue = "1000", description = "Records per full request (default: ${DEFAULT-VALUE}).")
    int batch;
    @Option(names = "--small-batch", defaultValue = "10", description = "Records per small request (default: ${DEFAULT-VALUE}).")
    int smallBatch;
    @Option(names = "--producers", defaultValue = "8", description = "Concurrent producers (default: ${DEFAULT-VALUE}).")
    int producers;
    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size (default: ${DEFAULT-VALUE}).")
    int valueBytes;
    @Option(names = "--warmup-seconds", defaultValue = "120",
            description = "Longest JIT warm-up of both services (default: ${DEFAULT-VALUE}).")
    int warmupSeconds;
    @Option(names = "--keep", description = "Keep the work directory (service logs, data).")
    boolean keep;

    /** One row of the report: a workload measured on both services, one value per trial. */
    private record Row(String what, String unit, List<Double> none, List<Double> token) {
    }

    @Override
    public Integer call() throws Exception {
        BenchRun setup = BenchRun.prepare(work, app.path());
        Path repo = setup.repo();
        Path workDir = setup.workDir();
        Path runJar = setup.runJar();
        Instant started = setup.started();
        String git = setup.git();
        Map<String, String> machine = setup.machine();
        Payload payload = new Payload(valueBytes, 42);
        Map<String, Row> rows = new LinkedHashMap<>();
        String warmup;
        try (LoadSampler load = LoadSampler.start();
             EmbeddedS3 s3 = EmbeddedS3.start(workDir.resolve("s3"))) {
            s3.createBucket("bench");
            Path bootstrapFile = workDir.resolve("bootstrap-token");
            Files.writeString(bootstrapFile, randomSecret());
            try (TierlogService none = TierlogService.start(runJar, workDir.resolve("none"), Durability.NEVER, s3,
                    "bench", List.of("-Dtierlog.auth.mode=none"));
                 TierlogService token = TierlogService.start(runJar, workDir.resolve("token"), Durability.NEVER, s3,
                         "bench", List.of("-Dtierlog.auth.mode=token", "-Dtierlog.auth.bootstrap-token-file=" + bootstrapFile))) {
                String appToken = mint(token.baseUri(), Files.readString(bootstrapFile).trim());
                Workspace.log("services: none " + none.baseUri() + ", token " + token.baseUri() + "; token minted with "
                        + SCOPES);
                TierlogSystem[] systems = {
                        new TierlogSystem(none, Clock.systemUTC(), null),
                        new TierlogSystem(token, Clock.systemUTC(), appToken)};
                String[] modes = {"none", "token"};
                JitWarmup.Outcome w = JitWarmup.untilQuiet(List.of(none.pid(), token.pid()),
                        Duration.ofSeconds(warmupSeconds), round -> {
                            for (int i = 0; i < 2; i++) {
                                String t = "auth-warm-" + modes[i] + "-" + round;
                                trial(systems[i], t, new ProduceSpec(100_000, producers, batch, 0, payload), NO_PEER);
                                trial(systems[i], t + "-small", new ProduceSpec(10_000, producers, smallBatch, 0, payload),
                                        NO_PEER);
                            }
                        });
                warmup = w.toString();
                Workspace.log("warm-up: " + warmup);
                for (int run = 1; run <= runs; run++) {
                    // Both services at once, phase by phase (a barrier between produce and fetch): both see the same
                    // machine load, which on this shared machine moves more from second to second than auth costs.
                    Result[] full = pair(systems, "auth-%s-" + run, new ProduceSpec(records, producers, batch, 0, payload));
                    Result[] small = pair(systems, "auth-%s-" + run + "-small",
                            new ProduceSpec(smallRecords, producers, smallBatch, 0, payload));
                    for (int i = 0; i < 2; i++) {
                        Result r = full[i];
                        Result s = small[i];
                        add(rows, "produce, " + batch + " records per request, " + producers + " producers", "records/s",
                                i, r.produce().recordsPerSecond());
                        add(rows, "fetch (record batches, 2000-record pages), 8 readers", "MB/s", i,
                                r.fetch().megabytesPerSecond());
                        add(rows, "produce, " + smallBatch + " records per request, " + producers + " producers",
                                "records/s", i, s.produce().recordsPerSecond());
                        add(rows, "service CPU, produce, " + batch + " records per request", CPU_UNIT, i,
                                r.produceCpu() * 1e3 / (records / 10_000.0));
                        add(rows, "service CPU, fetch", CPU_UNIT, i, r.fetchCpu() * 1e3 / (records / 10_000.0));
                        add(rows, "service CPU, produce, " + smallBatch + " records per request", CPU_UNIT, i,
                                s.produceCpu() * 1e3 / (smallRecords / 10_000.0));
                        Workspace.log(String.format(Locale.ROOT, "run %d %-5s: produce %.0f rec/s (%.2f CPU s), fetch "
                                        + "%.1f MB/s (%.2f CPU s), small produce %.0f rec/s (%.2f CPU s)", run, modes[i],
                                r.produce().recordsPerSecond(), r.produceCpu(), r.fetch().megabytesPerSecond(),
                                r.fetchCpu(), s.produce().recordsPerSecond(), s.produceCpu()));
                    }
                }
            }
            print(rows, started, git, machine, load.summary(), warmup);
        } finally {
            if (!keep) {
                Workspace.deleteTree(workDir);
            }
        }
        return 0;
    }

    /**
     * A trial's throughput and the service's CPU seconds for it ({@code /proc/<pid>/stat}; produce counts until the
     * service is quiet again, so work it defers, such as indexing, is billed too). On a machine whose other tenants
     * take most of the cores, throughput moves with their load; CPU spent per record barely does.
     */
    private record Result(ProduceStats produce, ConsumeStats fetch, double produceCpu, double fetchCpu) {
    }

    /** Runs {@link #trial} on both systems at once ({@code topicPattern} gets the mode); results by system. */
    private static Result[] pair(TierlogSystem[] systems, String topicPattern, ProduceSpec spec) throws Exception {
        String[] modes = {"none", "token"};
        CyclicBarrier barrier = new CyclicBarrier(2);
        List<CompletableFuture<Result>> futures = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            int n = i;
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return trial(systems[n], String.format(topicPattern, modes[n]), spec, barrier);
                } catch (Exception e) {
                    barrier.reset(); // the other side fails too rather than wait forever
                    throw new CompletionException(e);
                }
            }, Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "auth-" + modes[n]);
                t.setDaemon(true);
                return t;
            })));
        }
        return new Result[] {futures.get(0).join(), futures.get(1).join()};
    }

    /**
     * Creates {@code topic}, produces the spec into it as record batches, reads it back, deletes it; produce and
     * fetch start when the other system's trial is at the same point ({@code barrier}).
     */
    private static Result trial(TierlogSystem system, String topic, ProduceSpec spec, CyclicBarrier barrier)
            throws Exception {
        long pid = system.serverPids().get(0);
        system.createTopic(topic, PARTITIONS, Durability.NEVER);
        try {
            ProcessCpu.awaitQuiet(List.of(pid), QUIET_CORES, QUIET_WAIT);
            barrier.await(10, TimeUnit.MINUTES);
            double cpu0 = ProcessCpu.seconds(pid);
            ProduceStats p = system.produce(topic, spec, ProduceBody.RECORD_BATCHES);
            ProcessCpu.awaitQuiet(List.of(pid), QUIET_CORES, QUIET_WAIT);
            barrier.await(10, TimeUnit.MINUTES);
            double cpu1 = ProcessCpu.seconds(pid);
            ConsumeStats c = system.consumeBatches(topic, PARTITIONS, spec.records(), Duration.ofMinutes(5));
            double cpu2 = ProcessCpu.seconds(pid);
            return new Result(p, c, cpu1 - cpu0, cpu2 - cpu1);
        } finally {
            system.deleteTopic(topic);
        }
    }

    /** A barrier that lets a lone trial (warm-up) through. */
    private static final CyclicBarrier NO_PEER = new CyclicBarrier(1);
    private static final double QUIET_CORES = 0.15;
    private static final Duration QUIET_WAIT = Duration.ofSeconds(10);

    private static void add(Map<String, Row> rows, String what, String unit, int mode, double value) {
        Row row = rows.computeIfAbsent(what, w -> new Row(w, unit, new ArrayList<>(), new ArrayList<>()));
        (mode == 0 ? row.none() : row.token()).add(value);
    }

    private void print(Map<String, Row> rows, Instant started, String git, Map<String, String> machine, String load,
                       String warmup) {
        System.out.printf(Locale.ROOT, "Run %s, git `%s`, %s × %s, %d runs, each driving both services at once, took %d s; %s.%n%n",
                started, git, machine.get("nproc"), machine.get("cpu"), runs,
                Duration.between(started, Instant.now()).toSeconds(), load);
        System.out.println("Both services: the same build, fsync=never, 1 GiB heap; values " + valueBytes
                + " B, record-batch bodies, 8 partitions. Token mode: a minted token with `" + SCOPES
                + "` on every request. Warm-up: " + warmup + ".");
        System.out.println();
        System.out.println("Cost: the throughput lost (1 - token/none) or the CPU added (token/none - 1), of the medians.");
        System.out.println();
        System.out.println("| workload | unit | none: median (range) | token: median (range) | token/none of the medians | "
                + "median of the per-run token/none | cost |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (Row row : rows.values()) {
            Samples none = new Samples(row.none());
            Samples token = new Samples(row.token());
            List<Double> pairs = new ArrayList<>();
            for (int i = 0; i < Math.min(row.none().size(), row.token().size()); i++) {
                pairs.add(row.token().get(i) / row.none().get(i));
            }
            Samples paired = new Samples(pairs);
            double ratio = token.median() / none.median();
            boolean cpu = row.unit().equals(CPU_UNIT);
            String pattern = row.unit().equals("MB/s") || cpu ? "%,.1f" : "%,.0f";
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %.3f | %.3f (%.3f–%.3f) | %+.1f%% |%n", row.what(),
                    row.unit(), none.medianAndRange(pattern), token.medianAndRange(pattern), ratio, paired.median(),
                    paired.min(), paired.max(), (cpu ? ratio - 1 : 1 - ratio) * 100);
        }
    }

    /** Mints an application token with {@link #SCOPES} through {@code POST /v1/tokens} with the bootstrap token. */
    static String mint(URI base, String bootstrap) throws Exception {
        ObjectMapper json = new ObjectMapper();
        String body = json.createObjectNode().put("name", "bench-auth").put("scopes", SCOPES).toString();
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/v1/tokens"))
                .header("Authorization", "Bearer " + bootstrap).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201 && r.statusCode() != 200) {
            throw new IllegalStateException("POST /v1/tokens answered " + r.statusCode() + ": " + r.body());
        }
        return json.readTree(r.body()).get("token").asText();
    }

    private static String randomSecret() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
