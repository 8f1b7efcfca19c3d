package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.LogFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One real log of 5,000 batches of random sizes across dozens of segments, indexed from scratch, with every
 * answer checked against brute force over the batches and records read back from the segments.
 */
class IndexAgainstBruteForceTest {
    private static final TopicPartition TP = new TopicPartition("orders", 3);
    private static final int BATCHES = 5_000;

    @TempDir
    static Path tmp;
    static Path dataDir;
    static LogFixture log;
    static List<BatchInfo> batches;
    static List<LogRecord> records;

    @BeforeAll
    static void writeLog() {
        dataDir = tmp.resolve("data");
        log = new LogFixture(dataDir, TP, 200_000, 42);
        log.appendRandom(BATCHES);
        batches = log.batches();
        records = log.records();
        assertThat(batches).hasSize(BATCHES);
        assertThat(log.reader().segmentBases()).hasSizeGreaterThan(10);
    }

    @AfterAll
    static void closeLog() {
        log.close();
    }

    @Test
    void floorAndHintMatchBruteForceForEveryOffset() {
        List<Position> entries = ExpectedIndex.entries(batches, HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES);
        try (LogIndex index = LogIndex.open(tmp.resolve("floor-index"))) {
            HotIndexer indexer = new HotIndexer(index, dataDir);
            Position end = indexer.catchUp(TP);

            assertThat(end).isEqualTo(Expect.endOf(batches));
            assertThat(index.indexedEnd(TP)).contains(end);
            for (long offset = 0; offset < end.offset(); offset++) {
                Optional<Position> floor = index.floor(TP, offset);
                assertThat(floor).as("floor(%d)", offset).isEqualTo(Expect.floor(entries, offset));
                assertThat(indexer.hint(TP, offset)).as("hint(%d)", offset).isEqualTo(floor);
                // Sparse, but never too sparse: the hint is in the offset's segment, within one interval of it.
                BatchInfo holder = Expect.batchOf(batches, offset);
                assertThat(floor.get().segmentBase()).isEqualTo(holder.segmentBase());
                assertThat(holder.position() - floor.get().position())
                        .isLessThan(HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES);
            }
            assertThat(index.floor(TP, -1)).isEmpty();
            assertThat(indexer.hint(TP, -1)).isEmpty();
            assertThat(index.floor(new TopicPartition("orders", 4), 10)).as("another partition").isEmpty();
            // Beyond the last entry, the hint is the indexed end: a fresh append is found by a short scan.
            assertThat(indexer.hint(TP, end.offset())).contains(end);
            assertThat(indexer.hint(TP, end.offset() + 1000)).contains(end);
            assertThat(entries.size()).isLessThan(batches.size() / 2);
        }
    }

    @Test
    void withAnIntervalOfOneByteEveryBatchIsAnEntry() {
        // About 5,000 offset entries plus time entries: more than one write's worth, so chunked commits are exercised.
        try (LogIndex index = LogIndex.open(tmp.resolve("dense-index"))) {
            HotIndexer indexer = new HotIndexer(index, dataDir, 1);
            assertThat(indexer.catchUp(TP)).isEqualTo(Expect.endOf(batches));
            for (BatchInfo b : batches) {
                Position start = new Position(b.baseOffset(), b.segmentBase(), b.position());
                assertThat(index.floor(TP, b.baseOffset())).isEqualTo(Optional.of(start));
                assertThat(index.floor(TP, b.lastOffset())).isEqualTo(Optional.of(start));
            }
        }
    }

    @Test
    void readsThroughHintsReturnTheRequestedOffset() {
        try (LogIndex index = LogIndex.open(tmp.resolve("read-index"))) {
            HotIndexer indexer = new HotIndexer(index, dataDir);
            Position end = indexer.catchUp(TP);
            for (long offset = 0; offset < end.offset(); offset += 7) {
                Position hint = indexer.hint(TP, offset).orElseThrow();
                ReadResult read = log.reader().read(offset, hint, 1, Integer.MAX_VALUE);
                assertThat(read.records()).as("read at %d", offset).hasSize(1);
                assertThat(read.records().get(0).offset()).isEqualTo(offset);
            }
        }
    }

    @Test
    void offsetForTimestampMatchesBruteForceWithNonMonotonicTimestamps() {
        try (LogIndex index = LogIndex.open(tmp.resolve("time-index"))) {
            HotIndexer indexer = new HotIndexer(index, dataDir);
            indexer.catchUp(TP);
            for (long ts : targets()) {
                long expected = LogFixture.firstAtOrAfter(records, ts);
                OptionalLong actual = indexer.offsetForTimestamp(TP, ts);
                assertThat(actual).as("offsetForTimestamp(%d)", ts)
                        .isEqualTo(expected < 0 ? OptionalLong.empty() : OptionalLong.of(expected));
                // The index's own answer is a batch boundary at or before the record, or empty when there is none.
                Optional<Position> start = index.forTimestamp(TP, ts);
                if (expected < 0) {
                    assertThat(start).isEmpty();
                } else {
                    assertThat(start.get().offset()).isLessThanOrEqualTo(expected);
                    assertThat(batches).anyMatch(b -> b.baseOffset() == start.get().offset()
                            && b.segmentBase() == start.get().segmentBase() && b.position() == start.get().position());
                }
            }
        }
    }

    @Test
    void indexLossRebuildsTheSameAnswers() throws IOException {
        Path dir = tmp.resolve("lost-index");
        Map<Long, Optional<Position>> floors = new LinkedHashMap<>();
        Map<Long, Optional<Position>> starts = new LinkedHashMap<>();
        Position end;
        try (LogIndex index = LogIndex.open(dir)) {
            end = new HotIndexer(index, dataDir).catchUp(TP);
            for (long offset = 0; offset < end.offset(); offset += 3) {
                floors.put(offset, index.floor(TP, offset));
            }
            for (long ts : targets()) {
                starts.put(ts, index.forTimestamp(TP, ts));
            }
        }
        deleteRecursively(dir);

        try (LogIndex index = LogIndex.open(dir)) {
            assertThat(index.indexedEnd(TP)).isEmpty();
            assertThat(index.floor(TP, end.offset())).isEmpty();
            assertThat(new HotIndexer(index, dataDir).catchUp(TP)).isEqualTo(end);
            floors.forEach((offset, floor) -> assertThat(index.floor(TP, offset)).as("floor(%d)", offset).isEqualTo(floor));
            starts.forEach((ts, start) -> assertThat(index.forTimestamp(TP, ts)).as("forTimestamp(%d)", ts).isEqualTo(start));
        }
    }

    /** Timestamps to search for: edges, every 50th record's exact timestamp, and random ones across the range. */
    private static List<Long> targets() {
        long min = records.stream().mapToLong(LogRecord::timestamp).filter(t -> t >= 0).min().orElseThrow();
        long max = records.stream().mapToLong(LogRecord::timestamp).max().orElseThrow();
        List<Long> out = new ArrayList<>(List.of(Long.MIN_VALUE, -2L, -1L, 0L, min - 1, min, min + 1, max - 1, max,
                max + 1, Long.MAX_VALUE));
        for (int i = 0; i < records.size(); i += 50) {
            out.add(records.get(i).timestamp());
        }
        Random random = new Random(7);
        for (int i = 0; i < 200; i++) {
            out.add(min + (long) (random.nextDouble() * (max - min)));
        }
        return out;
    }

    static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
