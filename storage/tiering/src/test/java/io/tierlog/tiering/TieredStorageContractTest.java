package io.tierlog.tiering;

import io.tierlog.log.LogFixture;
import io.tierlog.log.BatchRead;
import io.tierlog.log.ErrorType;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tiering contract, run against every object-store backend (filesystem, S3 on S3Proxy, LocalStack where
 * Docker exists). Real hot segments, real stores; faults come from {@link FaultyStore} (a decorator that
 * fails chosen calls before they reach the backend) or from stopping the S3 server.
 */
abstract class TieredStorageContractTest {
    static final TopicConfig CONFIG = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16384));
    /** 4 KiB chunks, ranges of up to 4 chunks, 8 chunks ahead, 16 in memory (8 landed, 8 in flight). */
    static final TieringConfig TIERING = TieringConfig.DEFAULTS.withChunkBytes(4096).withReadAhead(8 * 4096, 4)
            .withRanges(4 * 4096, 16 * 4096);

    @TempDir
    Path tmp;
    ManualClock clock;
    Path dataDir;
    ObjectStore backend;
    FaultyStore store;
    TopicStore topics;
    TopicPartition tp;
    final List<AutoCloseable> closeables = new ArrayList<>();

    /** A new client over this test's bucket; every call sees the same objects. */
    protected abstract ObjectStore openStore();

    /** Takes the store down for real (S3 server stopped) or, where that is impossible, by faulting every call. */
    protected void storeDown() {
        store.failWhen((op, key, n) -> true);
    }

    protected void storeUp() {
        store.heal();
    }

    @BeforeEach
    void setUp() {
        clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        dataDir = tmp.resolve("hot");
        backend = openStore();
        store = new FaultyStore(backend);
        topics = new TopicStore(dataDir, clock);
        topics.create("orders", 2, CONFIG);
        tp = new TopicPartition("orders", 0);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        backend.close();
    }

    TieredStorage storage(Path data, ObjectStore s, TieringConfig config) {
        TieredStorage ts = new TieredStorage(data, tmp.resolve("cache-" + closeables.size()), s, config, clock,
                new Random(closeables.size()), SegmentEvictionListener.NONE);
        closeables.add(ts);
        return ts;
    }

    TieredStorage storage() {
        return storage(dataDir, store, TIERING);
    }

    LogFixture hotLog(Path data) {
        LogFixture log = new LogFixture(data, tp, clock);
        closeables.add(log);
        return log;
    }

    /**
     * Reads the tier holding {@code offset} as the service's router does: hot at or above the oldest hot segment,
     * else cold; a hot segment evicted under the read is retried from the cold tier.
     */
    static <T> T routed(TieredStorage ts, TopicPartition tp, long offset, Supplier<T> hot, Supplier<T> cold) {
        for (int attempt = 1; ; attempt++) {
            long oldestHot = new io.tierlog.log.HotLog(ts.dataDir()).oldestSegmentBase(tp);
            if (oldestHot < 0 || offset < oldestHot) {
                return cold.get();
            }
            try {
                return hot.get();
            } catch (PartitionReader.SegmentGoneException | IllegalArgumentException e) {
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /** Reads the whole log from {@code from} through both tiers, as the service does. */
    static List<LogRecord> readAll(TieredStorage ts, LogFixture hot, TopicPartition tp, long from) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (true) {
            long at = next;
            ReadResult r = routed(ts, tp, at, () -> hot.freshReader().read(at, null, 37, 1 << 20),
                    () -> ts.reader().read(tp, at, 37, 1 << 20));
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    /**
     * Reads whole batches from {@code from} through both tiers and decodes them, skipping the records below the
     * offset asked for (a first batch may begin below it); every read must make progress and continue where the
     * last ended.
     */
    static List<LogRecord> readAllBatches(TieredStorage ts, LogFixture hot, TopicPartition tp, long from, int maxRecords) {
        return readAllBatches(ts, hot, tp, from, maxRecords, 1 << 20);
    }

    static List<LogRecord> readAllBatches(TieredStorage ts, LogFixture hot, TopicPartition tp, long from, int maxRecords,
                                          int maxBytes) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (true) {
            long at = next;
            BatchRead r = routed(ts, tp, at, () -> hot.freshReader().readBatches(at, null, maxRecords, maxBytes),
                    () -> ts.reader().readBatches(tp, at, maxRecords, maxBytes));
            if (r.isEmpty()) {
                assertThat(r.nextOffset()).isEqualTo(next);
                return out;
            }
            List<LogRecord> decoded = new ArrayList<>();
            ByteBuffer bytes = r.buffer();
            while (bytes.hasRemaining()) {
                ByteBuffer batch = bytes.slice().limit((int) RecordBatchCodec.announcedSize(bytes.slice()));
                assertThat(RecordBatchCodec.validate(batch)).isNull();
                RecordBatchCodec.decode(batch, next, Integer.MAX_VALUE, decoded);
                bytes.position(bytes.position() + batch.limit());
            }
            assertThat(decoded).hasSize(r.records());
            assertThat(decoded.get(0).offset()).isEqualTo(next);
            out.addAll(decoded);
            assertThat(r.nextOffset()).isEqualTo(decoded.get(decoded.size() - 1).offset() + 1);
            next = r.nextOffset();
        }
    }

    static void assertSameRecords(List<LogRecord> actual, List<LogRecord> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            LogRecord a = actual.get(i);
            LogRecord e = expected.get(i);
            assertThat(a.offset()).isEqualTo(e.offset());
            assertThat(a.timestamp()).isEqualTo(e.timestamp());
            assertThat(a.key()).isEqualTo(e.key());
            assertThat(a.value()).isEqualTo(e.value());
            // Field by field: a header's value is a byte[], which a record's equals compares by reference.
            assertThat(a.headers()).hasSameSizeAs(e.headers());
            for (int j = 0; j < e.headers().size(); j++) {
                assertThat(a.headers().get(j).name()).isEqualTo(e.headers().get(j).name());
                assertThat(a.headers().get(j).value()).isEqualTo(e.headers().get(j).value());
            }
        }
    }

    static void assertDense(List<LogRecord> records, long from, long lastInclusive) {
        assertThat(records).hasSize((int) (lastInclusive - from + 1));
        for (int i = 0; i < records.size(); i++) {
            assertThat(records.get(i).offset()).isEqualTo(from + i);
        }
    }

    /**
     * Runs tiering passes until one finds the store available: a loaded test machine occasionally drops a loopback
     * connection to S3Proxy, which the tierer (correctly) treats as an outage and retries after its backoff.
     */
    Tierer.PassResult tierFully(TieredStorage ts) {
        Tierer.PassResult last = null;
        for (int i = 0; i < 5; i++) {
            last = ts.runTieringPass();
            if (last.ran() && !last.storeUnavailable()) {
                return last;
            }
            clock.advance(TIERING.backoffCap().plusSeconds(1));
        }
        return last;
    }

    /** A tiered storage over the test's volume with every sealed segment tiered and its hot copy evicted. */
    TieredStorage allCold() {
        TieredStorage ts = storage();
        tierFully(ts);
        evictAllCommitted(ts);
        return ts;
    }

    /** Drops every hot segment the manifest holds (local.retention.bytes = 0). */
    void evictAllCommitted(TieredStorage ts) {
        topics.updateConfig("orders", Map.of(TopicConfig.LOCAL_RETENTION_BYTES, 0));
        ts.runRetentionPass();
    }

    /** Chunks of {@link #TIERING}'s size in the manifest's segment objects. */
    static long chunks(Manifest m) {
        return m.segments().stream().mapToLong(s -> (s.sizeBytes() + 4095) / 4096).sum();
    }

    Set<ObjectKey> segmentObjects() {
        return backend.listAll(BucketLayout.segmentsPrefix(tp)).map(ObjectMetadata::key).collect(Collectors.toSet());
    }

    static Set<ObjectKey> referenced(Manifest m) {
        return m.segments().stream().flatMap(s -> java.util.stream.Stream.of(s.segmentKey(), s.indexKey()))
                .collect(Collectors.toSet());
    }

    @Test
    void tiersSealedSegmentsAndReadsBackIdenticalRecordsAcrossTheBoundary() {
        LogFixture hot = hotLog(dataDir);
        long last = hot.append(300, 5, CONFIG);
        List<LogRecord> expected = hot.readHot(0);
        List<Long> bases = hot.freshReader().segmentBases();
        assertThat(bases.size()).as("enough segments").isGreaterThan(5);

        TieredStorage ts = storage();
        tierFully(ts);

        Manifest m = ts.manifests().load(tp);
        assertThat(m.segments()).hasSize(bases.size() - 1);
        assertThat(m.coldEnd()).isEqualTo(bases.get(bases.size() - 1));
        assertThat(ts.stats().pendingSegments()).isZero();

        evictAllCommitted(ts);
        assertThat(hot.freshReader().segmentBases()).containsExactly(bases.get(bases.size() - 1));

        List<LogRecord> read = readAll(ts, hot, tp, 0);
        assertSameRecords(read, expected);
        assertDense(read, 0, last);
        // From the middle of a cold segment, too.
        long middle = m.segments().get(2).baseOffset() + 3;
        assertSameRecords(readAll(ts, hot, tp, middle), expected.subList((int) middle, expected.size()));
        assertThat(ts.tiers(tp, hot.freshReader().segmentBases()).logStartOffset()).isZero();
    }

    @Test
    void wholeBatchesReadAcrossTheBoundaryDecodeToTheSameRecordsAsRecordReads() {
        LogFixture hot = hotLog(dataDir);
        hot.append(300, 5, CONFIG);
        List<LogRecord> expected = hot.readHot(0);
        TieredStorage ts = allCold();
        Manifest m = ts.manifests().load(tp);
        assertThat(m.segments()).hasSizeGreaterThan(3);

        // One batch per read, many per read, and reads starting inside a batch (the first batch begins below).
        assertSameRecords(readAllBatches(ts, hot, tp, 0, 1), expected);
        assertSameRecords(readAllBatches(ts, hot, tp, 0, 1000), expected);
        long middle = m.segments().get(2).baseOffset() + 3;
        assertSameRecords(readAllBatches(ts, hot, tp, middle, 7), expected.subList((int) middle, expected.size()));
        // The byte limit stops before a batch that would cross it, but a read always returns one batch.
        BatchRead tiny = ts.reader().readBatches(tp, 0, 1000, 1);
        assertThat(tiny.records()).isEqualTo(5);
        assertThat(tiny.nextOffset()).isEqualTo(5);
    }

    @Test
    void crashBetweenUploadAndCommitLosesNothingDuplicatesNothingAndOrphansAreCollected() {
        LogFixture hot = hotLog(dataDir);
        long last = hot.append(120, 5, CONFIG);
        List<LogRecord> expected = hot.readHot(0);
        // The third commit "crashes": the segment and its sidecar are uploaded, the manifest is not written.
        store.failWhen((op, key, n) -> op.equals("putIfAbsent") && n == 3);
        TieredStorage crashed = storage();
        Tierer.PassResult pass = crashed.runTieringPass();
        assertThat(pass.segmentsCommitted()).isEqualTo(2);
        assertThat(crashed.stats().uploadErrors()).isEqualTo(1);

        store.heal();
        TieredStorage restarted = storage(dataDir, store, TIERING);
        tierFully(restarted);
        Manifest m = restarted.manifests().load(tp);
        List<Long> bases = hot.freshReader().segmentBases();
        assertThat(m.segments()).extracting(ColdSegment::baseOffset).containsExactlyElementsOf(
                bases.subList(0, bases.size() - 1));
        Set<ObjectKey> orphans = new java.util.HashSet<>(segmentObjects());
        orphans.removeAll(referenced(m));
        assertThat(orphans).as("the crashed upload's segment and sidecar").hasSize(2);

        // Inside the grace period nothing is collected (it could be an upload in progress).
        assertThat(restarted.runOrphanCollection()).isZero();
        clock.advance(TIERING.orphanGrace().plusMinutes(1));
        assertThat(restarted.runOrphanCollection()).isEqualTo(2);
        assertThat(segmentObjects()).isEqualTo(referenced(m));

        evictAllCommitted(restarted);
        List<LogRecord> read = readAll(restarted, hot, tp, 0);
        assertSameRecords(read, expected);
        assertDense(read, 0, last);
    }

    @Test
    void crashBetweenCommitAndLocalDeleteEvictsAfterRestartWithoutUploadingAgain() {
        LogFixture hot = hotLog(dataDir);
        hot.append(100, 5, CONFIG);
        List<LogRecord> expected = hot.readHot(0);
        TieredStorage first = storage();
        tierFully(first);
        Set<ObjectKey> objects = segmentObjects();
        // "crash": the process dies before retention runs; the hot copies are all still there.

        TieredStorage restarted = storage(dataDir, store, TIERING);
        Tierer.PassResult pass = restarted.runTieringPass();
        assertThat(pass.segmentsCommitted()).isZero();
        assertThat(restarted.stats().segmentsUploaded()).isZero();
        assertThat(segmentObjects()).isEqualTo(objects);

        evictAllCommitted(restarted);
        assertThat(hot.freshReader().segmentBases()).hasSize(1);
        assertSameRecords(readAll(restarted, hot, tp, 0), expected);
    }

    @Test
    void twoTierersRacingCommitEachSegmentExactlyOnce() throws Exception {
        LogFixture hot = hotLog(dataDir);
        hot.append(200, 5, CONFIG);
        List<Long> bases = hot.freshReader().segmentBases();
        TieredStorage a = storage(dataDir, new FaultyStore(backend), TIERING);
        TieredStorage b = storage(dataDir, openStoreTracked(), TIERING);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Tierer.PassResult> fa = pool.submit(() -> {
                go.await();
                return a.runTieringPass();
            });
            Future<Tierer.PassResult> fb = pool.submit(() -> {
                go.await();
                return b.runTieringPass();
            });
            go.countDown();
            int committed = fa.get(60, TimeUnit.SECONDS).segmentsCommitted()
                    + fb.get(60, TimeUnit.SECONDS).segmentsCommitted();
            // A pass cut short by a transient S3 error leaves the rest to the next pass (see tierFully).
            committed += tierFully(a).segmentsCommitted() + tierFully(b).segmentsCommitted();
            assertThat(committed).isEqualTo(bases.size() - 1);
        } finally {
            pool.shutdownNow();
        }
        Manifest m = a.manifests().load(tp);
        // The Manifest constructor rejects gaps and overlaps; check coverage and that losers cleaned up at once.
        assertThat(m.segments()).extracting(ColdSegment::baseOffset)
                .containsExactlyElementsOf(bases.subList(0, bases.size() - 1));
        assertThat(m.version()).isEqualTo(bases.size() - 1);
        assertThat(segmentObjects()).isEqualTo(referenced(m));
    }

    @Test
    void aTiererThatFoundNoDescriptorNeverDeletesWhatAnotherPublishedMeanwhile() {
        LogFixture hot = hotLog(dataDir);
        hot.append(200, 5, CONFIG);
        List<Long> bases = hot.freshReader().segmentBases();
        FaultyStore slow = new FaultyStore(backend);
        TieredStorage a = storage(dataDir, slow, TIERING);
        TieredStorage b = storage(dataDir, openStoreTracked(), TIERING);
        // a finds no topic.json on the fresh bucket; before it lists the topic's prefix for leftovers of an
        // interrupted deletion, b publishes the topic and commits every sealed segment.
        java.util.concurrent.atomic.AtomicReference<Manifest> committedByB = new java.util.concurrent.atomic.AtomicReference<>();
        slow.runBefore((op, key, n) -> op.equals("list") && n == 1, () -> {
            tierFully(b);
            committedByB.set(b.manifests().load(tp));
        });

        // tierFully: a pass that meets a transient S3 error (S3Proxy drops a connection now and then; the SDK does
        // not retry a conditional write) is followed by another, as the scheduler would.
        assertThat(tierFully(a).segmentsCommitted()).isZero();

        assertThat(committedByB.get()).as("b's pass ran inside a's").isNotNull();
        assertThat(committedByB.get().segments()).hasSize(bases.size() - 1);
        Manifest m = a.manifests().load(tp);
        assertThat(m.version()).isEqualTo(committedByB.get().version());
        assertThat(m.segments()).isEqualTo(committedByB.get().segments());
        // Everything b committed is still there. (An upload cut short by a transient error may leave an orphan
        // for the orphan collector; that is not this test's business.)
        assertThat(segmentObjects()).containsAll(referenced(m));
    }

    ObjectStore openStoreTracked() {
        ObjectStore s = openStore();
        closeables.add(s::close);
        return s;
    }

    @Test
    void storeOutageMidTieringKeepsHotDataAndEveryAcknowledgedRecordReadableAfterRecovery() {
        LogFixture hot = hotLog(dataDir);
        hot.append(120, 5, CONFIG);
        TieredStorage ts = storage();
        // The outage begins while the tierer uploads its third object.
        store.runBefore((op, key, n) -> op.equals("put") && key.value().contains("/segments/") && n == 3,
                this::storeDown);
        Tierer.PassResult pass = ts.runTieringPass();
        assertThat(pass.storeUnavailable()).isTrue();
        assertThat(ts.stats().storeAvailable()).isFalse();
        long committedDuringOutage = pass.segmentsCommitted();
        assertThat(committedDuringOutage).isLessThan(hot.freshReader().segmentBases().size() - 1);
        store.runBefore((op, key, n) -> false, () -> { });

        // Produce keeps working; nothing hot is deleted; the backlog is reported.
        long last = hot.append(60, 5, CONFIG);
        assertThat(ts.runTieringPass().ran()).as("backing off, no store call").isFalse();
        assertThat(ts.stats().pendingSegments()).isGreaterThan(0);
        evictAllCommitted(ts);
        assertThat(hot.freshReader().segmentBases().get(0))
                .isLessThanOrEqualTo(ts.manifests().peek(tp).map(Manifest::coldEnd).orElse(0L));

        // Cold reads of uncached data answer cold-tier-unavailable.
        if (committedDuringOutage > 0) {
            TieredStorage coldOnly = storage(dataDir, store, TIERING);
            assertThatThrownBy(() -> coldOnly.reader().read(tp, 0, 10, 1 << 20))
                    .isInstanceOfSatisfying(TierlogException.class,
                            e -> assertThat(e.type()).isEqualTo(ErrorType.COLD_TIER_UNAVAILABLE));
        }

        storeUp();
        // The first request after a restart may meet a pooled connection the outage closed; the tierer must recover
        // by itself within a few passes (each after its backoff), not necessarily on the very first one.
        Tierer.PassResult resumed = null;
        for (int attempt = 0; attempt < 5 && (resumed == null || resumed.storeUnavailable()); attempt++) {
            clock.advance(TIERING.backoffCap().plusSeconds(1));
            resumed = ts.runTieringPass();
        }
        assertThat(resumed.storeUnavailable()).as("tiering resumed after the store came back").isFalse();
        List<Long> bases = hot.freshReader().segmentBases();
        assertThat(ts.manifests().load(tp).coldEnd()).isEqualTo(bases.get(bases.size() - 1));
        assertThat(ts.stats().pendingSegments()).isZero();
        evictAllCommitted(ts);
        List<LogRecord> read = readAll(ts, hot, tp, 0);
        assertDense(read, 0, last);
    }

    @Test
    void localRetentionEvictsOnlyCommittedSegmentsAndTotalRetentionMovesLogStartManifestFirst() {
        topics.updateConfig("orders", Map.of(TopicConfig.LOCAL_RETENTION_MS, 3_600_000L,
                TopicConfig.RETENTION_MS, 4 * 3_600_000L));
        LogFixture hot = hotLog(dataDir);
        for (int hour = 0; hour < 6; hour++) {
            hot.append(25, 5, CONFIG);
            clock.advance(Duration.ofHours(1));
        }
        List<Long> before = hot.freshReader().segmentBases();
        TieredStorage ts = storage();

        // Old, but not committed: local retention keeps everything.
        ts.runRetentionPass();
        assertThat(hot.freshReader().segmentBases()).isEqualTo(before);

        tierFully(ts);
        Manifest m = ts.manifests().load(tp);
        // Total retention (4 h) runs first, manifest first: fail the object deletion to prove the order.
        store.failWhen((op, key, n) -> op.equals("deleteAll"));
        ts.runRetentionPass();
        Manifest after = ts.manifests().load(tp);
        long cutoff = clock.millis() - 4 * 3_600_000L;
        List<ColdSegment> expired = m.segments().stream().filter(s -> s.maxTimestamp() < cutoff).toList();
        assertThat(expired).isNotEmpty();
        assertThat(after.logStartOffset()).isEqualTo(expired.get(expired.size() - 1).nextOffset());
        assertThat(after.segments()).noneMatch(expired::contains);
        assertThat(segmentObjects()).as("objects outlive a failed delete; the manifest no longer has them")
                .containsAll(referenced(new Manifest(0, 0, expired)));
        store.heal();
        clock.advance(TIERING.orphanGrace().plusMinutes(1));
        ts.runOrphanCollection();
        assertThat(segmentObjects()).isEqualTo(referenced(after));

        // Local retention (1 h): committed segments older than an hour are evicted; the active one never.
        ts.runRetentionPass();
        Manifest now = ts.manifests().load(tp);
        List<Long> hotNow = hot.freshReader().segmentBases();
        assertThat(hotNow).contains(before.get(before.size() - 1));
        for (int i = 0; i < hotNow.size() - 1; i++) {
            long base = hotNow.get(i);
            ColdSegment s = now.segmentFor(base).orElseThrow();
            assertThat(s.maxTimestamp()).isGreaterThanOrEqualTo(clock.millis() - 3_600_000L);
        }
        assertThat(now.logStartOffset()).isGreaterThanOrEqualTo(after.logStartOffset());
        assertThat(ts.tiers(tp, hotNow).logStartOffset()).isEqualTo(now.logStartOffset());
        assertThatThrownBy(() -> ts.reader().read(tp, 0, 10, 1 << 20))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.OFFSET_OUT_OF_RANGE);
                    assertThat(e.extra()).containsEntry("logStartOffset", now.logStartOffset());
                });
        List<LogRecord> read = readAll(ts, hot, tp, now.logStartOffset());
        assertThat(read.get(0).offset()).isEqualTo(now.logStartOffset());
    }

    /**
     * Records deleted with DeleteRecords (a log start mark): the segments wholly below it leave both tiers at the
     * next pass although the topic keeps everything by retention, as Kafka removes them; the one holding the mark
     * stays whole.
     */
    @Test
    void segmentsWhollyBelowDeletedRecordsGoAtTheNextPassWhateverTheRetention() {
        topics.updateConfig("orders", Map.of(TopicConfig.RETENTION_MS, -1L, TopicConfig.RETENTION_BYTES, -1L));
        LogFixture hot = hotLog(dataDir);
        appendRounds(hot, 6);
        TieredStorage ts = storage();
        tierFully(ts);
        Manifest m = ts.manifests().load(tp);
        assertThat(m.segments()).hasSizeGreaterThanOrEqualTo(3);
        ts.runRetentionPass();
        assertThat(ts.manifests().load(tp)).as("nothing expires by retention").isEqualTo(m);

        ColdSegment third = m.segments().get(2);
        new LogStartMarks(dataDir).advance(tp, third.baseOffset() + 1);
        ts.runRetentionPass();
        Manifest after = ts.manifests().load(tp);
        assertThat(after.segments()).as("the two segments below the mark are gone, the one holding it is kept")
                .isEqualTo(m.segments().subList(2, m.segments().size()));
        assertThat(after.logStartOffset()).isEqualTo(third.baseOffset());
        assertThat(segmentObjects()).isEqualTo(referenced(after));
        assertThat(hot.freshReader().segmentBases().get(0)).as("and their hot copies").isEqualTo(third.baseOffset());

        ts.runRetentionPass();
        assertThat(ts.manifests().load(tp)).as("a second pass changes nothing").isEqualTo(after);
    }

    /** {@code rounds} appends of 25 batches of 5 records: a segment or more each under {@link #CONFIG}. */
    private static void appendRounds(LogFixture hot, int rounds) {
        for (int i = 0; i < rounds; i++) {
            hot.append(25, 5, CONFIG);
        }
    }

    /** Records deleted before their segments were tiered never reach the bucket; the cold tier starts past them. */
    @Test
    void segmentsDeletedBeforeTheyWereTieredAreNeverUploaded() {
        LogFixture hot = hotLog(dataDir);
        appendRounds(hot, 6);
        List<Long> bases = hot.freshReader().segmentBases();
        assertThat(bases).hasSizeGreaterThanOrEqualTo(4);
        new LogStartMarks(dataDir).advance(tp, bases.get(2) + 1);

        TieredStorage ts = storage();
        tierFully(ts);

        Manifest m = ts.manifests().load(tp);
        assertThat(m.logStartOffset()).isEqualTo(bases.get(2));
        assertThat(m.segments().get(0).baseOffset()).as("the first upload holds the mark").isEqualTo(bases.get(2));
        assertThat(m.coldEnd()).isEqualTo(bases.get(bases.size() - 1));
        assertThat(segmentObjects()).isEqualTo(referenced(m));
        ts.runRetentionPass();
        assertThat(hot.freshReader().segmentBases().get(0)).as("the deleted hot copies go").isEqualTo(bases.get(2));
    }

    /** A deletion past the cold end waits for retention to drop the cold segments below it, then skips the rest. */
    @Test
    void segmentsDeletedBehindColdOnesAreSkippedOnceRetentionDroppedThose() {
        LogFixture hot = hotLog(dataDir);
        appendRounds(hot, 3);
        TieredStorage ts = storage();
        tierFully(ts);
        Manifest cold = ts.manifests().load(tp);
        assertThat(cold.segments()).isNotEmpty();
        appendRounds(hot, 3);
        List<Long> bases = hot.freshReader().segmentBases();
        long deletedSegment = bases.stream().filter(b -> b > cold.coldEnd()).findFirst().orElseThrow();
        new LogStartMarks(dataDir).advance(tp, deletedSegment + 1);

        tierFully(ts);
        assertThat(ts.manifests().load(tp)).as("nothing deleted is uploaded while cold segments lie below the mark")
                .isEqualTo(cold);
        ts.runRetentionPass();
        tierFully(ts);

        Manifest after = ts.manifests().load(tp);
        assertThat(after.logStartOffset()).isEqualTo(deletedSegment);
        assertThat(after.segments()).extracting(ColdSegment::baseOffset).first().isEqualTo(deletedSegment);
        assertThat(segmentObjects()).isEqualTo(referenced(after));
    }

    @Test
    void freshNodeServesTheSameRecordsAndLogStartOffsetFromTheBucketAlone() throws Exception {
        topics.updateConfig("orders", Map.of(TopicConfig.RETENTION_BYTES, 150_000L,
                TopicConfig.LOCAL_RETENTION_BYTES, 150_000L));
        LogFixture hot = hotLog(dataDir);
        hot.append(200, 5, CONFIG);
        TieredStorage ts = storage();
        tierFully(ts);
        ts.runRetentionPass();
        Manifest m = ts.manifests().load(tp);
        assertThat(m.logStartOffset()).as("retention.bytes moved the log start").isGreaterThan(0);
        List<LogRecord> expected = readAll(ts, hot, tp, m.logStartOffset()).stream()
                .filter(r -> r.offset() < m.coldEnd()).toList();
        TopicMetadata original = topics.get("orders");

        Path freshData = tmp.resolve("fresh-hot");
        TieredStorage fresh = storage(freshData, openStoreTracked(), TIERING);
        assertThat(fresh.restoreFromBucket()).containsExactly("orders");
        TopicMetadata restored = new TopicStore(freshData, clock).get("orders");
        assertThat(restored).isEqualTo(original);
        assertThat(new io.tierlog.log.HotLog(freshData).segmentBases(tp)).containsExactly(m.coldEnd());
        assertThat(fresh.restoreFromBucket()).as("idempotent").isEmpty();

        LogFixture freshHot = hotLog(freshData);
        assertThat(fresh.tiers(tp, freshHot.freshReader().segmentBases()).logStartOffset()).isEqualTo(m.logStartOffset());
        assertSameRecords(readAll(fresh, freshHot, tp, m.logStartOffset()), expected);
        // The hot log continues at the cold end.
        long appended = freshHot.append(1, 1, CONFIG);
        assertThat(appended).isEqualTo(m.coldEnd());
        assertThat(readAll(fresh, freshHot, tp, m.logStartOffset())).hasSize(expected.size() + 1);
    }

    @Test
    void aRestartedNodeLoadsEveryPartitionsManifestBeforeItsFirstRead() throws InterruptedException {
        LogFixture hot = hotLog(dataDir);
        hot.append(40, 5, CONFIG);
        tierFully(storage());
        Manifest m = backendManifest();
        assertThat(m.isEmpty()).isFalse();

        TieredStorage restarted = storage();
        restarted.restoreFromBucket();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        TopicPartition idle = new TopicPartition("orders", 1);
        while (restarted.manifests().peek(tp).isEmpty() || restarted.manifests().peek(idle).isEmpty()) {
            assertThat(System.nanoTime()).as("manifests loaded in the background").isLessThan(deadline);
            Thread.sleep(5);
        }
        store.resetCounts();
        assertThat(restarted.tiers(tp, hot.freshReader().segmentBases()).coldEnd()).isEqualTo(m.coldEnd());
        assertThat(store.count("list") + store.count("get")).as("the first read asks the bucket nothing").isZero();
    }

    /** The partition's current manifest, read from the bucket by a store of its own. */
    Manifest backendManifest() {
        return new ManifestStore(backend, clock, 10, Duration.ofHours(1), Runnable::run).load(tp);
    }

    @Test
    void aCorruptedByteInAColdObjectIsAnErrorNeverData() {
        LogFixture hot = hotLog(dataDir);
        hot.append(60, 5, CONFIG);
        TieredStorage ts = allCold();
        ColdSegment s = ts.manifests().load(tp).segments().get(1);
        byte[] bytes = backend.get(s.segmentKey());
        bytes[bytes.length / 2] ^= 0x5A;
        backend.put(s.segmentKey(), bytes);

        TieredStorage reader = storage(dataDir, store, TIERING);
        assertThat(reader.reader().read(tp, 0, 5, 1 << 20).records()).hasSize(5); // segment 0 is intact
        assertThatThrownBy(() -> readAll(reader, hot, tp, s.baseOffset()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(s.segmentKey().value());
        // Whole-batch reads serve stored bytes as they are, so they must check them just the same.
        assertThatThrownBy(() -> readAllBatches(reader, hot, tp, s.baseOffset(), 1000))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(s.segmentKey().value());
    }

    @Test
    void offsetForTimestampSearchesColdSegments() {
        LogFixture hot = hotLog(dataDir);
        List<Long> stamps = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            stamps.add(clock.millis());
            hot.append(3, 5, CONFIG);
            clock.advance(Duration.ofSeconds(10));
        }
        TieredStorage ts = storage();
        tierFully(ts);
        Manifest m = ts.manifests().load(tp);
        // stamps[i] is the timestamp of batches 3i..3i+2 (15 records from offset 15i).
        int i = 17;
        assertThat(15L * i).isLessThan(m.coldEnd());
        assertThat(ts.reader().offsetForTimestamp(tp, stamps.get(i))).contains(
                new OffsetAndTimestamp(15L * i, stamps.get(i)));
        assertThat(ts.reader().offsetForTimestamp(tp, stamps.get(i) - 1)).contains(
                new OffsetAndTimestamp(15L * i, stamps.get(i)));
        assertThat(ts.reader().offsetForTimestamp(tp, 0)).contains(new OffsetAndTimestamp(0, stamps.get(0)));
        assertThat(ts.reader().offsetForTimestamp(tp, clock.millis() + 1)).isEmpty();
    }

    @Test
    void aReplayFetchesEachChunkOnceAndARangeReadAgainIsCachedOnItsSecondFetch() {
        LogFixture hot = hotLog(dataDir);
        hot.append(150, 5, CONFIG);
        TieredStorage ts = allCold();
        Manifest m = ts.manifests().load(tp);
        long chunks = chunks(m);
        // More chunks than the cache keeps in memory (a few read-ahead windows), so a second replay cannot be served
        // from memory alone.
        assertThat(chunks).isGreaterThan(20);

        long bytes = m.segments().stream().mapToLong(ColdSegment::sizeBytes).sum();

        store.resetCounts();
        List<LogRecord> first = readAll(ts, hot, tp, 0);
        // Each chunk once, most of them in ranges of several chunks.
        assertThat(ts.stats().rangeGetBytes()).isEqualTo(bytes);
        long gets = store.count("getRange");
        assertThat(gets).isLessThan(chunks / 2);
        // Each read continues where the last stopped (a resume hint) or at a segment's first offset (position 0).
        assertThat(store.count("get")).as("no sidecar: every walk starts at a known position").isZero();
        assertThat(ts.stats().rangeGets()).isEqualTo(gets);
        assertThat(ts.stats().cacheAdmissionsDeferred()).as("a scan's chunks are not written to disk")
                .isEqualTo(chunks);

        List<LogRecord> again = readAll(ts, hot, tp, 0);
        assertThat(ts.stats().rangeGetBytes()).as("fetched again, and admitted this time").isEqualTo(2 * bytes);
        assertSameRecords(again, first);
        assertThat(ts.stats().cacheAdmissionsDeferred()).isEqualTo(chunks);

        long getsBefore = store.count("getRange");
        List<LogRecord> third = readAll(ts, hot, tp, 0);
        assertThat(store.count("getRange")).as("served from the chunk cache").isEqualTo(getsBefore);
        assertSameRecords(third, first);
        assertThat(ts.stats().cacheHits()).isGreaterThan(ts.stats().cacheMisses());
    }

    @Test
    void wholeBatchReadsStoppedByTheByteLimitContinueWhereTheyStopped() {
        LogFixture hot = hotLog(dataDir);
        hot.append(150, 5, CONFIG);
        TieredStorage ts = allCold();
        List<LogRecord> expected = readAll(ts, hot, tp, 0);
        int batchBytes = 5 * 150;
        assertThat(expected.size()).isGreaterThan(ts.manifests().load(tp).segments().size() * 10);

        store.resetCounts();
        // Room for one batch and not two: every read stops before a batch the byte limit turns away.
        List<LogRecord> oneByOne = readAllBatches(ts, hot, tp, 0, 1000, batchBytes * 3 / 2);
        assertSameRecords(oneByOne, expected);
        assertThat(store.count("get")).as("each read resumes at the batch the last one turned away: no sidecar")
                .isZero();
    }

    @Test
    void aScanLongerThanTheCacheLeavesTheChunksOtherReadersReuseInIt() {
        LogFixture reused = hotLog(dataDir);
        reused.append(150, 5, CONFIG);
        TopicPartition scannedTp = new TopicPartition("orders", 1);
        LogFixture scanned = new LogFixture(dataDir, scannedTp, clock);
        closeables.add(scanned);
        scanned.append(400, 5, CONFIG);
        int cacheChunks = 48;
        TieredStorage ts = storage(dataDir, store, TIERING.withCacheBytes(cacheChunks * 4096L));
        tierFully(ts);
        evictAllCommitted(ts);
        long reusedChunks = chunks(ts.manifests().load(tp));
        long scannedChunks = chunks(ts.manifests().load(scannedTp));
        // The re-read range fits the cache but not its memory (so its second read fetches again); the scan does not.
        assertThat(reusedChunks).isBetween(21L, cacheChunks - 1L);
        assertThat(scannedChunks).isGreaterThan(cacheChunks);

        List<LogRecord> expected = readAll(ts, reused, tp, 0);
        readAll(ts, reused, tp, 0); // read twice: now on disk
        readAll(ts, scanned, scannedTp, 0); // one pass over more chunks than the cache holds

        store.resetCounts();
        assertSameRecords(readAll(ts, reused, tp, 0), expected);
        assertThat(store.count("getRange")).as("the scan evicted none of the re-read chunks").isZero();
    }

    @Test
    void aDeletionInterruptedAfterTheDescriptorLeavesNothingARecreatedTopicCanMistakeForItsOwn() throws Exception {
        LogFixture old = new LogFixture(dataDir, tp, clock);
        old.append(60, 5, CONFIG);
        old.close();
        TieredStorage ts = storage();
        tierFully(ts);
        Set<ObjectKey> before = backend.listAll("orders/").map(ObjectMetadata::key).collect(Collectors.toSet());
        assertThat(before).hasSizeGreaterThan(3);

        // The deletion "crashes" after removing the descriptor and the hot data, before the objects.
        ts.deleteTopicDescriptor("orders");
        topics.delete("orders");
        try (var files = Files.walk(dataDir.resolve(tp.dirName()))) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        topics.create("orders", 2, CONFIG);
        LogFixture fresh = hotLog(dataDir);
        fresh.append(40, 5, CONFIG);
        List<LogRecord> expected = fresh.readHot(0);

        TieredStorage restarted = storage(dataDir, store, TIERING);
        tierFully(restarted);
        Set<ObjectKey> after = backend.listAll("orders/").map(ObjectMetadata::key).collect(Collectors.toSet());
        // Manifest version numbers and topic.json recur by name; no segment object of the old topic may.
        assertThat(after).doesNotContainAnyElementsOf(
                before.stream().filter(k -> k.value().contains("/segments/")).toList());
        Manifest m = restarted.manifests().load(tp);
        assertThat(m.version()).as("a new history").isEqualTo(m.segments().size());
        evictAllCommitted(restarted);
        assertSameRecords(readAll(restarted, fresh, tp, 0), expected);

        assertThat(restarted.deleteTopic("orders")).isGreaterThan(0);
        assertThat(backend.listAll("orders/").count()).isZero();
    }
}
