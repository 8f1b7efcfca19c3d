package io.tierlog.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
