package io.tierlog.tiering;

import io.tierlog.log.BatchRead;
import io.tierlog.log.LogFixture;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Read-ahead of the cold reader over the filesystem store: a point read fetches one chunk; a sequential reader's
 * GETs grow to whole ranges that run on across segments, each byte fetched once; a failed background fetch never
 * fails a read; reads of any shape (resumed or not) return exactly the records the log holds. Request counts over
 * the real S3 protocol are {@link ColdReadRangesS3Test}'s.
 */
class ColdReadAheadTest {
    private static final int CHUNK = 4096;
    private static final int RANGE_CHUNKS = 4;
    private static final int WINDOW_CHUNKS = 8;
    private static final TopicConfig CONFIG = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 65536));
    /** Sidecar entries every 4 KiB, so a read can start deep inside a segment. */
    private static final TieringConfig TIERING = new TieringConfig(1L << 30, Duration.ofHours(1), 10, CHUNK, CHUNK,
            64L * CHUNK, (long) WINDOW_CHUNKS * CHUNK, 3, Duration.ofMillis(200), Duration.ofSeconds(30),
            RANGE_CHUNKS * CHUNK, 32L * CHUNK);

    @TempDir
    Path tmp;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private ManualClock clock;
    private RecordingStore store;
    private TopicPartition tp;
    private List<LogRecord> expected;
    private List<ColdSegment> segments;
    private Path dataDir;

    @BeforeEach
    void setUp() {
        clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
        dataDir = tmp.resolve("hot");
        FilesystemObjectStore backend = new FilesystemObjectStore(tmp.resolve("cold"));
        closeables.add(backend);
        store = new RecordingStore(backend);
        new TopicStore(dataDir, clock).create("orders", 1, CONFIG);
        tp = new TopicPartition("orders", 0);
        LogFixture hot = new LogFixture(dataDir, tp, clock);
        closeables.add(hot);
        hot.append(400, 5, CONFIG);
        TieredStorage tierer = storage(TIERING);
        assertThat(tierer.runTieringPass().storeUnavailable()).isFalse();
        Manifest m = tierer.manifests().load(tp);
        segments = m.segments();
        assertThat(segments).as("enough cold segments of several ranges").hasSizeGreaterThanOrEqualTo(4);
        assertThat(segments.get(1).sizeBytes()).isGreaterThan((WINDOW_CHUNKS + 2L) * CHUNK);
        expected = hot.readHot(0).stream().filter(r -> r.offset() < m.coldEnd()).toList();
        store.calls.clear();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private TieredStorage storage(TieringConfig config) {
        TieredStorage ts = new TieredStorage(dataDir, tmp.resolve("cache-" + closeables.size()), store, config, clock,
                new Random(closeables.size()), SegmentEvictionListener.NONE);
        closeables.add(ts);
        return ts;
    }

    private TieredStorage storage() {
        return storage(TIERING);
    }

    @Test
    void aPointReadFetchesTheOneChunkItNeedsAndNothingAhead() {
        TieredStorage ts = storage();
        ColdSegment second = segments.get(1);
        long middle = second.baseOffset() + (second.nextOffset() - second.baseOffset()) / 2;

        assertThat(ts.reader().read(tp, middle, 1, 1 << 20).records()).extracting(LogRecord::offset)
                .containsExactly(middle);

        // Read-ahead runs on the fetch threads; a point read requests none, so the calls are complete now. The walk
        // starts at the sidecar entry before the offset, possibly in the chunk before the record's.
        List<RecordingStore.Call> gets = store.rangeCallsOf(second.segmentKey());
        assertThat(gets).hasSizeBetween(1, 2);
        assertThat(gets).allSatisfy(c -> assertThat(c.length()).isEqualTo(CHUNK));
        assertThat(store.calls).filteredOn(c -> c.op().equals("getRange")).hasSameSizeAs(gets);
        assertThat(ts.chunkCache().inFlightBytes()).isZero();
    }

    @Test
    void aReplayGrowsItsRangesAcrossSegmentsAndFetchesEveryByteOnce() {
        TieredStorage ts = storage();

        List<LogRecord> read = readAll(ts, 0, Long.MAX_VALUE, 40, 1 << 20);

        assertSameOffsetsAndValues(read, expected);
        assertThat(store.rangeCallsOf(segments.get(0).segmentKey())).filteredOn(c -> c.offset() == 0)
                .singleElement().as("a cold start's first GET is the window's first range, two chunks")
                .extracting(RecordingStore.Call::length).isEqualTo(2L * CHUNK);
        long gets = 0;
        long chunks = 0;
        for (ColdSegment s : segments) {
            List<RecordingStore.Call> calls = store.rangeCallsOf(s.segmentKey());
            assertThat(covered(calls)).as("each byte of " + s.segmentKey() + " fetched once").isEqualTo(
                    s.sizeBytes());
            assertThat(calls).allSatisfy(c -> assertThat(c.length()).isLessThanOrEqualTo(RANGE_CHUNKS * CHUNK));
            gets += calls.size();
            chunks += (s.sizeBytes() + CHUNK - 1) / CHUNK;
        }
        // Whole ranges after the ramp (1, 2, 4 chunks), cut only at segment ends.
        assertThat(gets).isLessThanOrEqualTo(chunks / RANGE_CHUNKS + 2L * segments.size());
        assertThat(ts.stats().rangeGets()).isEqualTo(gets);
    }

    @Test
    void aReadNearASegmentsEndReachesIntoTheNextSegmentsOnceItIsSequential() {
        TieredStorage ts = storage();
        ColdSegment first = segments.get(0);
        ColdSegment second = segments.get(1);

        // Records on both sides of the boundary, read in two calls: the second continues where the first stopped.
        List<LogRecord> read = readAll(ts, first.lastOffset() - 2, second.baseOffset() + 20, 10, 1 << 20);
        assertThat(read).extracting(LogRecord::offset).containsExactlyElementsOf(
                expected.subList((int) first.lastOffset() - 2, (int) second.baseOffset() + 20).stream()
                        .map(LogRecord::offset).toList());

        awaitTrue(() -> covered(store.rangeCallsOf(second.segmentKey())) >= (long) WINDOW_CHUNKS * CHUNK,
                "read-ahead into the second segment");
        assertThat(store.gets(second.indexKey())).as("the next segment is entered at its first offset").isZero();
        // Reading on uses what was prefetched: no byte twice.
        readAll(ts, second.baseOffset() + 20, second.nextOffset(), 50, 1 << 20);
        assertThat(covered(store.rangeCallsOf(second.segmentKey()))).isEqualTo(second.sizeBytes());
    }

    @Test
    void aColdStartAsksForTheReadAheadWhileItsFirstChunkIsStillInFlight() {
        TieredStorage ts = storage();
        ColdSegment first = segments.get(0);
        AtomicBoolean windowAskedFor = new AtomicBoolean();
        // Hold the first chunk's GET until the read-ahead after it has been asked for: with the read-ahead scheduled
        // only after the first chunk arrived, this never happens and the hook fails the read.
        store.before = (op, key, range) -> {
            if (op.equals("getRange") && key.equals(first.segmentKey()) && range.offset() == 0) {
                awaitTrue(() -> store.rangesOf(first.segmentKey()).contains(2L * CHUNK),
                        "read-ahead GETs while the first chunk is in flight");
                windowAskedFor.set(true);
            }
        };

        List<LogRecord> read = readAll(ts, 0, first.nextOffset(), 50, 1 << 20);

        assertThat(windowAskedFor).isTrue();
        assertThat(read).extracting(LogRecord::offset).containsExactlyElementsOf(
                expected.subList(0, (int) first.nextOffset()).stream().map(LogRecord::offset).toList());
        assertThat(covered(store.rangeCallsOf(first.segmentKey()))).as("no chunk fetched twice")
                .isEqualTo(first.sizeBytes());
    }

    @Test
    void aColdReadsFirstBatchComesWithItsFirstGetAndOneRangeCompetesWithIt() throws Exception {
        // Batches of 40 records (about 6.4 KB): the first one runs past the first chunk's end, as a producer's
        // 1 MiB batch runs past a 1 MiB chunk's.
        TopicPartition big = new TopicPartition("big", 0);
        new TopicStore(dataDir, clock).create(big.topic(), 1, CONFIG);
        LogFixture hot = new LogFixture(dataDir, big, clock);
        closeables.add(hot);
        hot.append(40, 40, CONFIG);
        TieredStorage ts = storage();
        assertThat(ts.runTieringPass().storeUnavailable()).isFalse();
        ColdSegment first = ts.manifests().load(big).segments().get(0); // the manifest is known, as in the service
        long firstBatchBytes = hot.batches().get(0).sizeInBytes();
        assertThat(firstBatchBytes).isBetween((long) CHUNK + 1, 2L * CHUNK);
        store.calls.clear();
        // Every GET waits until the reader has asked for all it asks before its first batch and waits for it.
        CountDownLatch release = new CountDownLatch(1);
        store.before = (op, key, range) -> {
            try {
                assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        AtomicReference<BatchRead> result = new AtomicReference<>();
        Thread reader = new Thread(() -> result.set(ts.reader().readBatches(big, 0, 1, 1 << 20)), "test-reader");
        reader.start();
        // Waiting for a chunk, not for a moment on the executor's queue lock while it asks.
        awaitTrue(() -> reader.getState() == Thread.State.WAITING && Arrays.stream(reader.getStackTrace())
                .anyMatch(f -> f.getMethodName().equals("awaitPrefix")), "the reader waiting for its first GET");
        long requested = ts.chunkCache().inFlightBytes();
        awaitTrue(() -> store.calls.stream().mapToLong(RecordingStore.Call::length).sum() == requested,
                "every GET asked reaching the store");
        List<RecordingStore.Call> beforeFirstBatch = List.copyOf(store.calls);
        release.countDown();
        reader.join(Duration.ofSeconds(30).toMillis());

        try (BatchRead read = result.get()) {
            assertThat(read.nextOffset()).as("the first batch").isEqualTo(40);
        }
        // One data GET holds the first batch whole; one read-ahead range of its size beside it; no sidecar, no
        // manifest. (Before: a one-chunk GET, then GETs of 2 and 4 chunks, and the batch needed the first two.)
        assertThat(beforeFirstBatch).extracting(RecordingStore.Call::op, RecordingStore.Call::key,
                        RecordingStore.Call::offset, RecordingStore.Call::length)
                .containsExactlyInAnyOrder(
                        tuple("getRange", first.segmentKey(), 0L, 2L * CHUNK),
                        tuple("getRange", first.segmentKey(), 2L * CHUNK, 2L * CHUNK));
    }

    @Test
    void aReadWaitingForAPrefetchThatFailsGetsTheChunkFetchedAgain() throws Exception {
        TieredStorage ts = storage();
        ColdSegment first = segments.get(0);
        AtomicReference<Thread> reader = new AtomicReference<>();
        // The read-ahead GET from the first segment's third chunk on (the reader's own first GET holds the first
        // two) fails, but only once the reader waits for it.
        store.before = (op, key, range) -> {
            if (op.equals("getRange") && key.equals(first.segmentKey()) && range.offset() == 2L * CHUNK
                    && Thread.currentThread().getName().startsWith("tierlog-cold-fetch")) {
                awaitTrue(() -> reader.get() != null && reader.get().getState() == Thread.State.WAITING,
                        "reader waiting for the prefetch");
                store.before = (o, k, r) -> { };
                throw new ObjectStoreUnavailableException("injected: prefetch dropped", null);
            }
        };
        AtomicReference<List<LogRecord>> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(readAll(ts, 0, first.nextOffset(), 7, 1 << 20));
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "test-reader");
        reader.set(t);
        t.start();
        t.join(Duration.ofSeconds(30).toMillis());

        assertThat(failure.get()).isNull();
        assertThat(result.get()).extracting(LogRecord::offset).containsExactlyElementsOf(
                expected.subList(0, (int) first.nextOffset()).stream().map(LogRecord::offset).toList());
        // The second GET is the reader's own, or a read-ahead the reader started again first (a fresh-clone CI run saw
        // that order): either way the chunk is fetched once more, not waited on forever.
        assertThat(store.rangeCalls(first.segmentKey(), 2L * CHUNK)).as("the failed prefetch, then one GET again")
                .hasSize(2).first().isEqualTo("tierlog-cold-fetch");
    }

    @Test
    void aReplayFromSegmentStartsNeedsNoSidecarsAndAReadMidSegmentFetchesOneOnce() {
        TieredStorage ts = storage();
        List<LogRecord> read = readAll(ts, 0, Long.MAX_VALUE, 40, 1 << 20);
        assertSameOffsetsAndValues(read, expected);
        for (ColdSegment s : segments) {
            assertThat(store.gets(s.indexKey())).as("sidecar GETs of " + s.indexKey()).isZero();
        }
        ColdSegment second = segments.get(1);
        long middle = second.baseOffset() + (second.nextOffset() - second.baseOffset()) / 2;
        for (int i = 0; i < 3; i++) {
            assertThat(ts.reader().read(tp, middle, 1, 1 << 20).records()).extracting(LogRecord::offset)
                    .containsExactly(middle);
        }
        assertThat(store.gets(second.indexKey())).as("fetched once, then cached").isEqualTo(1);
    }

    @Test
    void memoryStaysWithinItsBoundAndEvictedChunksAreFetchedAgain() {
        long memory = 12L * CHUNK; // 6 chunks requested and unread, 6 read: the window shrinks to fit (2 chunks)
        TieredStorage ts = storage(TIERING.withRanges(2 * CHUNK, memory));
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> overrun = new AtomicReference<>();
        Thread watcher = new Thread(() -> {
            while (!done.get()) {
                // Prefetches in flight and landed unread stay within half the bound (one reader's own GET of a
                // chunk may come on top); chunks read within the other half.
                long ahead = ts.chunkCache().aheadBytes();
                long read = ts.chunkCache().readBytes();
                if (ahead > memory / 2 + CHUNK || read > memory / 2) {
                    overrun.compareAndSet(null, "ahead " + ahead + ", read " + read);
                }
                Thread.onSpinWait();
            }
        });
        watcher.start();
        List<LogRecord> read;
        try {
            read = readAll(ts, 0, Long.MAX_VALUE, 40, 1 << 20);
        } finally {
            done.set(true);
        }
        assertSameOffsetsAndValues(read, expected);
        assertThat(overrun.get()).as("memory over its bound").isNull();
        long fetched = ts.stats().rangeGetBytes();
        assertThat(fetched).as("each byte once").isEqualTo(segments.stream().mapToLong(ColdSegment::sizeBytes).sum());

        // Nothing of the first segment is left in memory (and nothing was fetched twice, so nothing is on disk): it
        // is fetched again, all of it (and the read-ahead goes on into the next segment).
        ColdSegment first = segments.get(0);
        readAll(ts, 0, first.nextOffset(), 40, 1 << 20);
        assertThat(ts.stats().rangeGetBytes() - fetched).isGreaterThanOrEqualTo(first.sizeBytes());
        assertThat(ts.chunkCache().memoryBytes()).isLessThanOrEqualTo(memory);
        assertThat(ts.chunkCache().aheadBytes()).isLessThanOrEqualTo(memory / 2);
    }

    @Test
    void readsOfAnyShapeReturnExactlyTheLogsRecordsAndHintsStayBounded() {
        TieredStorage ts = storage();
        Random random = new Random(7);
        long coldEnd = expected.size();
        // Sequential reads of varied sizes (each resumes where the last stopped), then random jumps.
        long next = 0;
        while (next < coldEnd) {
            int maxRecords = 1 + random.nextInt(12);
            int maxBytes = 1 + random.nextInt(2500);
            ReadResult r = ts.reader().read(tp, next, maxRecords, maxBytes);
            assertThat(r.records()).extracting(LogRecord::offset)
                    .containsExactlyElementsOf(expectedOffsets(next, maxRecords, maxBytes));
            next = r.nextOffset();
        }
        for (int i = 0; i < 300; i++) {
            long from = random.nextLong(coldEnd);
            int maxRecords = 1 + random.nextInt(30);
            int maxBytes = 1 + random.nextInt(5000);
            ReadResult r = ts.reader().read(tp, from, maxRecords, maxBytes);
            assertThat(r.records()).extracting(LogRecord::offset)
                    .containsExactlyElementsOf(expectedOffsets(from, maxRecords, maxBytes));
            assertSameOffsetsAndValues(r.records(), expected.subList((int) from, (int) from + r.records().size()));
        }
        assertThat(ts.reader().resumeHints()).isBetween(1, ColdReader.RESUME_HINTS);
    }

    /** Bytes the GETs cover, each counted once; fails if two GETs overlap. */
    private static long covered(List<RecordingStore.Call> calls) {
        List<RecordingStore.Call> sorted = calls.stream()
                .sorted(java.util.Comparator.comparingLong(RecordingStore.Call::offset)).toList();
        long end = 0;
        long total = 0;
        for (RecordingStore.Call c : sorted) {
            assertThat(c.offset()).as("GETs overlap at " + c.offset()).isGreaterThanOrEqualTo(end);
            end = c.offset() + c.length();
            total += c.length();
        }
        return total;
    }

    /** The offsets a read must return, by the fetch contract: maxRecords, maxBytes with the first always taken. */
    private List<Long> expectedOffsets(long from, int maxRecords, int maxBytes) {
        List<Long> out = new ArrayList<>();
        int bytes = 0;
        for (int i = (int) from; i < expected.size() && out.size() < maxRecords && bytes < maxBytes; i++) {
            int size = expected.get(i).sizeInBytes();
            if (!out.isEmpty() && bytes + size > maxBytes) {
                break;
            }
            out.add(expected.get(i).offset());
            bytes += size;
        }
        return out;
    }

    private List<LogRecord> readAll(TieredStorage ts, long from, long to, int maxRecords, int maxBytes) {
        List<LogRecord> out = new ArrayList<>();
        long next = from;
        while (next < to) {
            ReadResult r = ts.reader().read(tp, next, maxRecords, maxBytes);
            if (r.records().isEmpty()) {
                break;
            }
            for (LogRecord rec : r.records()) {
                if (rec.offset() < to) {
                    out.add(rec);
                }
            }
            next = r.nextOffset();
        }
        return out;
    }

    private static void assertSameOffsetsAndValues(List<LogRecord> actual, List<LogRecord> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i).offset()).isEqualTo(expected.get(i).offset());
            assertThat(actual.get(i).timestamp()).isEqualTo(expected.get(i).timestamp());
            assertThat(actual.get(i).key()).isEqualTo(expected.get(i).key());
            assertThat(actual.get(i).value()).isEqualTo(expected.get(i).value());
        }
    }

    /** Polls {@code condition} until it holds, failing after 10 s. */
    private static void awaitTrue(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.onSpinWait();
        }
    }
}
