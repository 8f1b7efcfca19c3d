package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** When the active segment rolls ({@code segment.bytes}, {@code segment.ms}), and appends under each fsync policy. */
class SegmentRollTest {
    private static final TopicPartition TP = new TopicPartition("rolls", 0);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void rollsBeforeABatchThatWouldPassSegmentBytes() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        List<AppendResult> results = new ArrayList<>();
        try (PartitionWriter w = writer(FsyncPolicy.NEVER)) {
            for (int i = 0; i < 10; i++) {
                results.add(w.append(records(2, 100), ProducerIdentity.NONE, config));
            }
            // A batch larger than segment.bytes still goes in, alone in a fresh segment.
            results.add(w.append(records(1, 3000), ProducerIdentity.NONE, config));
            results.add(w.append(records(1, 10), ProducerIdentity.NONE, config));
        }
        PartitionReader reader = new PartitionReader(data, TP);
        List<Long> bases = reader.segmentBases();
        assertThat(bases).hasSizeGreaterThan(3);
        assertThat(bases.get(0)).isZero();
        for (int i = 0; i < bases.size(); i++) {
            long size = Files.size(SegmentFiles.log(reader.directory(), bases.get(i)));
            boolean holdsTheBigBatch = bases.get(i) == results.get(10).baseOffset();
            if (!holdsTheBigBatch) {
                assertThat(size).as("segment %d", bases.get(i)).isLessThanOrEqualTo(1024).isPositive();
            }
        }
        // Each segment is named by the offset of its first batch, and the big batch starts its own segment.
        assertThat(bases).contains(results.get(10).baseOffset(), results.get(11).baseOffset());
        assertThat(bases).allSatisfy(b -> assertThat(results).anyMatch(r -> r.baseOffset() == b));
        assertThat(reader.read(0, null, 100, 1 << 20).records()).hasSize(22);
    }

    @Test
    void rollsWhenTheSegmentIsSegmentMsOld() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_MS, 60_000));
        PartitionReader reader = new PartitionReader(data, TP);
        try (PartitionWriter w = writer(FsyncPolicy.NEVER)) {
            w.append(records(1, 10), ProducerIdentity.NONE, config);
            clock.advance(Duration.ofMillis(59_999));
            w.append(records(1, 10), ProducerIdentity.NONE, config);
            assertThat(reader.segmentBases()).containsExactly(0L);
            clock.advance(Duration.ofMillis(1));
            AppendResult r = w.append(records(1, 10), ProducerIdentity.NONE, config);
            assertThat(reader.segmentBases()).containsExactly(0L, 2L);
            assertThat(r.baseOffset()).isEqualTo(2);
            // The new segment's clock starts at its creation.
            clock.advance(Duration.ofMillis(30_000));
            w.append(records(1, 10), ProducerIdentity.NONE, config);
            assertThat(reader.segmentBases()).containsExactly(0L, 2L);
        }
        // A new writer (a restarted process) keeps the segment's age from the checkpoint rather than restarting it.
        clock.advance(Duration.ofMillis(30_000));
        try (PartitionWriter w = writer(FsyncPolicy.NEVER)) {
            w.append(records(1, 10), ProducerIdentity.NONE, config);
        }
        assertThat(reader.segmentBases()).containsExactly(0L, 2L, 4L);
    }

    @Test
    void emptyActiveSegmentNeverRolls() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_MS, 1));
        try (PartitionWriter w = writer(FsyncPolicy.NEVER)) {
            clock.advance(Duration.ofHours(5));
            w.append(records(1, 10), ProducerIdentity.NONE, config);
        }
        assertThat(new PartitionReader(data, TP).segmentBases()).containsExactly(0L);
    }

    @ParameterizedTest
    @EnumSource(FsyncPolicy.class)
    void everyFsyncPolicyAppendsReadableRecords(FsyncPolicy policy) throws IOException {
        try (PartitionWriter w = new PartitionWriter(data, TP, policy, Duration.ofMillis(10), clock)) {
            for (int i = 0; i < 5; i++) {
                w.append(records(2, 50), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
                clock.advance(Duration.ofMillis(7));
            }
        }
        assertThat(new PartitionReader(data, TP).read(0, null, 100, 1 << 20).records()).hasSize(10);
    }

    @Test
    void fsyncPolicyParsesTheConfigValues() {
        assertThat(FsyncPolicy.parse("always")).isEqualTo(FsyncPolicy.ALWAYS);
        assertThat(FsyncPolicy.parse(" Interval ")).isEqualTo(FsyncPolicy.INTERVAL);
        assertThat(FsyncPolicy.parse("NEVER")).isEqualTo(FsyncPolicy.NEVER);
        assertThatThrownBy(() -> FsyncPolicy.parse("sometimes")).hasMessageContaining("tierlog.fsync");
        assertThatThrownBy(() -> FsyncPolicy.parse(null)).hasMessageContaining("tierlog.fsync");
    }

    private PartitionWriter writer(FsyncPolicy policy) {
        return new PartitionWriter(data, TP, policy, Duration.ofSeconds(1), clock);
    }

    private List<AppendRecord> records(int n, int valueBytes) {
        List<AppendRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new AppendRecord(null, "v".repeat(valueBytes).getBytes(StandardCharsets.UTF_8), List.of(),
                    clock.millis()));
        }
        return out;
    }
}
