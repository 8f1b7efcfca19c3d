package io.tierlog.bench.compare;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What machine the numbers came from: cores, memory, CPU model, the disk under the data directories
 * ({@code df -T}), kernel, JDK, and the load average (the machine may be shared; a high load taints a run).
 */
public final class MachineInfo {
    private MachineInfo() {
    }

    public static Map<String, String> describe(Path dataDir) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("nproc", Integer.toString(Runtime.getRuntime().availableProcessors()));
        m.put("cpu", firstMatch(Path.of("/proc/cpuinfo"), "model name"));
        m.put("memory", firstMatch(Path.of("/proc/meminfo"), "MemTotal"));
        m.put("disk (df -T of the data dir)", command(List.of("df", "-T", "-h", dataDir.toString())));
        m.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("fsync (4 KiB write + fdatasync, median/p99 of 200)", fsyncLatency(dataDir));
        m.put("fsync, 8 files at once (128 KiB write + fdatasync each, 100 per file, back to back)",
                parallelFsyncLatency(dataDir, 8, 128 * 1024, 100));
        m.put("loadavg at start", loadAverage());
        return m;
    }

    /**
     * How long the data disk takes to make a small append durable: the floor under every "fsync before ack"
     * number, which both systems pay at least once per acknowledged batch.
     */
    static String fsyncLatency(Path dir) {
        Path file = dir.resolve("fsync-probe");
        long[] nanos = new long[200];
        ByteBuffer block = ByteBuffer.allocate(4096);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            for (int i = 0; i < nanos.length; i++) {
                block.clear();
                long t0 = System.nanoTime();
                ch.write(block);
                ch.force(false);
                nanos[i] = System.nanoTime() - t0;
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a leftover probe file in the work directory is harmless
            }
        }
        Arrays.sort(nanos);
        return String.format(Locale.ROOT, "%.2f ms / %.2f ms", nanos[nanos.length / 2] / 1e6,
                nanos[nanos.length * 99 / 100] / 1e6);
    }

    /**
     * The same with several files made durable at once, as a log with one file per partition does under
     * {@code fsync=always} when producers write to several partitions: median and p99 per append, and appends per
     * second over all files. With the disk busy this, not the single-file number, is the floor under the paced
     * produce latency (a record waits for at most one request in flight, then for its own).
     */
    static String parallelFsyncLatency(Path dir, int files, int bytes, int appendsPerFile) {
        long[] nanos = new long[files * appendsPerFile];
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        List<IOException> failures = Collections.synchronizedList(new ArrayList<>());
        for (int f = 0; f < files; f++) {
            int file = f;
            Thread writer = new Thread(() -> {
                Path path = dir.resolve("fsync-probe-" + file);
                ByteBuffer block = ByteBuffer.allocateDirect(bytes);
                try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND)) {
                    start.await();
                    for (int i = 0; i < appendsPerFile; i++) {
                        block.clear();
                        long t0 = System.nanoTime();
                        ch.write(block);
                        ch.force(false);
                        nanos[file * appendsPerFile + i] = System.nanoTime() - t0;
                    }
                } catch (IOException e) {
                    failures.add(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    try {
                        Files.deleteIfExists(path);
                    } catch (IOException ignored) {
                        // a leftover probe file in the work directory is harmless
                    }
                }
            }, "fsync-probe-" + file);
            writer.start();
            writers.add(writer);
        }
        long t0 = System.nanoTime();
        start.countDown();
        try {
            for (Thread w : writers) {
                w.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown (interrupted)";
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (!failures.isEmpty()) {
            return "unknown (" + failures.get(0).getMessage() + ")";
        }
        Arrays.sort(nanos);
        return String.format(Locale.ROOT, "%.2f ms / %.2f ms, %.0f appends/s", nanos[nanos.length / 2] / 1e6,
                nanos[nanos.length * 99 / 100] / 1e6, nanos.length / seconds);
    }

    /**
     * Data the kernel has yet to write back ({@code Dirty} and {@code Writeback} of /proc/meminfo): an earlier
     * phase's page-cache writes, flushed in the background, compete with a later phase's fsyncs.
     */
    public static String pendingWriteback() {
        List<String> meminfo;
        try {
            meminfo = Files.readAllLines(Path.of("/proc/meminfo")); // once: both numbers from one instant
        } catch (IOException e) {
            return "unknown";
        }
        return "dirty " + field(meminfo, "Dirty:") + ", writeback " + field(meminfo, "Writeback:");
    }

    public static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String firstMatch(Path file, String prefix) {
        try {
            return field(Files.readAllLines(file), prefix);
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** What follows the colon of the first line starting with {@code prefix}. */
    private static String field(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix))
                .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown");
    }

    private static String command(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor(10, TimeUnit.SECONDS);
            // df prints a header line and one row; keep the row, squeezed to single spaces.
            String[] lines = out.split("\n");
            return lines[lines.length - 1].replaceAll("\\s+", " ");
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
