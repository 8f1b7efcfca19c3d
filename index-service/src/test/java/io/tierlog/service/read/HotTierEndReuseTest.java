package io.tierlog.service.read;

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read from below a partition's end as last found may be bounded by that end for up to
 * {@link HotTier#LISTING_REUSE} (ADR 0073); a read at the end catches up at once, so an append by another process is
 * readable at once, and an append acknowledged by this process ends the reuse. The writer here is not the tier's: its
 * appends are seen only by catching the index up, as another process's are, unless the test says they were made here.
 */
class HotTierEndReuseTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @TempDir
    Path tmp;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    PartitionWriter writer;
    HotTier hot;

    @BeforeEach
    void setUp() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        writer = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
        hot = new HotTier(data, Files.createDirectories(tmp.resolve("index")), clock);
    }

    @AfterEach
    void tearDown() throws Exception {
        writer.close();
        hot.close();
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

    /** The end a read from {@code offset} is bounded by, as the read path chooses it. */
    private long recent(long offset) {
        Position recent = hot.recentEnd(TP, offset);
        return (recent != null ? recent : hot.end(TP)).offset();
    }

    private void append(int count) {
        List<AppendRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new AppendRecord(null, new byte[64], List.of(), clock.millis()));
        }
        writer.append(records, ProducerIdentity.NONE, TopicConfig.DEFAULTS);
    }
}
