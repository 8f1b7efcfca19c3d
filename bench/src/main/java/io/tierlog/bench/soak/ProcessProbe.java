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

    /**
     * Resident bytes of the Java heap: the {@code Rss} of the mappings in {@code /proc/<pid>/smaps} that lie within
     * the heap's reserved range {@code [from, to)} (see {@link #heapRange}); -1 if unreadable. RSS minus this is
     * everything outside the heap: JVM internals, code cache, and native libraries' own memory.
     */
    public long heapRssBytes(long[] range) {
        if (range == null) {
            return -1;
        }
        try {
            long total = 0;
            boolean inside = false;
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps"))) {
                int dash = line.indexOf('-');
                int space = line.indexOf(' ');
                if (dash > 0 && space > dash && isHex(line.substring(0, dash))) {
                    long from = Long.parseUnsignedLong(line.substring(0, dash), 16);
                    long to = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                    inside = from >= range[0] && to <= range[1];
                } else if (inside && line.startsWith("Rss:")) {
                    total += Long.parseLong(line.substring(4).trim().split("\\s+")[0]) * 1024;
                }
            }
            return total;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static boolean isHex(String s) {
        return !s.isEmpty() && s.chars().allMatch(c -> Character.digit(c, 16) >= 0);
    }

    /** The heap's reserved address range from {@code jcmd <pid> GC.heap_info} ({@code [0x..., 0x...)}), or null. */
    public long[] heapRange() {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.heap_info")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[0x([0-9a-f]+), 0x([0-9a-f]+)\\)").matcher(out);
            return m.find() ? new long[] {Long.parseUnsignedLong(m.group(1), 16), Long.parseUnsignedLong(m.group(2), 16)}
                    : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
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
