package io.tierlog.tiering;

import io.tierlog.log.BatchRead;
import io.tierlog.log.ErrorType;
import io.tierlog.log.LogFixture;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.testkit.FaultInjectingProxy;
import io.tierlog.testkit.ManualClock;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cold reads over the real S3 protocol (S3ObjectStore to an in-process S3Proxy, which counts the ranged GETs it
 * serves; the test kit's fault proxy in between for failures): a sequential replay reads large ranges, a point read
 * a small one, concurrent readers and a failing store never get wrong records.
 */
class ColdReadRangesS3Test {
    private static final int MIB = 1024 * 1024;
    private static final AtomicInteger BUCKETS = new AtomicInteger();
    private static S3ProxyServer server;

    @TempDir
    Path tmp;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private TopicPartition tp;
    private Path dataDir;
    private String bucket;
    private List<LogRecord> expected;
    private List<ColdSegment> segments;

    @BeforeAll
    static void startServer() {
        server = S3ProxyServer.started();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** Writes about {@code mib} MiB in segments of {@code segmentBytes} and tiers all but the active one. */
    private void tieredLog(int mib, int segmentBytes) {
        bucket = "ranges-" + BUCKETS.incrementAndGet();
        server.createBucket(bucket);
        dataDir = tmp.resolve("hot");
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, segmentBytes));
        new TopicStore(dataDir, clock).create("orders", 1, config);
        tp = new TopicPartition("orders", 0);
        LogFixture hot = new LogFixture(dataDir, tp, clock);
        closeables.add(hot);
        // Batches of 50 records of about 160 bytes: about 8 KB each.
        hot.append(mib * 130, 50, config);
        TieredStorage tierer = storage(server.endpoint(), TieringConfig.DEFAULTS);
        // Setup, not what this class tests: in a full suite a PUT here has failed "Error writing request body to
        // server" on every attempt once (CI, 2026-12-04); the service's tierer pauses and runs the next pass, so do so.
        boolean tiered = false;
        for (int pass = 0; pass < 3 && !tiered; pass++) {
            tiered = !tierer.runTieringPass().storeUnavailable();
            if (!tiered) {
                clock.advance(TieringConfig.DEFAULTS.backoffCap()); // past the tierer's pause
            }
        }
        assertThat(tiered).as("a tiering pass reached S3Proxy").isTrue();
        Manifest m = tierer.manifests().load(tp);
        segments = m.segments();
        expected = hot.readHot(0).stream().filter(r -> r.offset() < m.coldEnd()).toList();
    }

    private TieredStorage storage(URI endpoint, TieringConfig config) {
        ObjectStore store = S3ObjectStore.builder()
                .endpointOverride(endpoint)
                .region(S3ProxyServer.REGION)
                .credentials(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)
                .pathStyle(true)
                .bucket(bucket)
                .keyPrefix("cluster-a")
                .maxAttempts(2)
                .backoffBase(Duration.ofMillis(10))
                .connectTimeout(Duration.ofSeconds(2))
                .socketTimeout(Duration.ofSeconds(10))
                .build();
        closeables.add(store);
        TieredStorage ts = new TieredStorage(dataDir, tmp.resolve("cache-" + closeables.size()), store, config, clock,
                new Random(closeables.size()), SegmentEvictionListener.NONE);
        closeables.add(ts);
        return ts;
    }

    private long coldBytes() {
        return segments.stream().mapToLong(ColdSegment::sizeBytes).sum();
    }

    private List<S3ProxyServer.RangedGet> segmentGets() {
        return server.rangedGets().stream().filter(g -> g.key().endsWith(".log")).toList();
    }

    @Test
    void aSequentialReplayOfNMibMakesAtMostNOverFourRangedGetsWithTheDefaults() {
        tieredLog(36, 8 * MIB);
        assertThat(segments).hasSizeGreaterThanOrEqualTo(4);
        TieredStorage ts = storage(server.endpoint(), TieringConfig.DEFAULTS);
        server.clearRangedGets();

        List<LogRecord> read = replay(ts, 0, 2000, 4 * MIB);

        assertSameRecords(read, expected);
        double mib = coldBytes() / (double) MIB;
        List<S3ProxyServer.RangedGet> gets = segmentGets();
        assertThat((double) gets.size()).as("ranged GETs for %.1f MiB: %s", mib, gets).isLessThanOrEqualTo(mib / 4);
        assertThat(ts.stats().rangeGetBytes()).as("each byte once").isEqualTo(coldBytes());
        assertThat(server.rangedGets()).as("only segment objects are read in ranges").hasSameSizeAs(gets);
    }

    @Test
    void aPointReadFetchesOneSmallRange() {
        tieredLog(24, 8 * MIB);
        TieredStorage ts = storage(server.endpoint(), TieringConfig.DEFAULTS);
        ColdSegment second = segments.get(1);
        long middle = second.baseOffset() + (second.nextOffset() - second.baseOffset()) / 2;
        server.clearRangedGets();

        ReadResult r = ts.reader().read(tp, middle, 1, 1 << 20);

        assertThat(r.records()).extracting(LogRecord::offset).containsExactly(middle);
        assertThat(r.records().get(0).value()).isEqualTo(expected.get((int) middle).value());
        List<S3ProxyServer.RangedGet> gets = segmentGets();
        // One chunk, or two if the sidecar entry before the offset lies in the chunk before the record's.
        assertThat(gets).hasSizeBetween(1, 2);
        assertThat(ts.stats().rangeGetBytes()).isLessThanOrEqualTo(2L * TieringConfig.DEFAULTS.chunkBytes());
    }

    @Test
    void concurrentReadersAcrossSegmentBoundariesGetExactlyTheLogsRecordsWithinTheMemoryBound() throws Exception {
        tieredLog(6, MIB);
        // 64 KiB chunks, ranges of up to 256 KiB, 1 MiB ahead; memory for about one reader's window only, so the
        // readers evict each other's chunks.
        TieringConfig config = TieringConfig.DEFAULTS.withChunkBytes(64 * 1024).withReadAhead(MIB, 4)
                .withRanges(256 * 1024, 2L * MIB);
        TieredStorage ts = storage(server.endpoint(), config);
        int readers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<List<LogRecord>>> results = new ArrayList<>();
        List<Long> starts = new ArrayList<>();
        try {
            for (int i = 0; i < readers; i++) {
                // From offset 0, and from a few records before a segment's end, so that reads cross boundaries.
                long from = i == 0 ? 0 : segments.get(i).lastOffset() - 3;
                boolean batches = i % 2 == 1;
                starts.add(from);
                results.add(pool.submit(() -> {
                    start.await();
                    return batches ? replayBatches(ts, from, 700, 300_000) : replay(ts, from, 700, 300_000);
                }));
            }
            start.countDown();
            for (int i = 0; i < readers; i++) {
                long from = starts.get(i);
                assertSameRecords(results.get(i).get(), expected.subList((int) from, expected.size()));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(ts.chunkCache().memoryBytes()).isLessThanOrEqualTo(config.readAheadMemoryBytes());
        assertThat(ts.chunkCache().unreadBytes()).isLessThanOrEqualTo(config.readAheadMemoryBytes() / 2);
        assertThat(ts.chunkCache().inFlightBytes()).isZero();
    }

    @Test
    void theStoreFailingUnderTheReadAheadIsColdTierUnavailableNeverWrongRecords() {
        tieredLog(6, MIB);
        FaultInjectingProxy proxy = FaultInjectingProxy.start(server.endpoint());
        closeables.add(proxy);
        TieringConfig config = TieringConfig.DEFAULTS.withChunkBytes(64 * 1024).withReadAhead(MIB, 4)
                .withRanges(256 * 1024, 4L * MIB);
        TieredStorage ts = storage(proxy.endpoint(), config);
        List<LogRecord> read = new ArrayList<>();
        // Slow answers, so that read-ahead GETs are on the wire when the store goes away.
        proxy.delayResponses(Duration.ofMillis(50));
        ReadResult first = ts.reader().read(tp, 0, 700, 300_000);
        read.addAll(first.records());
        proxy.refuseConnections(); // cuts the GETs in flight and refuses new ones

        long next = first.nextOffset();
        TierlogException failure = null;
        while (failure == null && next < expected.size()) {
            try {
                ReadResult r = ts.reader().read(tp, next, 700, 300_000);
                read.addAll(r.records());
                next = r.nextOffset();
            } catch (TierlogException e) {
                failure = e;
            }
        }
        assertThat(failure).as("a read needing bytes the store cannot give fails").isNotNull();
        assertThat(failure.type()).isEqualTo(ErrorType.COLD_TIER_UNAVAILABLE);

        proxy.passThrough();
        read.addAll(replay(ts, next, 700, 300_000));
        assertSameRecords(read, expected);
    }

    /** Records from {@code from} to the cold end, read as a consumer does (each read where the last stopped). */
    private List<LogRecord> replay(TieredStorage ts, long from, int maxRecords, int maxBytes) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (next < expected.size()) {
            ReadResult r = ts.reader().read(tp, next, maxRecords, maxBytes);
            assertThat(r.records()).isNotEmpty();
            out.addAll(r.records());
            next = r.nextOffset();
        }
        return out;
    }

    /** As {@link #replay}, by whole batches, decoded here. */
    private List<LogRecord> replayBatches(TieredStorage ts, long from, int maxRecords, int maxBytes) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (next < expected.size()) {
            BatchRead r = ts.reader().readBatches(tp, next, maxRecords, maxBytes);
            assertThat(r.isEmpty()).isFalse();
            List<LogRecord> decoded = new ArrayList<>();
            ByteBuffer bytes = r.buffer();
            while (bytes.hasRemaining()) {
                ByteBuffer batch = bytes.slice().limit((int) RecordBatchCodec.announcedSize(bytes.slice()));
                assertThat(RecordBatchCodec.validate(batch)).isNull();
                RecordBatchCodec.decode(batch, next, Integer.MAX_VALUE, decoded);
                bytes.position(bytes.position() + batch.limit());
            }
            out.addAll(decoded);
            next = r.nextOffset();
            r.close();
        }
        return out;
    }

    private static void assertSameRecords(List<LogRecord> actual, List<LogRecord> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            LogRecord a = actual.get(i);
            LogRecord e = expected.get(i);
            assertThat(a.offset()).isEqualTo(e.offset());
            assertThat(a.key()).isEqualTo(e.key());
            assertThat(a.value()).as("value at offset %d", e.offset()).isEqualTo(e.value());
        }
    }
}
