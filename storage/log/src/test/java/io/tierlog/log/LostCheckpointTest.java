package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under {@code fsync=never} (and {@code interval}) a writer publishes its producer checkpoints without forcing them,
 * so a machine loss may leave the newest ones empty or cut short. That may only cost recovery time: a new writer skips
 * a checkpoint that does not parse, starts from an older one, and still knows every producer's last batches.
 */
class LostCheckpointTest {
    private static final TopicPartition TP = new TopicPartition("lost-checkpoint", 0);
    /** Every append of a 600-byte record rolls the segment, and every roll writes a checkpoint. */
    private static final TopicConfig ROLL_EACH_APPEND = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
    private static final long PRODUCER = 7;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void aWriterRecoversProducerStateWhenTheNewestCheckpointsAreEmptyOrCutShort() throws IOException {
        AppendResult last;
        try (PartitionWriter w = writer()) {
            for (int sequence = 0; sequence < 5; sequence++) {
                w.append(record(), producer(sequence), ROLL_EACH_APPEND);
            }
            last = w.append(record(), producer(5), ROLL_EACH_APPEND);
        }
        Path dir = data.resolve(TP.dirName());
        List<Long> checkpoints = SegmentFiles.snapshotOffsets(dir);
        assertThat(checkpoints).hasSizeGreaterThanOrEqualTo(3);
        // What a machine loss can leave of files that were renamed into place but never forced.
        Path newest = dir.resolve(SegmentFiles.snapshotName(checkpoints.get(checkpoints.size() - 1)));
        Path previous = dir.resolve(SegmentFiles.snapshotName(checkpoints.get(checkpoints.size() - 2)));
        Files.write(newest, new byte[0]);
        byte[] whole = Files.readAllBytes(previous);
        Files.write(previous, Arrays.copyOf(whole, whole.length / 2));

        try (PartitionWriter restarted = writer()) {
            AppendResult retry = restarted.append(record(), producer(5), ROLL_EACH_APPEND);
            assertThat(retry).isEqualTo(new AppendResult(last.baseOffset(), last.lastOffset(), true));
            AppendResult next = restarted.append(record(), producer(6), ROLL_EACH_APPEND);
            assertThat(next.duplicate()).isFalse();
            assertThat(next.baseOffset()).isEqualTo(last.lastOffset() + 1);
        }
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock, SyncMeters.NONE,
                PartitionWriter.DEFAULT_PRODUCER_ID_EXPIRATION);
    }

    private List<AppendRecord> record() {
        return List.of(new AppendRecord(null, "v".repeat(600).getBytes(StandardCharsets.UTF_8), List.of(),
                clock.millis()));
    }

    private static ProducerIdentity producer(int sequence) {
        return new ProducerIdentity(PRODUCER, (short) 0, sequence);
    }
}
