package io.tierlog.service.read;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.service.ServiceThreads;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** This process's appends are indexed on the indexing thread, before any read asks (ADR 0044). */
class AppendIndexingTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @TempDir
    Path tmp;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    ServiceThreads threads = new ServiceThreads();
    PartitionWriter writer;
    HotTier hot;
    AppendIndexing indexing;

    @BeforeEach
    void setUp() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        writer = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
        hot = new HotTier(data, Files.createDirectories(tmp.resolve("index")), clock);
        indexing = new AppendIndexing(hot, threads, Duration.ZERO);
    }

    @AfterEach
    void tearDown() throws Exception {
        threads.stop();
        writer.close();
        hot.close();
    }

    @Test
    void anAppendIsIndexedWithoutARead() throws Exception {
        long end = append(10);
        assertThat(hot.indexedEnd(TP)).as("nothing read the partition yet").isEmpty();

        indexing.appended(TP);
        drainIndexing();

        assertThat(hot.indexedEnd(TP)).hasValueSatisfying(p -> assertThat(p.offset()).isEqualTo(end));
    }

    @Test
    void appendsWhileACatchUpIsQueuedShareIt() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        threads.indexing().execute(() -> {
            started.countDown();
            await(release);
        });
        // Running, not queued: the queue then holds only what the appends add.
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        append(5);
        indexing.appended(TP);
        long end = append(5);
        indexing.appended(TP);
        assertThat(indexing.isQueued(TP)).isTrue();
        assertThat(((ThreadPoolExecutor) threads.indexing()).getQueue())
                .as("one catch-up queued behind the blocked task for both appends").hasSize(1);

        release.countDown();
        drainIndexing();

        assertThat(indexing.isQueued(TP)).isFalse();
        assertThat(hot.indexedEnd(TP)).hasValueSatisfying(p -> assertThat(p.offset()).isEqualTo(end));
    }

    @Test
    void aCatchUpWaitsTheDelayForMoreAppendsToShareIt() throws Exception {
        AppendIndexing delayed = new AppendIndexing(hot, threads, Duration.ofSeconds(2));
        append(5);
        delayed.appended(TP);
        long end = append(5);
        delayed.appended(TP);

        assertThat(((ThreadPoolExecutor) threads.indexing()).getQueue()).as("one catch-up for both appends")
                .singleElement().satisfies(task -> assertThat(((ScheduledFuture<?>) task).getDelay(TimeUnit.MILLISECONDS))
                        .as("due after the delay, not at once").isGreaterThan(1000));
        assertThat(hot.indexedEnd(TP)).isEmpty();

        // One thread, in time order: a task due after the catch-up runs after it.
        threads.indexing().schedule(() -> { }, 2100, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertThat(delayed.isQueued(TP)).isFalse();
        assertThat(hot.indexedEnd(TP)).hasValueSatisfying(p -> assertThat(p.offset()).isEqualTo(end));
    }

    /** Appends {@code records} records in one batch; returns the offset after them. */
    private long append(int records) {
        List<AppendRecord> batch = java.util.stream.IntStream.range(0, records)
                .mapToObj(i -> new AppendRecord(null, new byte[64], List.of(), clock.millis())).toList();
        return writer.append(batch, ProducerIdentity.NONE, TopicConfig.DEFAULTS).lastOffset() + 1;
    }

    /** The indexing pool has one thread and runs in order: a task submitted now runs after every queued one. */
    private void drainIndexing() throws Exception {
        threads.indexing().submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
