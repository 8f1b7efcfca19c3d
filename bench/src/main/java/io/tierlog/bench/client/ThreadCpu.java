package io.tierlog.bench.client;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * CPU ticks of this JVM's threads by kind, read from Linux {@code /proc/self/task/<tid>/stat} and {@code comm} (the
 * native thread name, 15 characters): what a trial's "client CPU" was spent on. The bench JVM's total also holds its
 * JIT compiler and GC threads and the embedded S3Proxy, which the service calls in the background; a trial that
 * runs while this JVM still compiles is billed the compiling. Kinds: {@code jit} (C1/C2 compiler threads),
 * {@code gc} (GC worker, G1 concurrent/refinement threads, VM thread), {@code main} (threads named {@code java}: the
 * launcher's, among them the main thread running the trials, the producers' sending thread), {@code producer}
 * (threads named {@code tierlog-produce…}: the client library's sender and request threads, the benchmark
 * producer's sender threads), {@code other}, {@code ended} (threads that ended before the second snapshot, whose
 * time only the process total keeps: a producer's threads closed in the trial). Linux only; elsewhere the snapshot
 * is empty.
 */
final class ThreadCpu {
    private static final Path TASKS = Path.of("/proc/self/task");

    private ThreadCpu() {
    }

    /** Ticks (1/100 s) per thread id, with its kind. */
    record Snapshot(long processTicks, Map<String, long[]> byTid, Map<String, String> kinds) {
        /** Seconds per kind spent between {@code before} and this snapshot, largest first. */
        Map<String, Double> since(Snapshot before) {
            Map<String, Long> ticks = new HashMap<>();
            byTid.forEach((tid, t) -> {
                long[] b = before.byTid.get(tid);
                long d = t[0] - (b == null ? 0 : b[0]);
                ticks.merge(kinds.get(tid), d, Long::sum);
            });
            // Threads that ended before this snapshot (a producer's, closed inside the trial) left their time in
            // the process's total only.
            long known = ticks.values().stream().mapToLong(Long::longValue).sum();
            ticks.put("ended", processTicks - before.processTicks - known);
            List<Map.Entry<String, Long>> list = new ArrayList<>(ticks.entrySet());
            list.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            Map<String, Double> out = new LinkedHashMap<>();
            list.forEach(e -> out.put(e.getKey(), e.getValue() / 100.0));
            return out;
        }
    }

    /** "kind 0.12, kind 0.03" of {@code seconds} scaled by {@code scale}. */
    static String format(Map<String, Double> seconds, double scale) {
        StringBuilder sb = new StringBuilder();
        seconds.forEach((kind, s) -> sb.append(sb.length() == 0 ? "" : ", ")
                .append(String.format(Locale.ROOT, "%s %.2f", kind, s * scale)));
        return sb.toString();
    }

    static Snapshot snapshot() {
        Map<String, long[]> byTid = new HashMap<>();
        Map<String, String> kinds = new HashMap<>();
        long process;
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            process = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException notLinux) {
            return new Snapshot(0, Map.of(), Map.of());
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    String tid = task.getFileName().toString();
                    byTid.put(tid, new long[] {Long.parseLong(f[11]) + Long.parseLong(f[12])});
                    kinds.put(tid, kind(Files.readString(task.resolve("comm")).trim()));
                } catch (IOException | RuntimeException gone) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException notLinux) {
            return new Snapshot(0, Map.of(), Map.of());
        }
        return new Snapshot(process, byTid, kinds);
    }

    static String kind(String comm) {
        if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
            return "jit";
        }
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread")) {
            return "gc";
        }
        if (comm.equals("java")) { // the launcher's threads: the main thread keeps the launcher's name
            return "main";
        }
        if (comm.startsWith("tierlog-produc")) {
            return "producer";
        }
        return "other";
    }
}
