package io.tierlog.service.read;

import io.tierlog.log.BatchSlice;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A fetch reuses a partition's listing of its hot segments for up to {@link HotTier#LISTING_REUSE} while its newest
 * segment is the end (ADR 0044): a roll is seen at once, a segment removed by another instance is met as gone and
 * never read from a stale listing, an eviction here drops the listing.
 */
class HotTierListingTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);
    private static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096));

    @TempDir
    Path tmp;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    HotLog log;
    PartitionWriter writer;
    HotTier hot;

    @BeforeEach
    void setUp() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        log = new HotLog(data);
        writer = log.writer(TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
        hot = new HotTier(data, Files.createDirectories(tmp.resolve("index")), clock);
    }

    @AfterEach
    void tearDown() throws Exception {
        writer.close();
        hot.close();
    }

    @Test
    void aRollIsSeenAtOnceWithinTheReuseWindow() {
        appendUntilSegments(2);
        Position end = hot.end(TP);
        List<Long> before = hot.segmentBases(TP, end);
        assertThat(before).hasSize(2);

        appendUntilSegments(3);
        Position rolled = hot.end(TP);
        assertThat(rolled.segmentBase()).isGreaterThan(end.segmentBase());
        assertThat(hot.segmentBases(TP, rolled)).as("no time passed, but the end moved to a new segment")
                .hasSize(3).endsWith(rolled.segmentBase());
    }

    @Test
    void aListingServesForUpToTheReuseWindowThenIsTakenAgain() throws Exception {
        appendUntilSegments(2);
        Position end = hot.end(TP);
        List<Long> listed = hot.segmentBases(TP, end);
        // Another instance's retention removes the oldest segment.
        Files.delete(log.sealedSegmentFile(TP, listed.get(0)));

        assertThat(hot.segmentBases(TP, end)).as("reused within the window").isEqualTo(listed);
        clock.advance(HotTier.LISTING_REUSE.minusMillis(1));
        assertThat(hot.segmentBases(TP, end)).as("still within the window").isEqualTo(listed);
        clock.advanceMillis(1);
        assertThat(hot.segmentBases(TP, end)).as("listed again").containsExactly(listed.get(1));
    }

    @Test
    void aSegmentRemovedByAnotherInstanceIsNeverReadFromTheStaleListing() throws Exception {
        appendUntilSegments(3);
        Position end = hot.end(TP);
        List<Long> listed = hot.segmentBases(TP, end);
        Files.delete(log.sealedSegmentFile(TP, listed.get(0)));

        List<Long> stale = hot.segmentBases(TP, end);
        assertThat(stale).isEqualTo(listed);
        // The read of an offset in the removed segment finds it below the hot tier (the caller then reads cold).
        assertThatThrownBy(() -> hot.sliceBatches(TP, 0, Integer.MAX_VALUE, 1 << 20, end, stale))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(hot.segmentBases(TP, end)).as("the gone segment dropped the listing")
                .containsExactly(listed.get(1), listed.get(2));
        // An offset of a segment still there is served from the listing as before.
        try (BatchSlice slice = hot.sliceBatches(TP, listed.get(1), Integer.MAX_VALUE, 1 << 20, end,
                hot.segmentBases(TP, end))) {
            assertThat(slice).isNotNull();
            assertThat(slice.records()).isPositive();
        }
    }

    @Test
    void anEvictionHereDropsTheListing() throws Exception {
        appendUntilSegments(2);
        Position end = hot.end(TP);
        List<Long> listed = hot.segmentBases(TP, end);
        log.evictBelow(TP, listed.get(1));
        hot.segmentsEvicted(TP, listed.get(1));

        assertThat(hot.segmentBases(TP, end)).containsExactly(listed.get(1));
    }

    /** Appends batches of about 1 KiB until the partition has {@code segments} hot segments. */
    private void appendUntilSegments(int segments) {
        while (log.segmentBases(TP).size() < segments) {
            List<AppendRecord> records = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                records.add(new AppendRecord(null, new byte[256], List.of(), clock.millis()));
            }
            writer.append(records, ProducerIdentity.NONE, SMALL_SEGMENTS);
        }
    }
}
