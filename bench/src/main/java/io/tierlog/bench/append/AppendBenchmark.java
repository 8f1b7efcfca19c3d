package io.tierlog.bench.append;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * In-process append throughput of {@link PartitionWriter} (the engine under IngestService, without JSON parsing),
 * for 1 KiB records in batches of 1, 100 and 1,000 under {@code fsync=always} and {@code fsync=never}, beside the
 * disk's own sequential write speed measured by {@code dd} in the same run and directory.
 *
 * <p>Each case appends for at most {@code --seconds} or {@code --mib} MiB, whichever comes first, into a fresh
 * partition directory (128 MiB segments, so rolls are included), {@code --runs} times; the median is reported.
 * The record batch is built once per case (random bytes, seeded) and re-encoded on every append, as the ingest
 * path does. {@code never} is reported twice: appends only (data in the page cache, as {@code dd} without
 * {@code conv=fsync}), and including the final fsync on close (durable, as {@code dd conv=fsync}).
 *
 * <p>Arguments (all optional): {@code --dir <path>} (default {@code ./target/bench-data}), {@code --runs N}
 * (default 3), {@code --seconds S} (default 5), {@code --mib M} (default 1024), {@code --fsync always|never|both}
 * (default both). Prints a Markdown report.
 */
public final class AppendBenchmark {
    private static final int RECORD_BYTES = 1024;
    private static final int[] BATCH_SIZES = {1, 100, 1000};
    private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Path dir;
    private final int runs;
    private final long seconds;
    private final long maxBytes;
    private final List<FsyncPolicy> policies;

    private AppendBenchmark(Path dir, int runs, long seconds, long maxBytes, List<FsyncPolicy> policies) {
        this.policies = policies;
        this.dir = dir;
        this.runs = runs;
        this.seconds = seconds;
        this.maxBytes = maxBytes;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of("target/bench-data");
        int runs = 3;
        long seconds = 5;
        long mib = 1024;
        List<FsyncPolicy> policies = List.of(FsyncPolicy.ALWAYS, FsyncPolicy.NEVER);
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--dir" -> dir = Path.of(args[i + 1]);
                case "--runs" -> runs = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Long.parseLong(args[i + 1]);
                case "--mib" -> mib = Long.parseLong(args[i + 1]);
                case "--fsync" -> policies = args[i + 1].equals("both") ? List.of(FsyncPolicy.ALWAYS, FsyncPolicy.NEVER)
                        : List.of(FsyncPolicy.parse(args[i + 1]));
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --dir, --runs, --seconds, --mib, --fsync always|never|both");
            }
        }
        Files.createDirectories(dir);
        new AppendBenchmark(dir.toAbsolutePath(), runs, seconds, mib * 1024 * 1024, policies).run();
    }

    private void run() throws Exception {
        System.out.println("## Environment");
        System.out.println();
        System.out.println("- JDK: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        System.out.println("- CPUs: " + Runtime.getRuntime().availableProcessors() + "; load average at start: "
                + String.format("%.1f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
        System.out.println("- Filesystem of " + dir + ":");
        System.out.println("```");
        System.out.print(Shell.run(List.of("df", "-T", dir.toString())).stdout());
        System.out.println("```");
        System.out.println("- Runs per case: " + runs + " (median shown); each run at most " + seconds + " s or "
                + (maxBytes >> 20) + " MiB");
        System.out.println();

        System.out.println("## Disk (dd, same directory)");
        System.out.println();
        System.out.println("| dd command (if=/dev/zero of=<dir>/dd.bin) | what it shows | MB/s (median) | writes/s |");
        System.out.println("|---|---|---:|---:|");
        List<String[]> ddCases = List.of(
                new String[]{"bs=1M count=1024 conv=fsync", "sequential write, durable at the end", "1M", "1024", "conv=fsync", "1048576"},
                new String[]{"bs=1M count=1024", "sequential write into the page cache", "1M", "1024", null, "1048576"},
                new String[]{"bs=1100 count=2000 oflag=dsync", "sync per 1-record batch", "1100", "2000", "oflag=dsync", "1100"},
                new String[]{"bs=106k count=300 oflag=dsync", "sync per 100-record batch", "106k", "300", "oflag=dsync", "108544"},
                new String[]{"bs=1060k count=100 oflag=dsync", "sync per 1000-record batch", "1060k", "100", "oflag=dsync", "1085440"});
        double ddFsync = 0;
        double ddCache = 0;
        for (String[] c : ddCases) {
            double median = median(() -> Dd.write(dir.resolve("dd.bin"), c[2], c[3], c[4]));
            if (c == ddCases.get(0)) {
                ddFsync = median;
            } else if (c == ddCases.get(1)) {
                ddCache = median;
            }
            System.out.printf("| `%s` | %s | %.2f | %.0f |%n", c[0], c[1], median, median * 1e6 / Long.parseLong(c[5]));
        }
        System.out.println();

        System.out.println("## PartitionWriter.append, 1 KiB records");
        System.out.println();
        System.out.println("| fsync | records/batch | MB/s payload | records/s | batches/s | MB/s incl. final fsync "
                + "| CPU ms per MB (appending thread) |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (FsyncPolicy policy : policies) {
            for (int batch : BATCH_SIZES) {
                List<Result> results = new ArrayList<>();
                for (int r = 0; r < runs; r++) {
                    results.add(appendRun(policy, batch, r));
                }
                results.sort(Comparator.comparingDouble(Result::mbPerSecond));
                Result m = results.get(results.size() / 2);
                results.sort(Comparator.comparingDouble(Result::mbPerSecondDurable));
                Result d = results.get(results.size() / 2);
                results.sort(Comparator.comparingDouble(Result::cpuMicrosPerMb));
                Result c = results.get(results.size() / 2);
                System.out.printf("| %s | %d | %.1f | %.0f | %.0f | %.1f | %.2f |%n", policy.name().toLowerCase(), batch,
                        m.mbPerSecond(), m.recordsPerSecond(), m.recordsPerSecond() / batch, d.mbPerSecondDurable(),
                        c.cpuMicrosPerMb() / 1e3);
                if (policy == FsyncPolicy.NEVER && batch == 1000) {
                    System.out.println();
                    System.out.printf("never/1000 vs dd: appends-only %.0f%% of dd without fsync (%.0f MB/s); "
                                    + "incl. final fsync %.0f%% of dd conv=fsync (%.0f MB/s)%n%n",
                            100 * m.mbPerSecond() / ddCache, ddCache, 100 * d.mbPerSecondDurable() / ddFsync, ddFsync);
                }
            }
        }
    }

    /**
     * {@code cpuNanos}: CPU time (user + system) of the appending thread over the timed appends. Unlike wall time,
     * it barely moves when other processes load the machine, so it is the steadier measure of the append path.
     */
    private record Result(long records, long nanos, long nanosWithClose, long cpuNanos) {
        double cpuMicrosPerMb() {
            return cpuNanos / 1e3 / (records * (double) RECORD_BYTES / 1e6);
        }

        double mbPerSecond() {
            return records * (double) RECORD_BYTES / 1e6 / (nanos / 1e9);
        }

        double mbPerSecondDurable() {
            return records * (double) RECORD_BYTES / 1e6 / (nanosWithClose / 1e9);
        }

        double recordsPerSecond() {
            return records / (nanos / 1e9);
        }
    }

    private Result appendRun(FsyncPolicy policy, int batchSize, int run) throws IOException {
        Path data = dir.resolve("append-" + policy + "-" + batchSize + "-" + run);
        deleteTree(data);
        Random random = new Random(42 + batchSize);
        List<AppendRecord> batch = new ArrayList<>(batchSize);
        for (int i = 0; i < batchSize; i++) {
            byte[] value = new byte[RECORD_BYTES];
            random.nextBytes(value);
            batch.add(new AppendRecord(("key-" + i).getBytes(StandardCharsets.UTF_8), value, List.of(), 1_700_000_000_000L));
        }
        TopicConfig config = TopicConfig.DEFAULTS;
        long records = 0;
        long start;
        long appended;
        long closed;
        long cpuStart;
        long cpuEnd;
        PartitionWriter writer = new HotLog(data).writer(new TopicPartition("bench", 0), policy, Duration.ofSeconds(1),
                Clock.systemUTC());
        try {
            // Warm-up outside the timed window (JIT, the first segment and its checkpoint): up to 20k records or 1 s.
            long warmUpEnd = System.nanoTime() + 1_000_000_000L;
            for (int i = 0; i < Math.max(1, 20_000 / batchSize) && System.nanoTime() < warmUpEnd; i++) {
                writer.append(batch, ProducerIdentity.NONE, config);
            }
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            cpuStart = THREADS.getCurrentThreadCpuTime();
            start = System.nanoTime();
            while (records * RECORD_BYTES < maxBytes && System.nanoTime() < deadline) {
                writer.append(batch, ProducerIdentity.NONE, config);
                records += batchSize;
            }
            appended = System.nanoTime();
            cpuEnd = THREADS.getCurrentThreadCpuTime();
        } finally {
            writer.close();
        }
        closed = System.nanoTime();
        deleteTree(data);
        return new Result(records, appended - start, closed - start, cpuEnd - cpuStart);
    }

    private double median(java.util.concurrent.Callable<Double> run) throws Exception {
        List<Double> xs = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            xs.add(run.call());
        }
        xs.sort(Double::compare);
        return xs.get(xs.size() / 2);
    }

    static void deleteTree(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
