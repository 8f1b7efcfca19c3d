package io.tierlog.ingest.function.bench;

import io.tierlog.ingest.function.harness.Events;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi;
import io.tierlog.ingest.function.harness.LoopbackRuntimeApi.Outcome;
import io.tierlog.ingest.function.harness.RicFunctionProcess;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Init time and warm latency of target/tierlog-ingest-function.jar under the real runtime interface client, against
 * the loopback Runtime API (docs/BENCHMARKS.md, "Lambda ingest function"). Run after {@code mvn package}:
 * <pre>
 * mvn -B -o -pl ingest-function exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   -Dexec.args="-cp %classpath io.tierlog.ingest.function.bench.RicInvocationBenchmark"
 * </pre>
 * Cold starts: a fresh JVM per run, the first event queued before launch, so "first response" is what a client of
 * a cold function waits for beyond the platform's own sandbox start. Warm: sequential invocations of a one-record
 * JSON produce on one instance, timed from queueing the event to receiving the response (so the loopback
 * Runtime API round trip is included), per fsync policy. Arguments: [coldRuns] [warmupInvocations] [invocations].
 */
public final class RicInvocationBenchmark {
    private static final Path WORK = Path.of("target", "bench").toAbsolutePath();
    private static final Path JAR = Path.of("target", "tierlog-ingest-function.jar").toAbsolutePath();

    public static void main(String[] args) throws Exception {
        int coldRuns = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int invocations = args.length > 2 ? Integer.parseInt(args[2]) : 3000;
        Path taskRoot = RicFunctionProcess.unpack(JAR, WORK.resolve("task"));
        System.out.printf(Locale.ROOT, "artifact: %s, %d bytes (%.2f MiB); java %s, %d cpus%n", JAR.getFileName(),
                Files.size(JAR), Files.size(JAR) / 1048576.0, System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());

        double[] init = new double[coldRuns];
        double[] first = new double[coldRuns];
        double[] cpu = new double[coldRuns];
        for (int i = 0; i < coldRuns; i++) {
            Path data = freshData("cold-" + i);
            try (LoopbackRuntimeApi api = new LoopbackRuntimeApi()) {
                var response = api.invoke(event(0));
                try (RicFunctionProcess f = RicFunctionProcess.start(taskRoot, api.address(),
                        Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", "always"),
                        WORK.resolve("cold-" + i + ".log"))) {
                    long nextAt = api.firstNext().get(60, TimeUnit.SECONDS);
                    Outcome o = response.get(60, TimeUnit.SECONDS);
                    check(o);
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
        if (invocations == 0) {
            return;
        }

        for (String fsync : new String[]{"always", "never"}) {
            Path data = freshData("warm-" + fsync);
            try (LoopbackRuntimeApi api = new LoopbackRuntimeApi();
                 RicFunctionProcess f = RicFunctionProcess.start(taskRoot, api.address(),
                         Map.of("TIERLOG_DATA_DIR", data.toString(), "TIERLOG_FSYNC", fsync),
                         WORK.resolve("warm-" + fsync + ".log"))) {
                for (int i = 0; i < warmup; i++) {
                    check(api.invoke(event(i)).get(60, TimeUnit.SECONDS));
                }
                double[] micros = new double[invocations];
                for (int i = 0; i < invocations; i++) {
                    long t0 = System.nanoTime();
                    Outcome o = api.invoke(event(warmup + i)).get(60, TimeUnit.SECONDS);
                    micros[i] = (o.completedNanos() - t0) / 1e3;
                    check(o);
                }
                System.out.printf(Locale.ROOT, "warm, fsync=%s (%d invocations after %d warm-up): p50 %.0f us, "
                                + "p90 %.0f us, p99 %.0f us, max %.0f us%n", fsync, invocations, warmup,
                        percentile(micros, 50), percentile(micros, 90), percentile(micros, 99), percentile(micros, 100));
            }
        }
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private static Path freshData(String name) throws Exception {
        Path data = WORK.resolve("data-" + name);
        if (Files.exists(data)) {
            try (var walk = Files.walk(data)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
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

    private static void check(Outcome o) {
        if (o.error() || !o.body().contains("\"statusCode\":200")) {
            throw new IllegalStateException("invocation failed: " + o.body());
        }
    }

    private static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
