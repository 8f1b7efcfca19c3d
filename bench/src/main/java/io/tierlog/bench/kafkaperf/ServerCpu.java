package io.tierlog.bench.kafkaperf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU time so far, user and system apart, from Linux {@code /proc/<pid>/stat} (fields 14 and 15,
 * utime and stime, in clock ticks of 1/100 s: {@code getconf CLK_TCK} on every mainstream Linux build). Taken before
 * and after a consume run, the difference is what the server spent serving it (plus its own background work, which
 * the command lets settle first).
 */
record ServerCpu(double userSeconds, double systemSeconds) {
    private static final double TICKS_PER_SECOND = 100.0;

    /** The process's CPU time now; null where /proc is not readable (not Linux, process gone). */
    static ServerCpu of(long pid) {
        try {
            return parse(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The CPU time of this process's children that have ended and been waited for ({@code cutime}, {@code cstime}):
     * taken around a tool run, the difference is that tool's own CPU (the servers, still running, are not in it).
     */
    static ServerCpu ofEndedChildren() {
        try {
            return parseChildren(Files.readString(Path.of("/proc/self/stat")));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Parses one {@code /proc/<pid>/stat} line; the command name in parentheses may hold spaces and ')'. */
    static ServerCpu parse(String stat) {
        // Fields after the ")" that closes the command name start at field 3; utime and stime are fields 14 and 15.
        String[] f = fields(stat);
        return new ServerCpu(Long.parseLong(f[11]) / TICKS_PER_SECOND, Long.parseLong(f[12]) / TICKS_PER_SECOND);
    }

    /** Fields 16 and 17 of a {@code /proc/<pid>/stat} line: the waited-for children's user and system time. */
    static ServerCpu parseChildren(String stat) {
        String[] f = fields(stat);
        return new ServerCpu(Long.parseLong(f[13]) / TICKS_PER_SECOND, Long.parseLong(f[14]) / TICKS_PER_SECOND);
    }

    private static String[] fields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    }

    /** The CPU used since {@code before}, per 100,000 of {@code records}. */
    ServerCpu per100k(ServerCpu before, long records) {
        double scale = 100_000.0 / Math.max(1, records);
        return new ServerCpu((userSeconds - before.userSeconds) * scale, (systemSeconds - before.systemSeconds) * scale);
    }

    double totalSeconds() {
        return userSeconds + systemSeconds;
    }
}
