package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Writers follow segments by name (a roll names the new segment after the old one's end offset). A segment file
 * that does not continue the chain is a gap in the offsets and must stop appends; an empty segment that does
 * continue it (as a node restored from the cold tier creates) is where appends resume.
 */
class SegmentChainTest {
    private static final TopicPartition TP = new TopicPartition("chain", 0);
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @TempDir
    Path data;

    @Test
    void aSegmentBeyondTheEndOfTheLogIsReportedAsCorruptionAndNothingIsAppended() throws Exception {
        try (PartitionWriter w = writer()) {
            assertThat(append(w, "a").lastOffset()).isZero();
        }
        Path dir = data.resolve(TP.dirName());
        Files.createFile(SegmentFiles.log(dir, 10));
        long before = Files.size(SegmentFiles.log(dir, 0));

        try (PartitionWriter w = writer()) {
            assertThatThrownBy(() -> append(w, "b")).isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("beyond the end of the log");
        }
        assertThat(Files.size(SegmentFiles.log(dir, 0))).isEqualTo(before);
        assertThat(Files.size(SegmentFiles.log(dir, 10))).isZero();
    }

    @Test
    void anEmptySegmentNamedForTheEndIsWhereAppendsResume() throws Exception {
        Path dir = data.resolve(TP.dirName());
        Files.createDirectories(dir);
        Files.createFile(SegmentFiles.log(dir, 500));

        try (PartitionWriter w = writer()) {
            assertThat(append(w, "first").baseOffset()).isEqualTo(500);
            assertThat(append(w, "second").baseOffset()).isEqualTo(501);
        }
        assertThat(new PartitionReader(data, TP).read(500, null, 10, 1 << 20).records()).hasSize(2);
    }

    @Test
    void aWriterFollowsARollMadeByAnotherWriter() throws Exception {
        TopicConfig small = TopicConfig.DEFAULTS.with(java.util.Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        try (PartitionWriter a = writer(); PartitionWriter b = writer()) {
            append(a, "a0");
            for (int i = 0; i < 20; i++) {
                b.append(List.of(record("b" + i, 200)), ProducerIdentity.NONE, small);
            }
            assertThat(SegmentFiles.segmentBases(data.resolve(TP.dirName()))).hasSizeGreaterThan(2);
            AppendResult next = append(a, "a1");
            assertThat(next.baseOffset()).isEqualTo(21);
        }
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
    }

    private AppendResult append(PartitionWriter w, String value) {
        return w.append(List.of(record(value, 0)), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
    }

    private AppendRecord record(String value, int padding) {
        return new AppendRecord(null, (value + "x".repeat(padding)).getBytes(StandardCharsets.UTF_8), List.of(),
                clock.millis());
    }
}
