package io.tierlog.bench.share;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time used so far by a process: another one from {@code /proc/<pid>/stat} (utime + stime, in clock ticks of
 * 1/100 s, Linux's USER_HZ), this JVM from its {@code OperatingSystemMXBean}. On a machine whose cores are shared,
 * CPU per unit of work says more than a rate.
 */
final class ProcessCpu {
    private static final double TICKS_PER_SECOND = 100;

    private ProcessCpu() {
    }

    /** CPU seconds (user + system) process {@code pid} has used. */
    static double seconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // Fields after the command name in parentheses (which may hold spaces): state is field 3, utime 14, stime 15.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
        } catch (IOException e) {
            throw new UncheckedIOException("CPU time of process " + pid, e);
        }
    }

    /** CPU seconds this JVM has used. */
    static double self() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() / 1e9;
    }
}
