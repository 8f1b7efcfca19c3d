package io.tierlog.tiering;

import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Cold replay benchmark (docs/BENCHMARKS.md), run on demand only:
 * {@code mvn -o -pl storage/tiering test -Dtest=ColdReplayBenchmark -Dtierlog.bench=true [-Dtierlog.bench.mib=128]}.
 * In one run against one in-process S3Proxy: raw ranged-GET throughput with N concurrent GETs, the ColdReader
 * with read-ahead (N GETs in flight), and the ColdReader fetching one chunk at a time; plus S3 requests per GiB
 * tiered and replayed (counted by the {@link FaultyStore} decorator).
 */
@EnabledIfSystemProperty(named = "tierlog.bench", matches = "true")
class ColdReplayBenchmark {
    private static final int CHUNK = 1024 * 1024;
    private static final int CONCURRENCY = 8;

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

            // 1. Raw ranged GETs, CONCURRENCY in flight, same chunk size.
            ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
            List<Future<Integer>> gets = new ArrayList<>();
            t = System.nanoTime();
            for (ColdSegment s : m.segments()) {
                for (long off = 0; off < s.sizeBytes(); off += CHUNK) {
                    long o = off;
                    gets.add(pool.submit(() -> s3.getRange(s.segmentKey(),
                            ByteRange.of(o, Math.min(CHUNK, s.sizeBytes() - o))).length));
                }
            }
            long raw = 0;
            for (Future<Integer> f : gets) {
                raw += f.get();
            }
            double rawSec = (System.nanoTime() - t) / 1e9;
            pool.shutdown();
            System.out.printf("raw ranged GETs (%d in flight): %.1f MB/s%n", CONCURRENCY, raw / 1e6 / rawSec);

            // 2. ColdReader with read-ahead; 3. one chunk at a time.
            replay("cold reader, read-ahead " + CONCURRENCY + " chunks / " + CONCURRENCY + " GETs in flight", data,
                    store, tiering.withReadAhead(CONCURRENCY, CONCURRENCY), tp, bytes, gib, clock, "cache-a");
            replay("cold reader, one chunk at a time", data, store, tiering.withReadAhead(0, 1), tp, bytes, gib,
                    clock, "cache-b");
            s3.close();
        }
    }

    private void replay(String name, Path data, FaultyStore store, TieringConfig config, TopicPartition tp,
                        long bytes, double gib, Clock clock, String cache) {
        try (TieredStorage ts = new TieredStorage(data, tmp.resolve(cache), store, config, clock, new Random(2),
                SegmentEvictionListener.NONE)) {
            ts.manifests().load(tp);
            store.resetCounts();
            long start = System.nanoTime();
            long firstByte = -1;
            long next = 0;
            long records = 0;
            while (true) {
                ReadResult r = ts.reader().read(tp, next, 500, 1 << 20);
                if (firstByte < 0) {
                    firstByte = System.nanoTime() - start;
                }
                if (r.records().isEmpty()) {
                    break;
                }
                records += r.records().size();
                next = r.nextOffset();
            }
            double sec = (System.nanoTime() - start) / 1e9;
            System.out.printf("%s: %d records, %.1f MB/s, first batch after %.1f ms; requests per GiB replayed: %s%n",
                    name, records, bytes / 1e6 / sec, firstByte / 1e6, perGib(store, gib));
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
