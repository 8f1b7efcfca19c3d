package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.producer.ProducerStateTable;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/** A writer reports each fsync of segment data and, under {@code fsync=always}, each append's wait for one. */
class SyncMetersTest {
    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final ConcurrentLinkedQueue<Long> forces = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Long> waits = new ConcurrentLinkedQueue<>();
    private final SyncMeters meters = new SyncMeters(forces::add, waits::add);

    @Test
    void underFsyncAlwaysEveryAppendReportsItsWaitAndEveryForceItsDuration() throws Exception {
        try (PartitionWriter writer = writer(FsyncPolicy.ALWAYS)) {
            for (int i = 0; i < 5; i++) {
                append(writer, "r" + i, TopicConfig.DEFAULTS);
            }
            // One append at a time: each waits for a force of its own, begun after its write.
            assertThat(waits).hasSize(5).allSatisfy(nanos -> assertThat(nanos).isNotNegative());
            assertThat(forces).hasSize(5).allSatisfy(nanos -> assertThat(nanos).isNotNegative());
        }
        assertThat(forces).as("close forces the tail once more").hasSize(6);
    }

    @Test
    void withoutFsyncAlwaysAppendsWaitForNothingAndOnlyRollsAndCloseForce() throws Exception {
        TopicConfig smallSegments = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        try (PartitionWriter writer = writer(FsyncPolicy.NEVER)) {
            for (int i = 0; i < 3; i++) {
                append(writer, "x".repeat(800), smallSegments);
            }
            assertThat(forces).as("two rolls seal two segments").hasSize(2);
        }
        assertThat(waits).isEmpty();
        assertThat(forces).hasSize(3);
    }

    private PartitionWriter writer(FsyncPolicy policy) {
        return new PartitionWriter(data, new TopicPartition("meters", 0), policy, Duration.ofSeconds(1), clock, meters,
                ProducerStateTable.DEFAULT_EXPIRATION);
    }

    private void append(PartitionWriter writer, String value, TopicConfig config) {
        writer.append(List.of(new AppendRecord(null, value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis())),
                ProducerIdentity.NONE, config);
    }
}
