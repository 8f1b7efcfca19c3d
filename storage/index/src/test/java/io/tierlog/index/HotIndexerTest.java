package io.tierlog.index;

import io.tierlog.log.BatchPositions;
import io.tierlog.log.HotLog;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.LogFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Indexing a log that changes: appends, retention, corruption and rewrites. Each test writes its own log. */
class HotIndexerTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);
    private static final int INTERVAL = HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES;

    @TempDir
    Path tmp;
    Path dataDir;
    LogFixture log;
    LogIndex index;
    HotIndexer indexer;

    @BeforeEach
    void setUp() {
        dataDir = tmp.resolve("data");
        log = new LogFixture(dataDir, TP, 64 * 1024, 1234);
        index = LogIndex.open(tmp.resolve("index"));
        indexer = new HotIndexer(index, dataDir);
    }

    @AfterEach
    void tearDown() {
        index.close();
        log.close();
    }

    @Test
    void incrementalCatchUpSeesEachAppendAndMatchesAOnePassIndex() {
        Random random = new Random(5);
        log.appendRandom(100);
        for (int round = 0; round < 25; round++) {
            Position before = indexer.catchUp(TP);
            assertThat(indexer.catchUp(TP)).as("nothing appended").isEqualTo(before);
            log.appendRandom(1 + random.nextInt(40));
            Position end = indexer.catchUp(TP);
            List<BatchInfo> batches = log.batches();
            assertThat(end).isEqualTo(Expect.endOf(batches));
            assertThat(index.indexedEnd(TP)).contains(end);
            // Every new offset is readable through its hint right after the catch-up.
            for (long offset = before.offset(); offset < end.offset(); offset++) {
                ReadResult read = log.reader().read(offset, indexer.hint(TP, offset).orElseThrow(), 1, Integer.MAX_VALUE);
                assertThat(read.records()).extracting(LogRecord::offset).containsExactly(offset);
            }
        }
        assertFloorsMatch(log.batches());
    }

    @Test
    void hintAtTheIndexedEndFindsAnAppendMadeAfterTheLastCatchUp() {
        log.appendRandom(50);
        Position end = indexer.catchUp(TP);
        log.appendRandom(1);
        Position hint = indexer.hint(TP, end.offset()).orElseThrow();
        assertThat(hint).isEqualTo(end);
        ReadResult read = log.reader().read(end.offset(), hint, 10, Integer.MAX_VALUE);
        assertThat(read.records()).isNotEmpty();
        assertThat(read.records().get(0).offset()).isEqualTo(end.offset());
    }

    @Test
    void concurrentCatchUpsDuringAppendsBuildTheSameIndex() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        AtomicBoolean appending = new AtomicBoolean(true);
        CountDownLatch started = new CountDownLatch(3);
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                workers.add(pool.submit(() -> {
                    started.countDown();
                    int calls = 0;
                    long last = -1;
                    while (appending.get()) {
                        long end = indexer.catchUp(TP).offset();
                        assertThat(end).isGreaterThanOrEqualTo(last);
                        last = end;
                        calls++;
                    }
                    return calls;
                }));
            }
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            log.appendRandom(600);
            appending.set(false);
            for (Future<Integer> w : workers) {
                assertThat(w.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(indexer.catchUp(TP)).isEqualTo(Expect.endOf(log.batches()));
        assertFloorsMatch(log.batches());
    }

    @Test
    void dropSegmentsBelowForgetsEvictedSegmentsAndKeepsTheRest() throws IOException {
        log.appendRandom(400);
        indexer.catchUp(TP);
        List<BatchInfo> all = log.batches();
        index.dropSegmentsBelow(TP, 0);
        assertFloorsMatch(all);
        List<Long> bases = log.reader().segmentBases();
        assertThat(bases).hasSizeGreaterThan(6);
        long kept = bases.get(4);
        new HotLog(dataDir).evictBelow(TP, kept);
        index.dropSegmentsBelow(TP, kept);

        assertThat(index.floor(TP, kept - 1)).isEmpty();
        assertThat(index.floor(TP, 0)).isEmpty();
        List<BatchInfo> retained = all.stream().filter(b -> b.segmentBase() >= kept).toList();
        assertFloorsMatch(retained);
        // Time search covers what is left and never points into an evicted segment.
        List<LogRecord> records = log.records();
        assertThat(records.get(0).offset()).isEqualTo(kept);
        for (long ts : sampleTimestamps(records)) {
            index.forTimestamp(TP, ts).ifPresent(p -> assertThat(p.segmentBase()).isGreaterThanOrEqualTo(kept));
            long expected = LogFixture.firstAtOrAfter(records, ts);
            assertThat(indexer.offsetForTimestamp(TP, ts)).as("offsetForTimestamp(%d)", ts)
                    .isEqualTo(expected < 0 ? OptionalLong.empty() : OptionalLong.of(expected));
        }
        // Indexing carries on.
        log.appendRandom(30);
        assertThat(indexer.catchUp(TP)).isEqualTo(Expect.endOf(log.batches()));
        assertFloorsMatch(log.batches());
    }

    @Test
    void checkpointInARemovedSegmentResumesAtTheOldestSegment() throws IOException {
        log.appendRandom(60);
        Position indexed = indexer.catchUp(TP);
        log.appendRandom(400);
        List<Long> bases = log.reader().segmentBases();
        int cut = bases.indexOf(indexed.segmentBase()) + 2;
        assertThat(cut).isLessThan(bases.size() - 1);
        new HotLog(dataDir).evictBelow(TP, bases.get(cut));

        List<BatchInfo> retained = log.batches();
        assertThat(indexer.catchUp(TP)).isEqualTo(Expect.endOf(retained));
        assertThat(index.floor(TP, bases.get(cut) - 1)).as("stale entries dropped").isEmpty();
        assertFloorsMatch(retained);
    }

    @Test
    void corruptByteStopsIndexingAtTheCorruptBatch() throws IOException {
        log.appendRandom(300);
        List<BatchInfo> batches = log.batches();
        long lastSegment = batches.get(batches.size() - 1).segmentBase();
        // A batch in the middle of a sealed segment, with a record byte flipped: the CRC32C no longer matches.
        BatchInfo victim = batches.stream().filter(b -> b.segmentBase() != lastSegment && b.position() > 0
                && b.sizeInBytes() > 200).skip(40).findFirst().orElseThrow();
        flipByte(new HotLog(dataDir).sealedSegmentFile(TP, victim.segmentBase()),
                victim.endPosition() - 7);

        assertThatThrownBy(() -> indexer.catchUp(TP)).isInstanceOf(CorruptLogException.class);
        Position victimStart = new Position(victim.baseOffset(), victim.segmentBase(), victim.position());
        assertThat(index.indexedEnd(TP)).as("indexed up to the corrupt batch, not past it").contains(victimStart);
        assertThat(index.floor(TP, Long.MAX_VALUE).orElseThrow().offset()).isLessThanOrEqualTo(victim.baseOffset());
        assertThat(indexer.hint(TP, victim.lastOffset() + 1000)).contains(victimStart);
        // It stays an error: a later call does not skip the batch.
        assertThatThrownBy(() -> indexer.catchUp(TP)).isInstanceOf(CorruptLogException.class);
        assertThatThrownBy(() -> indexer.offsetForTimestamp(TP, Long.MAX_VALUE)).isInstanceOf(CorruptLogException.class);
        assertThat(index.indexedEnd(TP)).contains(victimStart);
    }

    @Test
    void aBatchStillBeingAppendedAtTheCheckpointResumesThereInsteadOfReindexing() throws IOException {
        log.appendRandom(300);
        Position indexed = indexer.catchUp(TP);
        List<BatchInfo> before = log.batches();
        log.appendRandom(1);
        BatchInfo appended = log.batches().get(before.size());
        long newest = appended.segmentBase();
        assertThat(before.get(before.size() - 1).segmentBase()).as("appended to the newest segment").isEqualTo(newest);
        // Damage an indexed batch of a sealed segment: a re-index from the oldest segment would now stop on it.
        BatchInfo indexedBatch = before.stream().filter(b -> b.segmentBase() != newest && b.sizeInBytes() > 200)
                .findFirst().orElseThrow();
        flipByte(new HotLog(dataDir).sealedSegmentFile(TP, indexedBatch.segmentBase()), indexedBatch.endPosition() - 7);
        Path segment = new HotLog(dataDir).sealedSegmentFile(TP, newest);

        // The appender has written part of the batch, then only part of its header: as a reader sees a write in
        // progress. Either way the checkpoint is still a batch boundary, and nothing new is visible yet.
        for (long written : List.of(appended.sizeInBytes() / 2L, 5L)) {
            try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
                ch.truncate(appended.position() + written);
            }
            assertThat(indexer.catchUp(TP)).as("%d bytes of the batch written", written).isEqualTo(indexed);
        }
    }

    @Test
    void rewrittenLogIsReindexedFromScratch() throws IOException {
        log.appendRandom(300);
        indexer.catchUp(TP);
        log.close();
        IndexAgainstBruteForceTest.deleteRecursively(log.reader().directory());

        log = new LogFixture(dataDir, TP, 64 * 1024, 99);
        log.appendRandom(40);
        List<BatchInfo> batches = log.batches();
        assertThat(indexer.catchUp(TP)).isEqualTo(Expect.endOf(batches));
        assertFloorsMatch(batches);
        assertThat(index.floor(TP, Long.MAX_VALUE).orElseThrow().offset())
                .isLessThanOrEqualTo(batches.get(batches.size() - 1).baseOffset());
    }

    @Test
    void theNewestSegmentsBatchPositionsAreHeldAsIndexedAndForgottenWithALogRewritten() throws IOException {
        Random random = new Random(8);
        for (int round = 0; round < 30; round++) {
            log.appendRandom(1 + random.nextInt(60));
            Position end = indexer.catchUp(TP);
            BatchPositions held = indexer.positions(TP);
            List<Long> bases = log.reader().segmentBases();
            assertThat(held.holds(end.segmentBase()) && held.holds(end.offset() - 1)).as("round " + round).isTrue();
            assertThat(held.holds(end.offset())).isFalse();
            if (bases.size() > 1) {
                assertThat(held.holds(bases.get(bases.size() - 2))).as("a sealed segment").isFalse();
            }
        }
        assertThat(log.reader().segmentBases()).hasSizeGreaterThan(2);
        log.close();
        IndexAgainstBruteForceTest.deleteRecursively(log.reader().directory());
        log = new LogFixture(dataDir, TP, 64 * 1024, 99);
        log.appendRandom(40);
        Position end = indexer.catchUp(TP);
        assertThat(end.segmentBase()).isZero();
        assertThat(indexer.positions(TP).holds(0) && indexer.positions(TP).holds(end.offset() - 1)).isTrue();
        indexer.forget(TP);
        assertThat(indexer.positions(TP)).isNull();
    }

    @Test
    void aBudgetRunShortReleasesTheBatchPositionsOfPartitionsIdleSinceItLastDid() {
        TopicPartition other = new TopicPartition("events", 1);
        HotIndexer small = new HotIndexer(index, dataDir, INTERVAL, null, 256);
        try (LogFixture otherLog = new LogFixture(dataDir, other, 64 * 1024, 77)) {
            log.appendRandom(20);
            small.catchUp(TP);
            assertThat(small.positions(TP).holds(0)).as("the budget's 256 batches").isTrue();
            for (int round = 0; round < 2; round++) {
                otherLog.appendRandom(5);
                Position end = small.catchUp(other);
                assertThat(small.positions(other).holds(end.offset() - 1)).as("no room, round " + round).isFalse();
            }
            assertThat(small.positions(TP)).as("idle since the budget last ran short: released").isNull();
            otherLog.appendRandom(5);
            Position end = small.catchUp(other);
            assertThat(small.positions(other).holds(end.offset() - 1)).isTrue();
        }
    }

    @Test
    void partitionWithoutSegmentsHasAnEmptyIndex() {
        TopicPartition absent = new TopicPartition("absent", 0);
        assertThat(indexer.catchUp(absent)).isEqualTo(new Position(0, 0, 0));
        assertThat(indexer.hint(absent, 0)).isEmpty();
        assertThat(indexer.offsetForTimestamp(absent, 0)).isEmpty();
        assertThat(index.indexedEnd(absent)).isEmpty();
    }

    /** floor() equals brute force for every offset of {@code batches}, and nothing else is indexed before them. */
    private void assertFloorsMatch(List<BatchInfo> batches) {
        List<Position> entries = ExpectedIndex.entries(batches, INTERVAL);
        long first = batches.get(0).baseOffset();
        long end = batches.get(batches.size() - 1).nextOffset();
        for (long offset = first; offset < end; offset++) {
            assertThat(index.floor(TP, offset)).as("floor(%d)", offset).isEqualTo(Expect.floor(entries, offset));
        }
    }

    private static List<Long> sampleTimestamps(List<LogRecord> records) {
        List<Long> out = new ArrayList<>(List.of(Long.MIN_VALUE, -1L, Long.MAX_VALUE));
        for (int i = 0; i < records.size(); i += 13) {
            out.add(records.get(i).timestamp());
            out.add(records.get(i).timestamp() + 1);
        }
        return out;
    }

    private static void flipByte(Path file, long position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, position);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            b.rewind();
            ch.write(b, position);
        }
    }
}
