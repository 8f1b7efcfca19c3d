package io.tierlog.bench.append;

import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import org.HdrHistogram.Histogram;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Appends per second and append latency of one partition under {@code fsync=always} with 1 to N appenders sharing
 * one {@link PartitionWriter}: how far the group commit lets concurrent appends share their fsyncs. Each append is
 * {@code --batch} records of 1 KiB; each case runs {@code --seconds} in a fresh directory.
 *
 * <p>Arguments (all optional): {@code --dir <path>} (default {@code ./target/bench-data}), {@code --threads 1,8}
 * (default), {@code --batch N} (default 100), {@code --seconds S} (default 5). Prints one line per case.
 */
public final class GroupCommitBenchmark {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of("target/bench-data");
        List<Integer> threadCounts = List.of(1, 8);
        int batch = 100;
        int seconds = 5;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--dir" -> dir = Path.of(args[i + 1]);
                case "--threads" -> threadCounts = java.util.Arrays.stream(args[i + 1].split(","))
                        .map(Integer::parseInt).toList();
                case "--batch" -> batch = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(dir);
        for (int threads : threadCounts) {
            System.out.println(run(Files.createTempDirectory(dir, "group-commit"), threads, batch, seconds));
        }
    }

    private static String run(Path dir, int threads, int batch, int seconds) throws Exception {
        List<AppendRecord> records = new ArrayList<>();
        byte[] value = new byte[1024];
        new java.util.Random(42).nextBytes(value);
        for (int i = 0; i < batch; i++) {
            records.add(new AppendRecord(null, value, List.of(), System.currentTimeMillis()));
        }
        TopicPartition tp = new TopicPartition("group-commit", 0);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (PartitionWriter writer = new HotLog(dir).writer(tp, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                Clock.systemUTC())) {
            writer.append(records, ProducerIdentity.NONE, TopicConfig.DEFAULTS); // opens the segment
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Future<Histogram>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    Histogram latency = new Histogram(3);
                    while (System.nanoTime() < end) {
                        long start = System.nanoTime();
                        AppendResult ignored = writer.append(records, ProducerIdentity.NONE, TopicConfig.DEFAULTS);
                        latency.recordValue((System.nanoTime() - start) / 1000);
                    }
                    return latency;
                }));
            }
            Histogram all = new Histogram(3);
            for (Future<Histogram> f : results) {
                all.add(f.get());
            }
            double appendsPerSecond = all.getTotalCount() / (double) seconds;
            return String.format("fsync=always, %d appender(s), %d x 1 KiB per append: %.0f appends/s, %.1f MB/s, "
                            + "p50 %.2f ms, p99 %.2f ms", threads, batch, appendsPerSecond,
                    appendsPerSecond * batch * 1024 / 1e6, all.getValueAtPercentile(50) / 1000.0,
                    all.getValueAtPercentile(99) / 1000.0);
        } finally {
            pool.shutdownNow();
        }
    }
}
