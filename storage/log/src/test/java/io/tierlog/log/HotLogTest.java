package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The hot log's lifecycle operations: eviction below an offset, seeding a restored partition, deletion, sealed walks. */
class HotLogTest {
    private static final TopicPartition TP = new TopicPartition("facade", 0);
    private static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void evictBelowRemovesOnlySealedSegmentsWhollyBelowTheOffset() throws IOException {
        HotLog log = new HotLog(data);
        appendBatches(log, 12);
        List<Long> bases = log.segmentBases(TP);
        assertThat(bases).hasSizeGreaterThan(3);
        long third = bases.get(2);

        // An offset inside segment 1 (not a base) evicts segment 0 only: segment 1 holds offsets at or above it.
        assertThat(log.evictBelow(TP, bases.get(1) + 1)).extracting(HotSegment::baseOffset).containsExactly(bases.get(0));
        assertThat(log.evictBelow(TP, third)).extracting(HotSegment::baseOffset).containsExactly(bases.get(1));
        assertThat(log.segmentBytes(TP, bases.get(0))).isEqualTo(-1);
        assertThat(log.oldestSegmentBase(TP)).isEqualTo(third);

        // The newest segment is never evicted, whatever the offset.
        log.evictBelow(TP, Long.MAX_VALUE);
        assertThat(log.segmentBases(TP)).containsExactly(bases.get(bases.size() - 1));
        List<LogRecord> rest = log.reader(TP).read(bases.get(bases.size() - 1), null, 100, 1 << 20).records();
        assertThat(rest).isNotEmpty();
        assertThat(log.segments(TP)).singleElement().satisfies(s -> assertThat(s.bytes()).isPositive());
    }

    @Test
    void seedRestoredStartsAnEmptyPartitionAtTheOffsetAndNeverTouchesOneWithSegments() throws IOException {
        HotLog log = new HotLog(data);
        assertThat(log.seedRestored(TP, 500)).isTrue();
        assertThat(log.seedRestored(TP, 700)).as("already seeded").isFalse();
        assertThat(log.segmentBases(TP)).containsExactly(500L);
        try (PartitionWriter w = log.writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            assertThat(w.append(records(2), ProducerIdentity.NONE, SMALL_SEGMENTS).baseOffset()).isEqualTo(500);
        }

        TopicPartition other = new TopicPartition("facade", 1);
        try (PartitionWriter w = log.writer(other, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            w.append(records(2), ProducerIdentity.NONE, SMALL_SEGMENTS);
        }
        assertThat(log.seedRestored(other, 900)).isFalse();
        assertThat(log.segmentBases(other)).containsExactly(0L);
    }

    @Test
    void deletePartitionRemovesItsDirectoryAndIsIdempotent() throws IOException {
        HotLog log = new HotLog(data);
        appendBatches(log, 3);
        assertThat(log.hasPartition(TP)).isTrue();

        assertThat(log.deletePartition(TP)).isTrue();
        assertThat(log.hasPartition(TP)).isFalse();
        assertThat(log.segmentBases(TP)).isEmpty();
        assertThat(data.resolve(TP.dirName())).doesNotExist();
        assertThat(log.deletePartition(TP)).isFalse();
    }

    @Test
    void walkSealedVisitsEveryBatchAndRefusesBytesAfterTheLast() throws IOException {
        HotLog log = new HotLog(data);
        appendBatches(log, 6);
        long sealed = log.segmentBases(TP).get(0);
        List<BatchInfo> seen = new ArrayList<>();
        long length = log.reader(TP).walkSealed(sealed, (info, batch) -> seen.add(info));
        assertThat(length).isEqualTo(log.segmentBytes(TP, sealed));
        assertThat(seen).isNotEmpty();
        assertThat(seen.get(0).baseOffset()).isEqualTo(sealed);

        // A sealed segment has a successor, so a partial batch at its end is corruption, not an append in progress.
        Files.write(log.sealedSegmentFile(TP, sealed), new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100},
                StandardOpenOption.APPEND);
        assertThatThrownBy(() -> log.reader(TP).walkSealed(sealed, (info, batch) -> true))
                .isInstanceOf(CorruptLogException.class).hasMessageContaining("partial batch");
    }

    private void appendBatches(HotLog log, int batches) throws IOException {
        try (PartitionWriter w = log.writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < batches; i++) {
                w.append(records(3), ProducerIdentity.NONE, SMALL_SEGMENTS);
            }
        }
    }

    private List<AppendRecord> records(int n) {
        List<AppendRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new AppendRecord(null, "v".repeat(100).getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
        }
        return out;
    }
}
