package io.tierlog.bench.cold;

import io.tierlog.bench.compare.Workspace;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.FaultInjectingProxy;
import io.tierlog.testkit.S3ProxyServer;
import io.tierlog.tiering.ColdSegment;
import io.tierlog.tiering.Manifest;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * {@code cold-inprocess}: the cold tier's read path without HTTP, in this one JVM (moved here from
 * storage/tiering's test tree). An in-memory S3Proxy ({@link S3ProxyServer}); a hot partition of {@code --mib} MiB
 * (16 MiB segments, ~150-byte records, 200 per batch) is tiered straight to it by {@link TieredStorage} and evicted
 * from the hot volume. The same objects are then read through the test kit's {@link FaultInjectingProxy}, once per
 * injected first-byte latency, three ways: raw ranged GETs of 1 MiB chunks with 8 in flight, the
 * {@code ColdReader} with read-ahead (32 MiB in GETs of up to 8 MiB, 8 fetch threads: the defaults) and the {@code ColdReader} fetching
 * one chunk at a time; each {@code --runs} times with a fresh chunk cache (deleted afterwards), median shown, after
 * one unreported warm-up pass of each without latency. Requests are counted at the ObjectStore SPI
 * ({@link CountingStore}). Prints to stdout.
 */
@Command(name = "cold-inprocess", mixinStandardHelpOptions = true,
        description = "Cold replay through TieredStorage/ColdReader in-process (no HTTP) vs raw ranged GETs, "
                + "against an in-memory S3Proxy behind a latency proxy.")
public final class ColdInProcessCommand implements Callable<Integer> {
    private static final int CHUNK = 1024 * 1024;
    private static final int CONCURRENCY = 8;

    @Option(names = "--mib", defaultValue = "128", description = "MiB of log tiered and replayed (default: ${DEFAULT-VALUE}).")
    int mib;

    @Mixin
    ReplayRuns replay;

    private Path tmp;
    private int caches;

    @Override
    public Integer call() throws Exception {
        tmp = Files.createTempDirectory("tierlog-cold-inprocess-");
        try (S3ProxyServer server = S3ProxyServer.started()) {
            server.createBucket("bench");
            run(server);
        } finally {
            Workspace.deleteTree(tmp);
        }
        return 0;
    }

    private void run(S3ProxyServer server) throws Exception {
        Clock clock = Clock.systemUTC();
        TopicPartition tp = new TopicPartition("bench", 0);
        Path data = tmp.resolve("hot");
        TopicStore topics = new TopicStore(data, clock);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16 * 1024 * 1024));
        topics.create("bench", 1, config);
        try (PartitionWriter writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            // ~150 B records, 200 per batch: ~30 KB batches.
            append(writer, mib * 1024 * 1024 / (200 * 150), 200, config, clock);
            append(writer, 1, 1, config, clock); // roll, so the last full segment is sealed
        }
        TieringConfig tiering = TieringConfig.DEFAULTS.withCacheBytes(4L * mib * CHUNK);
        Manifest m;
        try (ObjectStore s3 = store(server.endpoint())) {
            CountingStore store = new CountingStore(s3);
            try (TieredStorage tierer = new TieredStorage(data, tmp.resolve("cache-t"), store, tiering, clock,
                    new Random(1), SegmentEvictionListener.NONE)) {
                long t = System.nanoTime();
                tierer.runTieringPass();
                double tierSec = (System.nanoTime() - t) / 1e9;
                m = tierer.manifests().load(tp);
                long bytes = m.totalBytes();
                System.out.printf("tiered %d segments, %.1f MiB in %.2f s (%.1f MB/s)%n", m.segments().size(),
                        bytes / 1048576.0, tierSec, bytes / 1e6 / tierSec);
                System.out.printf("requests per GiB tiered: %s%n", store.perGib(gib(bytes)));
                topics.updateConfig("bench", Map.of(TopicConfig.LOCAL_RETENTION_BYTES, 0));
                tierer.runRetentionPass();
            }
        }
        long bytes = m.totalBytes();
        List<RangedGets.Segment> segments = new ArrayList<>();
        for (ColdSegment s : m.segments()) {
            segments.add(new RangedGets.Segment(s.segmentKey(), s.sizeBytes()));
        }
        // Every reader goes through the proxy in both settings, so the injected latency is the only difference.
        try (FaultInjectingProxy proxy = FaultInjectingProxy.start(server.endpoint());
             ObjectStore viaProxy = store(proxy.endpoint())) {
            CountingStore counted = new CountingStore(viaProxy);
            // One unreported pass of each reader without latency, so the first measured setting does not pay for JIT.
            RangedGets.read(counted, segments, CHUNK, CONCURRENCY);
            replay(data, counted, readAhead(tiering), tp, bytes, clock);
            replay(data, counted, tiering.withReadAhead(0, 1), tp, bytes, clock);
            for (int latency : replay.latenciesMs) {
                proxy.delayResponses(Duration.ofMillis(latency));
                System.out.printf("%n== first-byte latency %d ms per request, %d repetitions, medians ==%n", latency,
                        replay.runs);
                Result raw = median(() -> {
                    counted.resetCounts();
                    Replay r = RangedGets.read(counted, segments, CHUNK, CONCURRENCY);
                    return new Result(r.nanos(), r.firstNanos(), counted.perGib(gib(bytes)));
                });
                Result ahead = median(() -> replay(data, counted, readAhead(tiering), tp,
                        bytes, clock));
                Result serial = median(() -> replay(data, counted, tiering.withReadAhead(0, 1), tp, bytes, clock));
                print("raw ranged GETs, " + CONCURRENCY + " in flight", raw, bytes);
                print("cold reader, read-ahead " + (TieringConfig.DEFAULTS.readAheadBytes() >> 20) + " MiB / "
                        + CONCURRENCY + " fetch threads",
                        ahead, bytes);
                print("cold reader, one chunk at a time", serial, bytes);
                System.out.printf("latency %d ms: read-ahead/raw = %.2f (target >= 0.80), read-ahead/serial = "
                                + "%.2f (target >= 3.0)%n", latency, ahead.mbps(bytes) / raw.mbps(bytes),
                        ahead.mbps(bytes) / serial.mbps(bytes));
            }
        }
    }

    private static ObjectStore store(URI endpoint) {
        return S3ObjectStore.builder().endpointOverride(endpoint).region(S3ProxyServer.REGION)
                .credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY).pathStyle(true).bucket("bench")
                .build();
    }

    private static double gib(long bytes) {
        return bytes / (1024.0 * 1024 * 1024);
    }

    /** Appends {@code batches} batches of {@code perBatch} ~150-byte JSON records stamped with the clock. */
    private static void append(PartitionWriter writer, int batches, int perBatch, TopicConfig config, Clock clock) {
        for (int b = 0; b < batches; b++) {
            List<AppendRecord> records = new ArrayList<>(perBatch);
            for (int i = 0; i < perBatch; i++) {
                String v = "{\"batch\":" + b + ",\"i\":" + i + ",\"pad\":\"" + "x".repeat(120) + "\"}";
                records.add(new AppendRecord(("k" + i).getBytes(StandardCharsets.UTF_8),
                        v.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
            }
            writer.append(records, ProducerIdentity.NONE, config);
        }
    }

    /** The reader with the default read-ahead (bytes ahead, range size) and {@link #CONCURRENCY} fetch threads. */
    private static TieringConfig readAhead(TieringConfig tiering) {
        return tiering.withReadAhead(TieringConfig.DEFAULTS.readAheadBytes(), CONCURRENCY);
    }

    /** One repetition: wall time, time to the first chunk or batch, and the SPI requests per GiB it issued. */
    private record Result(long nanos, long firstNanos, String requests) {
        double mbps(long bytes) {
            return bytes / 1e6 / (nanos / 1e9);
        }
    }

    private interface Run {
        Result call() throws Exception;
    }

    /** Runs {@code run} {@code --runs} times and keeps the run with the median wall time (and the median first). */
    private Result median(Run run) throws Exception {
        List<Result> results = new ArrayList<>();
        for (int i = 0; i < replay.runs; i++) {
            results.add(run.call());
        }
        results.sort(Comparator.comparingLong(Result::nanos));
        List<Long> firsts = results.stream().map(Result::firstNanos).sorted().toList();
        Result mid = results.get(results.size() / 2);
        return new Result(mid.nanos(), firsts.get(firsts.size() / 2), mid.requests());
    }

    private static void print(String name, Result r, long bytes) {
        System.out.printf("  %-58s %7.1f MB/s  first %7.1f ms  requests per GiB: %s%n", name, r.mbps(bytes),
                r.firstNanos() / 1e6, r.requests());
    }

    /** A ColdReader replay from offset 0 to the cold end on a fresh chunk cache, deleted afterwards. */
    private Result replay(Path data, CountingStore store, TieringConfig config, TopicPartition tp, long bytes,
                          Clock clock) {
        // A fresh chunk cache per repetition, so every run is cold; deleted afterwards so ~20 replays do not
        // pile gigabytes of dirty pages onto the disk while later runs are measured.
        Path cache = tmp.resolve("cache-" + caches++);
        try (TieredStorage ts = new TieredStorage(data, cache, store, config, clock, new Random(2),
                SegmentEvictionListener.NONE)) {
            ts.manifests().load(tp);
            store.resetCounts();
            long start = System.nanoTime();
            long firstBatch = -1;
            long next = 0;
            long records = 0;
            while (true) {
                ReadResult r = ts.reader().read(tp, next, 500, 1 << 20);
                if (firstBatch < 0) {
                    firstBatch = System.nanoTime() - start;
                }
                if (r.records().isEmpty()) {
                    break;
                }
                records += r.records().size();
                next = r.nextOffset();
            }
            long nanos = System.nanoTime() - start;
            if (records == 0) {
                throw new IllegalStateException("replay read no records");
            }
            return new Result(nanos, firstBatch, store.perGib(gib(bytes)));
        } finally {
            Workspace.deleteTree(cache);
        }
    }
}
