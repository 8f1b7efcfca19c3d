package io.tierlog.bench.soak;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux says about a process: resident set, thread count ({@code /proc/<pid>/status}) and open file
 * descriptors ({@code /proc/<pid>/fd}). Values are -1 where /proc cannot be read (not Linux, process gone).
 * Stateless and thread-safe.
 */
public final class ProcessProbe {
    private final long pid;

    public ProcessProbe(long pid) {
        this.pid = pid;
    }

    /** Resident set size in bytes ({@code VmRSS}). */
    public long rssBytes() {
        return statusField("VmRSS:") * 1024;
    }

    /** Live threads of the process ({@code Threads}). */
    public long threads() {
        return statusField("Threads:");
    }

    /** Open file descriptors: files, sockets, pipes, RocksDB's and the JVM's own. */
    public long openFiles() {
        long n = 0;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path ignored : fds) {
                n++;
            }
            return n;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The 1-minute load average of the machine ({@code /proc/loadavg}), or -1. */
    public static double loadAverage1() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private long statusField(String name) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(name)) {
                    // "VmRSS:	  123456 kB" / "Threads:	42"
                    return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
                }
            }
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
