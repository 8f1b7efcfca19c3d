package io.tierlog.service.read;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.service.metrics.Meters;
import io.tierlog.testkit.ManualClock;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read path bounds a read below a recent end by that end (ADR 0073), and reads again at the end as it is now when
 * the answer reaches it, so no answer tells its reader it is at an end it is not at. The appends here are another
 * process's to the read path: seen only by catching the index up.
 */
class PartitionReadsRecentEndTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @TempDir
    Path tmp;
    final ManualClock clock = new ManualClock(Instant.now());
    PartitionWriter writer;
    HotTier hot;
    FilesystemObjectStore store;
    TieredStorage cold;
    PartitionReads reads;

    @BeforeEach
    void setUp() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        writer = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
        hot = new HotTier(data, Files.createDirectories(tmp.resolve("index")), clock);
        store = new FilesystemObjectStore(tmp.resolve("cold"));
        cold = new TieredStorage(data, tmp.resolve("cache"), store, TieringConfig.DEFAULTS, clock, new Random(1),
                SegmentEvictionListener.NONE);
        reads = new PartitionReads(hot, new ColdTier(cold, new Meters(new SimpleMeterRegistry())),
                new PooledDirectMemory(), new LogStartMarks(data, clock));
    }

    @AfterEach
    void tearDown() throws Exception {
        writer.close();
        hot.close();
        cold.close();
        store.close();
    }

    @Test
    void anAnswerShortOfARecentEndReportsItAndOneThatReachesItIsReadAgainAtTheEnd() {
        append(10);
        assertThat(reads.fetch(TP, 0, 100, 1 << 20).highWatermark()).isEqualTo(10);
        append(5);

        FetchResult shortOfIt = reads.fetch(TP, 0, 3, 1 << 20);
        assertThat(shortOfIt.nextOffset()).isEqualTo(3);
        assertThat(shortOfIt.highWatermark()).as("the recent end, not caught up").isEqualTo(10);

        // A record read goes on past the recent end to the end it finds; cut short there by its record limit, it must
        // not report where it stopped as the end.
        FetchResult pastIt = reads.fetch(TP, 3, 9, 1 << 20);
        assertThat(pastIt.records()).extracting(LogRecord::offset).containsExactly(3L, 4L, 5L, 6L, 7L, 8L, 9L,
                10L, 11L);
        assertThat(pastIt.highWatermark()).isEqualTo(15);
    }

    @Test
    void batchAndSliceReadsReachingARecentEndAreReadAgainAndReadCommittedOnesNeverReuseIt() {
        append(10);
        reads.fetch(TP, 0, 100, 1 << 20);
        append(5);
        try (BatchFetch batches = reads.fetchBatches(TP, 4, Integer.MAX_VALUE, 1 << 20)) {
            assertThat(batches.nextOffset()).isEqualTo(15);
            assertThat(batches.highWatermark()).isEqualTo(15);
        }
        append(5);
        clock.advance(HotTier.LISTING_REUSE); // the end found above is too old now; the next read finds 20
        reads.fetch(TP, 0, 1, 1 << 20);
        append(5);
        try (BatchFetch slices = reads.fetchSlices(TP, 4, Integer.MAX_VALUE, 1 << 20, false)) {
            assertThat(slices.nextOffset()).isEqualTo(25);
            assertThat(slices.highWatermark()).isEqualTo(25);
        }
        append(5);
        try (BatchFetch committed = reads.fetchBatches(TP, 0, 1, 1 << 20, true)) {
            assertThat(committed.highWatermark()).as("read_committed: the end as it is now").isEqualTo(30);
        }
    }

    /** Appends {@code count} records, one batch. */
    private void append(int count) {
        List<AppendRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new AppendRecord(null, new byte[64], List.of(), clock.millis()));
        }
        writer.append(records, ProducerIdentity.NONE, TopicConfig.DEFAULTS);
    }
}
