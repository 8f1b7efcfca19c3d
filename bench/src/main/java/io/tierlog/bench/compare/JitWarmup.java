package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Warm-up that runs until the servers' JIT compilers are quiet, not for a fixed amount of work. On this project's
 * 2-core machines the index-service kept its compiler threads busy for about 80 s of continuous load (measured with
 * {@code jcmd <pid> PerfCounter.print}: ~5 s of compile time per 8 s of hot-consume load at first, under 0.1 s after
 * ten such rounds), and throughput measured meanwhile was 20-40% lower than afterwards. A production server runs
 * warm, so the benchmarks measure warm servers: rounds of the warm-up workload repeat until, in one round, every
 * server JVM spent less than {@link #QUIET_FRACTION} of the round's wall time compiling, or until a round ends
 * after the time limit (a round is never cut short). The same rule applies to Kafka's broker and to Tierlog's
 * index-service.
 */
public final class JitWarmup {
    /** Compile time per wall time below which a JVM counts as warm. */
    public static final double QUIET_FRACTION = 0.05;

    /** One round of the warm-up workload; {@code round} counts from 1 (for fresh topic names). */
    @FunctionalInterface
    public interface Round {
        void run(int round) throws Exception;
    }

    /** How a warm-up ended: rounds run, their wall time, and the last round's compile time per wall time. */
    public record Outcome(int rounds, double seconds, double lastCompileFraction, boolean quiet) {
        @Override
        public String toString() {
            return String.format("%d rounds in %.0f s, %s (last round: %.0f%% of its wall time compiling)", rounds,
                    seconds, quiet ? "JIT quiet" : "time limit reached before the JIT was quiet",
                    100 * lastCompileFraction);
        }
    }

    private JitWarmup() {
    }

    /**
     * Runs rounds until every JVM in {@code pids} is quiet (see above): at least one, and no new one once
     * {@code limit} has passed.
     */
    public static Outcome untilQuiet(List<Long> pids, Duration limit, Round round) throws Exception {
        return untilQuiet(pids, limit, 1, round);
    }

    /**
     * Runs rounds until every JVM in {@code pids} has been quiet for {@code quietRounds} rounds in a row (one quiet
     * round can be one in which the compiler queue happened to be empty): at least that many, and no new one once
     * {@code limit} has passed.
     */
    public static Outcome untilQuiet(List<Long> pids, Duration limit, int quietRounds, Round round) throws Exception {
        long start = System.nanoTime();
        int rounds = 0;
        int quietInARow = 0;
        while (true) {
            double[] before = compileSeconds(pids);
            long t0 = System.nanoTime();
            round.run(++rounds);
            double wall = (System.nanoTime() - t0) / 1e9;
            double[] after = compileSeconds(pids);
            double fraction = 0;
            for (int i = 0; i < pids.size(); i++) {
                fraction = Math.max(fraction, (after[i] - before[i]) / wall);
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            quietInARow = fraction < QUIET_FRACTION ? quietInARow + 1 : 0;
            if (quietInARow >= quietRounds) {
                return new Outcome(rounds, elapsed, fraction, true);
            }
            if (elapsed >= limit.toSeconds()) {
                return new Outcome(rounds, elapsed, fraction, false);
            }
        }
    }

    private static double[] compileSeconds(List<Long> pids) throws IOException, InterruptedException {
        double[] out = new double[pids.size()];
        for (int i = 0; i < pids.size(); i++) {
            out[i] = compileSeconds(pids.get(i));
        }
        return out;
    }

    /**
     * The JVM's total JIT compile time so far, from its performance counters ({@code java.ci.totalTime} in ticks of
     * {@code sun.os.hrt.frequency}), read with the {@code jcmd} of the JDK running this benchmark.
     */
    static double compileSeconds(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "PerfCounter.print")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("jcmd " + pid + " PerfCounter.print failed: " + out.lines().findFirst().orElse(""));
        }
        return counter(out, "java.ci.totalTime") / counter(out, "sun.os.hrt.frequency");
    }

    /** {@link #compileSeconds(long)}, or NaN when jcmd cannot tell: a measurement beside runs, never a stop. */
    public static double compileSecondsOrNaN(long pid) {
        try {
            return compileSeconds(pid);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Double.NaN;
        }
    }

    static double counter(String perfCounters, String name) {
        return perfCounters.lines().filter(l -> l.startsWith(name + "="))
                .map(l -> Double.parseDouble(l.substring(name.length() + 1).trim()))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + name + " in the JVM's performance counters"));
    }
}
