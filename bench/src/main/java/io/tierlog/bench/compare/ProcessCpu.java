package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits for server processes to go quiet between measurements, so that one system's background work (Kafka's
 * log flusher and deletions, Tierlog's indexer catching up into RocksDB) is not billed to the next run of the
 * other system. Reads Linux {@code /proc/<pid>/stat} CPU ticks; elsewhere it does not wait.
 */
public final class ProcessCpu {
    /** Kernel clock ticks per second for /proc times; 100 on every mainstream Linux build. */
    private static final double TICKS_PER_SECOND = 100.0;
    private static final Duration WINDOW = Duration.ofMillis(500);

    private ProcessCpu() {
    }

    /**
     * Returns once the processes together used less than {@code maxCores} of CPU over a half-second window, or
     * when {@code timeout} has passed (then it returns false: the run goes on, noted as not settled).
     */
    public static boolean awaitQuiet(List<Long> pids, double maxCores, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long before = ticks(pids);
        if (before < 0) {
            return true;
        }
        while (System.nanoTime() < deadline) {
            LockSupport.parkNanos(WINDOW.toNanos());
            long after = ticks(pids);
            double cores = (after - before) / TICKS_PER_SECOND / (WINDOW.toNanos() / 1e9);
            if (cores < maxCores) {
                return true;
            }
            before = after;
        }
        return false;
    }

    /** CPU seconds (user + system) the process has used so far; negative where /proc is not readable. */
    public static double seconds(long pid) {
        long ticks = ticks(List.of(pid));
        return ticks < 0 ? -1 : ticks / TICKS_PER_SECOND;
    }

    /** Sum of user+system ticks of the processes; -1 where /proc is not readable. */
    static long ticks(List<Long> pids) {
        long sum = 0;
        for (long pid : pids) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                // Fields after the ")" that closes the command name; utime and stime are the 14th and 15th.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                sum += Long.parseLong(f[11]) + Long.parseLong(f[12]);
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
        return sum;
    }
}
