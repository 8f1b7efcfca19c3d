package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A partition forgets idempotent producers idle for {@code producerIdExpiration}: its checkpoints stop carrying them,
 * so the producer table does not grow with every producer id the partition has ever seen, while a producer seen within
 * the expiration is still deduplicated across a restart.
 */
class ProducerExpiryTest {
    private static final TopicPartition TP = new TopicPartition("expiry", 0);
    private static final Duration EXPIRATION = Duration.ofHours(1);
    /** Every append of a 600-byte record rolls the segment, and every roll writes a checkpoint. */
    private static final TopicConfig ROLL_EACH_APPEND = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
    private static final int IDLE_PRODUCERS = 200;
    private static final long LATE = 1_000_000;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void checkpointsDropProducersIdleForTheExpirationAndKeepTheOthers() throws IOException {
        try (PartitionWriter w = writer()) {
            for (long id = 0; id < IDLE_PRODUCERS; id++) {
                w.append(record(), producer(id, 0), ROLL_EACH_APPEND);
            }
            assertThat(newestCheckpoint().producers()).hasSize(IDLE_PRODUCERS - 1); // the last roll came before the last append

            clock.advance(EXPIRATION);
            w.append(record(), producer(LATE, 0), ROLL_EACH_APPEND);
            assertThat(newestCheckpoint().producers()).isEmpty();
            w.append(record(), producer(LATE, 1), ROLL_EACH_APPEND);
            assertThat(newestCheckpoint().producers()).containsOnlyKeys(LATE);
        }

        clock.advance(EXPIRATION.minusMillis(1));
        try (PartitionWriter restarted = writer()) {
            AppendResult retry = restarted.append(record(), producer(LATE, 1), ROLL_EACH_APPEND);
            assertThat(retry).isEqualTo(new AppendResult(IDLE_PRODUCERS + 1, IDLE_PRODUCERS + 1, true));

            // A forgotten producer's retry is a first request again: appended anew (documented semantics).
            AppendResult late = restarted.append(record(), producer(0, 0), ROLL_EACH_APPEND);
            assertThat(late.duplicate()).isFalse();
            assertThat(late.baseOffset()).isEqualTo(IDLE_PRODUCERS + 2);
        }
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock, SyncMeters.NONE,
                EXPIRATION);
    }

    private ProducerSnapshot newestCheckpoint() {
        Path dir = data.resolve(TP.dirName());
        List<Long> offsets = SegmentFiles.snapshotOffsets(dir);
        return ProducerSnapshot.read(dir, offsets.get(offsets.size() - 1)).orElseThrow();
    }

    private List<AppendRecord> record() {
        return List.of(new AppendRecord(null, "v".repeat(600).getBytes(StandardCharsets.UTF_8), List.of(),
                clock.millis()));
    }

    private static ProducerIdentity producer(long id, int sequence) {
        return new ProducerIdentity(id, (short) 0, sequence);
    }
}
