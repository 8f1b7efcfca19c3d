package io.tierlog.bench.lambda;

import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi.Outcome;
import io.tierlog.ingest.function.harness.RicFunctionProcess;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code lambda}: init time and warm latency of {@code ingest-function/target/tierlog-ingest-function.jar} under
 * the real runtime interface client, against the loopback Runtime API of ingest-function's test harness
 * (docs/BENCHMARKS.md, "Lambda ingest function").
 *
 * <p>Cold starts: a fresh function JVM per run, the first event queued before launch, so "first response" is what
 * a client of a cold function waits for beyond the platform's own sandbox start. Warm: sequential invocations of a
 * one-record JSON produce on one instance, timed from queueing the event to receiving the response (so the
 * loopback Runtime API round trip is included), per fsync policy. Every function JVM is killed at the end of its
 * phase, also on failure. Not thread-safe; one run per JVM.
 */
@Command(name = "lambda", mixinStandardHelpOptions = true,
        description = "Cold start and warm latency of the Lambda ingest function under the real runtime interface client.")
public final class LambdaCommand implements Callable<Integer> {
    private static final List<String> FSYNC_POLICIES = List.of("always", "never");

    @Option(names = "--artifact", defaultValue = "ingest-function/target/tierlog-ingest-function.jar",
            description = "The deployable function jar (default: ${DEFAULT-VALUE}).")
    Path artifact;

    @Option(names = "--work-dir", defaultValue = "bench/target/lambda",
            description = "Task root, data directories and function logs; emptied per run (default: ${DEFAULT-VALUE}).")
    Path workDir;

    @Option(names = "--cold-runs", defaultValue = "5", description = "Cold starts, one fresh JVM each (default: ${DEFAULT-VALUE}).")
    int coldRuns;

    @Option(names = "--warmup", defaultValue = "300", description = "Warm-up invocations per fsync policy (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--invocations", defaultValue = "2000",
            description = "Measured warm invocations per fsync policy; 0 skips the warm phase (default: ${DEFAULT-VALUE}).")
    int invocations;

    @Override
    public Integer call() throws Exception {
        Path jar = artifact.toAbsolutePath();
        if (!Files.isRegularFile(jar)) {
            System.err.println("no function artifact at " + jar
                    + "; build it with `mvn -B -o -pl ingest-function -am install -DskipTests`");
            return 2;
        }
        if (coldRuns < 1 || warmup < 0 || invocations < 0) {
            System.err.println("--cold-runs must be at least 1, --warmup and --invocations at least 0");
            return 2;
        }
        Path work = workDir.toAbsolutePath();
        Path taskRoot = RicFunctionProcess.unpack(jar, work.resolve("task"));
        System.out.printf(Locale.ROOT, "artifact: %s, %d bytes (%.2f MiB); java %s, %d cpus; load average %s%n",
                jar.getFileName(), Files.size(jar), Files.size(jar) / 1048576.0, System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), loadAverage());
        coldStarts(work, taskRoot);
        if (invocations > 0) {
            for (String fsync : FSYNC_POLICIES) {
                warm(work, taskRoot, fsync);
            }
        }
        return 0;
    }

    private void coldStarts(Path work, Path taskRoot) throws Exception {
        double[] init = new double[coldRuns];
        double[] first = new double[coldRuns];
        double[] cpu = new double[coldRuns];
        for (int i = 0; i < coldRuns; i++) {
            Path data = freshData(work, "cold-" + i);
            try (LoopbackRuntimeApi api = new LoopbackRuntimeApi()) {
                var response = api.invoke(event(0));
                try (RicFunctionProcess f = RicFunctionProcess.start(taskRoot, api.address(),
                        Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", "always"),
                        work.resolve("cold-" + i + ".log"))) {
                    long nextAt = api.firstNext().get(60, TimeUnit.SECONDS);
                    Outcome o = response.get(60, TimeUnit.SECONDS);
                    check(o, f);
                    init[i] = (nextAt - f.startedNanos()) / 1e6;
                    first[i] = (o.completedNanos() - f.startedNanos()) / 1e6;
                    // CPU the function's JVM spent up to (and just after) its first response: on a loaded shared
                    // machine wall time mostly measures other people's work; CPU time does not.
                    cpu[i] = f.cpuMillis();
                }
            }
        }
        System.out.printf(Locale.ROOT, "cold start (%d runs): JVM launch -> runtime ready (init) median %.0f ms, max %.0f ms; "
                        + "JVM launch -> first response median %.0f ms, max %.0f ms%n", coldRuns,
                percentile(init, 50), percentile(init, 100), percentile(first, 50), percentile(first, 100));
        System.out.printf(Locale.ROOT, "cold start CPU time of the function JVM up to its first response (user+sys, all "
                        + "threads): median %.0f ms, min %.0f ms, max %.0f ms; load average now %s%n", percentile(cpu, 50),
                percentile(cpu, 0), percentile(cpu, 100), loadAverage());
    }

    private void warm(Path work, Path taskRoot, String fsync) throws Exception {
        Path data = freshData(work, "warm-" + fsync);
        try (LoopbackRuntimeApi api = new LoopbackRuntimeApi();
             RicFunctionProcess f = RicFunctionProcess.start(taskRoot, api.address(),
                     Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", fsync),
                     work.resolve("warm-" + fsync + ".log"))) {
            for (int i = 0; i < warmup; i++) {
                check(api.invoke(event(i)).get(60, TimeUnit.SECONDS), f);
            }
            double[] micros = new double[invocations];
            for (int i = 0; i < invocations; i++) {
                long t0 = System.nanoTime();
                Outcome o = api.invoke(event(warmup + i)).get(60, TimeUnit.SECONDS);
                micros[i] = (o.completedNanos() - t0) / 1e3;
                check(o, f);
            }
            System.out.printf(Locale.ROOT, "warm, fsync=%s (%d invocations after %d warm-up): p50 %.0f us, "
                            + "p90 %.0f us, p99 %.0f us, max %.0f us%n", fsync, invocations, warmup,
                    percentile(micros, 50), percentile(micros, 90), percentile(micros, 99), percentile(micros, 100));
        }
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** An empty data directory holding the one-partition topic {@code bench}. */
    private static Path freshData(Path work, String name) throws IOException {
        Path data = work.resolve("data-" + name);
        if (Files.exists(data)) {
            try (var walk = Files.walk(data)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        new TopicStore(data, Clock.systemUTC()).create("bench", 1, TopicConfig.DEFAULTS);
        return data;
    }

    private static String event(int n) {
        return Events.produce("bench", "{\"records\":[{\"key\":\"k-" + n + "\",\"value\":{\"n\":" + n
                + ",\"payload\":\"0123456789abcdef0123456789abcdef\"}}]}", "bench-" + n);
    }

    private static void check(Outcome o, RicFunctionProcess f) {
        if (o.error() || !o.body().contains("\"statusCode\":200")) {
            throw new IllegalStateException("invocation failed: " + o.body() + " (function log " + f.log() + ")");
        }
    }

    /** Nearest-rank percentile; {@code p} 0 is the minimum, 100 the maximum. */
    static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
