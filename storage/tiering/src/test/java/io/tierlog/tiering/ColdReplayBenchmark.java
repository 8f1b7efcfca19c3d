package io.tierlog.tiering;

import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.FaultInjectingProxy;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * Cold replay benchmark (docs/BENCHMARKS.md), run on demand only:
 * {@code mvn -o -pl storage/tiering test -Dtest=ColdReplayBenchmark -Dtierlog.bench=true [-Dtierlog.bench.mib=128]}.
 * In one run against one in-process S3Proxy: the partition is tiered directly, then read back through a
 * {@link FaultInjectingProxy} once per first-byte latency ({@code -Dtierlog.bench.latencies.ms=0,20}) three ways:
 * raw ranged GETs with N in flight, the ColdReader with read-ahead (N GETs in flight), and the ColdReader fetching
 * one chunk at a time; each {@code -Dtierlog.bench.reps} (3) times, median shown; plus S3 requests per GiB tiered
 * and replayed (counted by the {@link FaultyStore} decorator).
 */
@EnabledIfSystemProperty(named = "tierlog.bench", matches = "true")
class ColdReplayBenchmark {
    private static final int CHUNK = 1024 * 1024;
    private static final int CONCURRENCY = 8;
    private static final int REPS = Integer.getInteger("tierlog.bench.reps", 3);

    private int caches;

    @TempDir
    Path tmp;

    @Test
    void coldReplay() throws Exception {
        int mib = Integer.getInteger("tierlog.bench.mib", 128);
        try (S3ProxyServer server = S3ProxyServer.started()) {
            server.createBucket("bench");
            ObjectStore s3 = S3ObjectStore.builder().endpointOverride(server.endpoint()).region(S3ProxyServer.REGION)
                    .credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY).pathStyle(true).bucket("bench")
                    .build();
            FaultyStore store = new FaultyStore(s3);
            Clock clock = Clock.systemUTC();
            Path data = tmp.resolve("hot");
            TopicStore topics = new TopicStore(data, clock);
            TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16 * 1024 * 1024));
            topics.create("bench", 1, config);
            TopicPartition tp = new TopicPartition("bench", 0);
            try (HotLog hot = new HotLog(data, tp, clock)) {
                // ~150 B records, 200 per batch: ~30 KB batches.
                hot.append(mib * 1024 * 1024 / (200 * 150), 200, config);
                hot.append(1, 1, config); // roll, so the last full segment is sealed
            }
            TieringConfig tiering = TieringConfig.DEFAULTS.withCacheBytes(4L * mib * CHUNK);
            TieredStorage tierer = new TieredStorage(data, tmp.resolve("cache-t"), store, tiering, clock,
                    new Random(1), SegmentEvictionListener.NONE);
            store.resetCounts();
            long t = System.nanoTime();
            tierer.runTieringPass();
            double tierSec = (System.nanoTime() - t) / 1e9;
            Manifest m = tierer.manifests().load(tp);
            long bytes = m.totalBytes();
            double gib = bytes / (1024.0 * 1024 * 1024);
            System.out.printf("tiered %d segments, %.1f MiB in %.2f s (%.1f MB/s)%n", m.segments().size(),
                    bytes / 1048576.0, tierSec, bytes / 1e6 / tierSec);
            System.out.printf("requests per GiB tiered: %s%n", perGib(store, gib));
            topics.updateConfig("bench", Map.of(TopicConfig.LOCAL_RETENTION_BYTES, 0));
            tierer.runRetentionPass();
            tierer.close();
            s3.close();

            // The same objects read through the proxy, first relaying at once, then holding each response's first
            // byte (remote S3's per-GET latency). Every reader goes through the proxy in both settings, so the
            // injected latency is the only difference.
            try (FaultInjectingProxy proxy = FaultInjectingProxy.start(server.endpoint())) {
                warmUp(proxy, data, tiering, tp, m, bytes, gib, clock);
                for (Duration latency : latencies()) {
                    proxy.delayResponses(latency);
                    ObjectStore viaProxy = S3ObjectStore.builder().endpointOverride(proxy.endpoint())
                            .region(S3ProxyServer.REGION).credentials(S3ProxyServer.ACCESS_KEY,
                                    S3ProxyServer.SECRET_KEY).pathStyle(true).bucket("bench").build();
                    FaultyStore counted = new FaultyStore(viaProxy);
                    System.out.printf("%n== first-byte latency %d ms per request, %d repetitions, medians ==%n",
                            latency.toMillis(), REPS);
                    Result raw = median(() -> rawGets(counted, m, gib));
                    Result ahead = median(() -> replay(data, counted, tiering.withReadAhead(CONCURRENCY, CONCURRENCY),
                            tp, bytes, gib, clock));
                    Result serial = median(() -> replay(data, counted, tiering.withReadAhead(0, 1), tp, bytes, gib,
                            clock));
                    print("raw ranged GETs, " + CONCURRENCY + " in flight", raw, bytes);
                    print("cold reader, read-ahead " + CONCURRENCY + " chunks / " + CONCURRENCY + " GETs in flight",
                            ahead, bytes);
                    print("cold reader, one chunk at a time", serial, bytes);
                    System.out.printf("latency %d ms: read-ahead/raw = %.2f (target >= 0.80), read-ahead/serial = "
                                    + "%.2f (target >= 3.0)%n", latency.toMillis(), ahead.mbps(bytes) / raw.mbps(bytes),
                            ahead.mbps(bytes) / serial.mbps(bytes));
                    viaProxy.close();
                }
            }
        }
    }

    /** One unreported pass of each reader without latency, so the first measured setting does not pay for JIT. */
    private void warmUp(FaultInjectingProxy proxy, Path data, TieringConfig tiering, TopicPartition tp, Manifest m,
                        long bytes, double gib, Clock clock) throws Exception {
        proxy.delayResponses(Duration.ZERO);
        try (ObjectStore viaProxy = S3ObjectStore.builder().endpointOverride(proxy.endpoint())
                .region(S3ProxyServer.REGION).credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)
                .pathStyle(true).bucket("bench").build()) {
            FaultyStore counted = new FaultyStore(viaProxy);
            rawGets(counted, m, gib);
            replay(data, counted, tiering.withReadAhead(CONCURRENCY, CONCURRENCY), tp, bytes, gib, clock);
            replay(data, counted, tiering.withReadAhead(0, 1), tp, bytes, gib, clock);
        }
    }

    /** {@code -Dtierlog.bench.latencies.ms=0,20}: the first-byte latencies to run, in ms. */
    private static List<Duration> latencies() {
        List<Duration> out = new ArrayList<>();
        for (String ms : System.getProperty("tierlog.bench.latencies.ms", "0,20").split(",")) {
            out.add(Duration.ofMillis(Long.parseLong(ms.trim())));
        }
        return out;
    }

    /** One repetition: wall time, time to the first chunk or batch, and the SPI requests per GiB it issued. */
    private record Result(long nanos, long firstNanos, String requests) {
        double mbps(long bytes) {
            return bytes / 1e6 / (nanos / 1e9);
        }
    }

    /** Runs {@code run} {@link #REPS} times and keeps the run with the median wall time. */
    private static Result median(Callable<Result> run) throws Exception {
        List<Result> results = new ArrayList<>();
        for (int i = 0; i < REPS; i++) {
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

    /** Raw ranged GETs of the segments in 1 MiB chunks, {@link #CONCURRENCY} in flight, no decoding. */
    private static Result rawGets(FaultyStore store, Manifest m, double gib) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
        try {
            store.resetCounts();
            List<Future<Long>> gets = new ArrayList<>();
            long start = System.nanoTime();
            for (ColdSegment s : m.segments()) {
                for (long off = 0; off < s.sizeBytes(); off += CHUNK) {
                    long o = off;
                    gets.add(pool.submit(() -> {
                        store.getRange(s.segmentKey(), ByteRange.of(o, Math.min(CHUNK, s.sizeBytes() - o)));
                        return System.nanoTime();
                    }));
                }
            }
            long first = gets.get(0).get() - start;
            for (Future<Long> f : gets) {
                f.get();
            }
            return new Result(System.nanoTime() - start, first, perGib(store, gib));
        } finally {
            pool.shutdown();
        }
    }

    private Result replay(Path data, FaultyStore store, TieringConfig config, TopicPartition tp, long bytes,
                          double gib, Clock clock) {
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
                throw new AssertionError("replay read no records");
            }
            return new Result(nanos, firstBatch, perGib(store, gib));
        } finally {
            deleteTree(cache);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete chunk cache " + root, e);
        }
    }

    private static String perGib(FaultyStore s, double gib) {
        StringBuilder out = new StringBuilder();
        for (String op : List.of("put", "putIfAbsent", "get", "getRange", "head", "list", "deleteAll")) {
            if (s.count(op) > 0) {
                out.append(op).append('=').append(Math.round(s.count(op) / gib)).append(' ');
            }
        }
        return out.toString().trim();
    }
}
