package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two writer instances for one partition inside one JVM (two IngestServices, or a service reopened while the old
 * one still serves) must take turns like two processes do. The JDK refuses a second fcntl lock on a file that
 * this JVM already locks ({@code OverlappingFileLockException}), so the writer must serialise same-JVM writers
 * itself.
 */
class SameJvmWritersTest {
    @TempDir
    Path data;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void twoWriterInstancesInOneJvmTakeTurns() throws Exception {
        TopicPartition tp = new TopicPartition("same-jvm", 0);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16 * 1024));
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        int perWriter = 400;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CountDownLatch start = new CountDownLatch(1);
        try (PartitionWriter a = new PartitionWriter(data, tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
             PartitionWriter b = new PartitionWriter(data, tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            List<Future<List<AppendResult>>> futures = new ArrayList<>();
            for (PartitionWriter w : List.of(a, b)) {
                String name = w == a ? "a" : "b";
                futures.add(pool.submit(() -> {
                    start.await();
                    List<AppendResult> acks = new ArrayList<>();
                    for (int i = 0; i < perWriter; i++) {
                        acks.add(w.append(List.of(new AppendRecord(null, (name + i).getBytes(StandardCharsets.UTF_8),
                                List.of(), clock.millis())), ProducerIdentity.NONE, config));
                    }
                    return acks;
                }));
            }
            start.countDown();
            List<Long> offsets = new ArrayList<>();
            for (Future<List<AppendResult>> f : futures) {
                f.get(50, TimeUnit.SECONDS).forEach(r -> offsets.add(r.baseOffset()));
            }
            assertThat(offsets).doesNotHaveDuplicates().hasSize(2 * perWriter);
            assertThat(offsets.stream().mapToLong(Long::longValue).max().orElseThrow()).isEqualTo(2L * perWriter - 1);
        } finally {
            pool.shutdownNow();
        }
        ReadResult all = new PartitionReader(data, tp).read(0, null, 10_000, 1 << 24);
        assertThat(all.records()).hasSize(2 * perWriter);
        assertThat(all.nextOffset()).isEqualTo(2L * perWriter);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void concurrentAppendsUnderFsyncAlwaysShareForcesAndStayDenseAcrossRolls() throws Exception {
        TopicPartition tp = new TopicPartition("group-commit", 0);
        // Small segments: appends roll while others wait for a force of the segment they wrote.
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 8 * 1024));
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        int threads = 8;
        int perThread = 150;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Long> offsets = new ArrayList<>();
        try (PartitionWriter w = new PartitionWriter(data, tp, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), clock)) {
            List<Future<List<AppendResult>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    List<AppendResult> acks = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        acks.add(w.append(List.of(new AppendRecord(null, ("t" + thread + "-" + i)
                                .getBytes(StandardCharsets.UTF_8), List.of(), clock.millis())), ProducerIdentity.NONE, config));
                    }
                    return acks;
                }));
            }
            start.countDown();
            for (Future<List<AppendResult>> f : futures) {
                f.get(50, TimeUnit.SECONDS).forEach(r -> offsets.add(r.baseOffset()));
            }
        } finally {
            pool.shutdownNow();
        }
        int total = threads * perThread;
        assertThat(offsets).doesNotHaveDuplicates().hasSize(total);
        assertThat(offsets.stream().mapToLong(Long::longValue).max().orElseThrow()).isEqualTo(total - 1L);
        ReadResult all = new PartitionReader(data, tp).read(0, null, 10_000, 1 << 24);
        assertThat(all.records()).hasSize(total);
        assertThat(io.tierlog.log.internal.segment.SegmentFiles.segmentBases(data.resolve(tp.dirName())))
                .as("the appends rolled segments").hasSizeGreaterThan(10);
    }
}
