package io.tierlog.service.read;

import io.tierlog.log.BatchSlice;
import io.tierlog.log.Position;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a fetch reuses for up to {@link HotTier#LISTING_REUSE}. A partition's listing of its hot segments, while its
 * newest segment is the end (ADR 0044): a roll is seen at once, a segment removed by another instance is met as gone
 * and never read from a stale listing, an eviction here drops the listing. The end last found, for a read from below
 * it (ADR 0073): a read at the end catches up at once, so an append by another process is readable at once, and an
 * append acknowledged by this process ends the reuse. The writer here is not the tier's: its appends are seen only by
 * catching the index up, as another process's are, unless the test says they were made here.
 */
class HotTierReuseTest extends HotTierFixture {
    private static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096));

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

    @Test
    void aReadBelowARecentEndReusesItAndAReadAtTheEndSeesAnAppendAtOnce() {
        append(10);
        assertThat(hot.end(TP).offset()).isEqualTo(10);
        append(5);

        assertThat(recent(3)).as("below the end found: reused").isEqualTo(10);
        assertThat(recent(10)).as("at the end: caught up").isEqualTo(15);
        assertThat(recent(3)).as("the new end is the one reused").isEqualTo(15);

        append(5);
        clock.advance(HotTier.LISTING_REUSE.minusMillis(1));
        assertThat(recent(3)).as("still within the window").isEqualTo(15);
        clock.advanceMillis(1);
        assertThat(recent(3)).as("caught up once the window is over").isEqualTo(20);
    }

    @Test
    void anAppendAcknowledgedHereEndsTheReuseSoEveryLaterReadSeesIt() {
        append(10);
        assertThat(hot.end(TP).offset()).isEqualTo(10);
        append(5);
        hot.appendedHere(TP); // as the produce path does before it answers
        assertThat(recent(3)).isEqualTo(15);
        assertThat(recent(3)).as("found after the append: reused again").isEqualTo(15);
    }

    @Test
    void theHighWatermarkAndTheEndAreAlwaysFound() {
        append(10);
        assertThat(recent(0)).isEqualTo(10);
        append(5);
        assertThat(hot.highWatermark(TP)).isEqualTo(15);
        append(5);
        assertThat(hot.end(TP).offset()).isEqualTo(20);
    }

    @Test
    void aForgottenTopicHasNoEndToReuse() {
        append(10);
        assertThat(hot.end(TP).offset()).isEqualTo(10);
        append(5);
        hot.forget(TP.topic(), 1);
        assertThat(recent(3)).isEqualTo(15);
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

    /** The end a read from {@code offset} is bounded by, as the read path chooses it. */
    private long recent(long offset) {
        Position recent = hot.recentEnd(TP, offset);
        return (recent != null ? recent : hot.end(TP)).offset();
    }

    /** Appends {@code count} records of 64 bytes, one batch. */
    private void append(int count) {
        List<AppendRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new AppendRecord(null, new byte[64], List.of(), clock.millis()));
        }
        writer.append(records, ProducerIdentity.NONE, TopicConfig.DEFAULTS);
    }
}
