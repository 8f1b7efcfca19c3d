package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.LogFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The store itself: key order, partition isolation, format and lifecycle. */
class LogIndexTest {
    @TempDir
    Path tmp;

    @Test
    void keysSortNumericallyAndPartitionsAreDisjointRanges() {
        byte[] a1 = IndexKeys.partitionPrefix(new TopicPartition("a", 1));
        byte[] ab0 = IndexKeys.partitionPrefix(new TopicPartition("ab", 0));
        byte[] a256 = IndexKeys.partitionPrefix(new TopicPartition("a", 256));
        // Offsets and timestamps (negative ones included) in bytewise order are in numeric order.
        long[] offsets = {0, 1, 255, 256, 65_536, Long.MAX_VALUE};
        for (int i = 1; i < offsets.length; i++) {
            assertThat(Arrays.compareUnsigned(IndexKeys.offsetKey(a1, offsets[i - 1]), IndexKeys.offsetKey(a1, offsets[i])))
                    .isNegative();
        }
        long[] stamps = {Long.MIN_VALUE, -2, -1, 0, 1, 1_700_000_000_000L, Long.MAX_VALUE};
        for (int i = 1; i < stamps.length; i++) {
            assertThat(Arrays.compareUnsigned(IndexKeys.timeKey(a1, stamps[i - 1]), IndexKeys.timeKey(a1, stamps[i])))
                    .isNegative();
            assertThat(IndexKeys.timestampOf(IndexKeys.timeKey(a1, stamps[i]))).isEqualTo(stamps[i]);
        }
        // Every key of one partition lies inside [prefix, prefix|0xFF) and outside every other partition's range.
        for (byte[] key : List.of(IndexKeys.offsetKey(a1, Long.MAX_VALUE), IndexKeys.timeKey(a1, Long.MAX_VALUE),
                IndexKeys.checkpointKey(a1))) {
            assertThat(Arrays.compareUnsigned(key, IndexKeys.partitionEnd(a1))).isNegative();
            for (byte[] other : List.of(ab0, a256)) {
                boolean below = Arrays.compareUnsigned(key, other) < 0;
                boolean above = Arrays.compareUnsigned(key, IndexKeys.partitionEnd(other)) >= 0;
                assertThat(below || above).isTrue();
            }
        }
        assertThat(IndexKeys.FORMAT_KEY[0]).isZero();
    }

    @Test
    void partitionsWithPrefixSharingNamesDoNotSeeEachOther() {
        TopicPartition a = new TopicPartition("a", 1);
        TopicPartition ab = new TopicPartition("ab", 0);
        Path data = tmp.resolve("data");
        try (LogFixture logA = new LogFixture(data, a, 16 * 1024, 1);
             LogFixture logAb = new LogFixture(data, ab, 16 * 1024, 2);
             LogIndex index = LogIndex.open(tmp.resolve("index"))) {
            logA.appendRandom(150);
            logAb.appendRandom(60);
            HotIndexer indexer = new HotIndexer(index, data, 1024);
            indexer.catchUp(a);
            indexer.catchUp(ab);
            assertFloors(index, a, logA.batches(), 1024);
            assertFloors(index, ab, logAb.batches(), 1024);

            index.dropPartition(ab);
            assertThat(index.indexedEnd(ab)).isEmpty();
            assertThat(index.floor(ab, Long.MAX_VALUE)).isEmpty();
            assertThat(index.forTimestamp(ab, 0)).isEmpty();
            assertFloors(index, a, logA.batches(), 1024);
            assertThat(indexer.catchUp(ab)).isEqualTo(Expect.endOf(logAb.batches()));
            assertFloors(index, ab, logAb.batches(), 1024);
        }
    }

    @Test
    void commitIsACompareAndSetThatNeverResurrectsDroppedEntries() {
        TopicPartition tp = new TopicPartition("t", 0);
        try (LogIndex index = LogIndex.open(tmp.resolve("index"))) {
            IndexCheckpoint first = new IndexCheckpoint(new Position(10, 0, 500), 0, 5, 5);
            IndexUpdate update = new IndexUpdate();
            update.offset(new Position(0, 0, 0));
            update.time(5, new Position(0, 0, 0));
            assertThat(index.commit(tp, null, update, first)).isTrue();
            assertThat(index.commit(tp, null, new IndexUpdate(), first)).as("stale expectation").isFalse();

            index.dropSegmentsBelow(tp, 10);
            assertThat(index.floor(tp, 5)).isEmpty();
            // A run that walked segment 0 before it was dropped commits late: its segment-0 entries are skipped.
            IndexUpdate late = new IndexUpdate();
            late.offset(new Position(5, 0, 250));
            late.time(7, new Position(5, 0, 250));
            late.offset(new Position(10, 10, 0));
            IndexCheckpoint second = new IndexCheckpoint(new Position(12, 10, 100), 0, 7, 7);
            assertThat(index.commit(tp, first, late, second)).isTrue();
            assertThat(index.floor(tp, 9)).isEmpty();
            assertThat(index.floor(tp, 11)).contains(new Position(10, 10, 0));
            assertThat(index.forTimestamp(tp, 7)).contains(new Position(10, 10, 0));
            assertThat(index.forTimestamp(tp, 8)).isEmpty();
            assertThat(index.indexedEnd(tp)).contains(new Position(12, 10, 100));

            index.dropPartition(tp);
            assertThat(index.commit(tp, second, late, second)).as("a run that began before the drop").isFalse();
            assertThat(index.indexedEnd(tp)).isEmpty();
            assertThat(index.floor(tp, Long.MAX_VALUE)).isEmpty();
        }
    }

    @Test
    void aStoreOfUnknownFormatIsRecreatedEmpty() throws Exception {
        Path dir = tmp.resolve("index");
        TopicPartition tp = new TopicPartition("t", 0);
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        // A store some other version wrote: a checkpoint, but no format key.
        try (Options options = new Options().setCreateIfMissing(true);
             RocksDB db = RocksDB.open(options, dir.toString())) {
            db.put(IndexKeys.checkpointKey(prefix), IndexCheckpoint.startOf(7).encode());
            db.put(IndexKeys.offsetKey(prefix, 7), new byte[16]);
        }
        try (LogIndex index = LogIndex.open(dir)) {
            assertThat(index.indexedEnd(tp)).isEmpty();
            assertThat(index.floor(tp, 100)).isEmpty();
        }
    }

    @Test
    void aCorruptStoreIsRecreatedEmpty() throws Exception {
        Path dir = tmp.resolve("index");
        TopicPartition tp = new TopicPartition("t", 0);
        try (LogIndex index = LogIndex.open(dir)) {
            assertThat(index.commit(tp, null, new IndexUpdate(), IndexCheckpoint.startOf(0))).isTrue();
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path manifest : files.filter(p -> p.getFileName().toString().startsWith("MANIFEST-")).toList()) {
                byte[] junk = new byte[(int) Files.size(manifest)];
                Arrays.fill(junk, (byte) 0x42);
                Files.write(manifest, junk);
            }
        }
        try (LogIndex index = LogIndex.open(dir)) {
            assertThat(index.indexedEnd(tp)).isEmpty();
        }
    }

    @Test
    void reopeningKeepsTheIndex() {
        Path data = tmp.resolve("data");
        TopicPartition tp = new TopicPartition("t", 0);
        Position end;
        try (LogFixture log = new LogFixture(data, tp, 16 * 1024, 3)) {
            log.appendRandom(80);
            try (LogIndex index = LogIndex.open(tmp.resolve("index"))) {
                end = new HotIndexer(index, data).catchUp(tp);
            }
            try (LogIndex index = LogIndex.open(tmp.resolve("index"))) {
                assertThat(index.indexedEnd(tp)).contains(end);
                assertFloors(index, tp, log.batches(), HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES);
            }
        }
    }

    @Test
    void aSecondOpenOfTheSameDirectoryFailsAndLeavesTheFirstWorking() {
        Path dir = tmp.resolve("index");
        TopicPartition tp = new TopicPartition("t", 0);
        try (LogIndex first = LogIndex.open(dir)) {
            assertThatThrownBy(() -> LogIndex.open(dir)).isInstanceOf(IndexException.class)
                    .hasMessageContaining(dir.toString());
            first.dropPartition(tp);
            assertThat(first.indexedEnd(tp)).isEmpty();
        }
    }

    @Test
    void callsAfterCloseAreRejectedAndCloseIsIdempotent() {
        TopicPartition tp = new TopicPartition("t", 0);
        LogIndex index = LogIndex.open(tmp.resolve("index"));
        index.close();
        index.close();
        assertThatThrownBy(() -> index.floor(tp, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> index.dropPartition(tp)).isInstanceOf(IllegalStateException.class);
    }

    private static void assertFloors(LogIndex index, TopicPartition tp, List<BatchInfo> batches, int interval) {
        List<Position> entries = ExpectedIndex.entries(batches, interval);
        long end = batches.get(batches.size() - 1).nextOffset();
        for (long offset = 0; offset < end; offset++) {
            assertThat(index.floor(tp, offset)).as("%s floor(%d)", tp, offset).isEqualTo(Expect.floor(entries, offset));
        }
    }
}
