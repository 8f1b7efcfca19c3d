package io.tierlog.log;

import io.tierlog.log.io.FileVersion;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Log start marks on real files: forward only, durable, seen by another reader on the volume at its next read. */
class LogStartMarksTest {
    @TempDir
    Path dataDir;
    final TopicPartition tp = new TopicPartition("orders", 3);

    @Test
    void aPartitionWithoutAMarkStartsAtZeroAndAMarkOnlyMovesForward() {
        LogStartMarks marks = new LogStartMarks(dataDir);
        assertThat(marks.markOf(tp)).isZero();
        assertThat(marks.advance(tp, 40)).isEqualTo(40);
        assertThat(marks.advance(tp, 25)).as("never back").isEqualTo(40);
        assertThat(marks.markOf(tp)).isEqualTo(40);
        assertThat(marks.advance(tp, 41)).isEqualTo(41);
        assertThat(marks.markOf(new TopicPartition("orders", 2))).as("per partition").isZero();
    }

    @Test
    void anotherInstanceSeesAMoveAtItsNextReadAndARestartKeepsIt() {
        LogStartMarks a = new LogStartMarks(dataDir);
        LogStartMarks b = new LogStartMarks(dataDir);
        a.advance(tp, 10);
        assertThat(b.markOf(tp)).isEqualTo(10);
        a.advance(tp, 11); // b has 10 cached: the new file is another inode
        assertThat(b.markOf(tp)).isEqualTo(11);
        assertThat(new LogStartMarks(dataDir).markOf(tp)).as("a new process").isEqualTo(11);
    }

    @Test
    void aMarkReadWithinTheSettleTimeOfItsWriteIsReadAgainThenTrustedOnceSettled() throws Exception {
        // Two moves within one tick of the file system's clock can leave the same inode (freed and reused), size and
        // time; the same file rewritten in place stands for that here.
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        LogStartMarks reader = new LogStartMarks(dataDir, clock);
        new LogStartMarks(dataDir, clock).advance(tp, 1000);
        Path file = dataDir.resolve(tp.dirName()).resolve(LogStartMarks.FILE);
        FileTime written = FileTime.fromMillis(clock.millis() - 10);
        Files.setLastModifiedTime(file, written);
        assertThat(reader.markOf(tp)).isEqualTo(1000);

        rewriteInPlace(file, "2000", written);
        assertThat(reader.markOf(tp)).as("not settled: read again").isEqualTo(2000);
        clock.advance(FileVersion.SETTLE);
        assertThat(reader.markOf(tp)).isEqualTo(2000);
        rewriteInPlace(file, "3000", written);
        assertThat(reader.markOf(tp)).as("settled: the version's stat is all that is checked").isEqualTo(2000);
        assertThat(new LogStartMarks(dataDir, clock).markOf(tp)).isEqualTo(3000);
    }

    private static void rewriteInPlace(Path file, String mark, FileTime time) throws Exception {
        assertThat(Files.size(file)).isEqualTo(mark.length());
        Files.write(file, mark.getBytes(StandardCharsets.US_ASCII), StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(file, time);
    }

    @Test
    void aDeletedPartitionDirectoryTakesItsMarkWithIt() throws Exception {
        LogStartMarks marks = new LogStartMarks(dataDir);
        marks.advance(tp, 7);
        assertThat(marks.markOf(tp)).isEqualTo(7);
        Path dir = dataDir.resolve(tp.dirName());
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
        assertThat(marks.markOf(tp)).isZero();
    }

    @Test
    void concurrentMovesFromTwoInstancesEndAtTheFurthest() throws Exception {
        List<LogStartMarks> instances = List.of(new LogStartMarks(dataDir), new LogStartMarks(dataDir));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Long>> results = new ArrayList<>();
        try {
            for (int i = 0; i < 64; i++) {
                long offset = (i * 37L) % 64 + 1;
                LogStartMarks m = instances.get(i % 2);
                results.add(pool.submit(() -> {
                    go.await();
                    return m.advance(tp, offset);
                }));
            }
            go.countDown();
            for (Future<Long> r : results) {
                assertThat(r.get()).isBetween(1L, 64L);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(instances.get(0).markOf(tp)).isEqualTo(64);
        assertThat(instances.get(1).markOf(tp)).isEqualTo(64);
    }

    @Test
    void aDamagedMarkIsAnErrorNotAStartOfZero() throws Exception {
        LogStartMarks marks = new LogStartMarks(dataDir);
        marks.advance(tp, 5);
        Files.writeString(dataDir.resolve(tp.dirName()).resolve(LogStartMarks.FILE), "5x", StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> new LogStartMarks(dataDir).markOf(tp)).isInstanceOfSatisfying(TierlogException.class,
                e -> assertThat(e.type()).isEqualTo(ErrorType.INTERNAL));
    }
}
