package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link PartitionWriter#activeProducers()}: what DescribeProducers answers, as every writer of the partition left it. */
class ActiveProducersTest {
    private static final TopicPartition TP = new TopicPartition("producers", 0);
    private static final Duration EXPIRATION = Duration.ofHours(1);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void producersAppendedThroughAnotherWriterAreCounted() throws Exception {
        try (PartitionWriter a = writer(); PartitionWriter b = writer()) {
            a.append(records(3), new ProducerIdentity(42, (short) 1, 0), TopicConfig.DEFAULTS);
            clock.advance(Duration.ofSeconds(5));
            a.append(records(2), new ProducerIdentity(42, (short) 1, 3), TopicConfig.DEFAULTS);
            long seen = clock.millis();
            b.append(records(1), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            a.append(records(4), new ProducerIdentity(7, (short) 0, 10), TopicConfig.DEFAULTS);

            // b applied only its own append so far; asking catches it up with a's, as its next append would.
            assertThat(b.activeProducers()).containsExactly(
                    new PartitionWriter.ActiveProducer(7, (short) 0, 13, clock.millis(), -1),
                    new PartitionWriter.ActiveProducer(42, (short) 1, 4, seen, -1));
        }
    }

    @Test
    void anExpiredProducerIsNoLongerActive() throws Exception {
        try (PartitionWriter w = writer()) {
            w.append(records(1), new ProducerIdentity(1, (short) 0, 0), TopicConfig.DEFAULTS);
            clock.advance(EXPIRATION.minusMinutes(10));
            w.append(records(1), new ProducerIdentity(2, (short) 3, 0), TopicConfig.DEFAULTS);
            clock.advance(Duration.ofMinutes(11));

            assertThat(w.activeProducers()).extracting(PartitionWriter.ActiveProducer::producerId).containsExactly(2L);
        }
    }

    @Test
    void anEmptyPartitionHasNoneAndGetsNoSegment() throws Exception {
        try (PartitionWriter w = writer()) {
            assertThat(w.activeProducers()).isEmpty();
        }
        try (var files = Files.list(data.resolve(TP.dirName()))) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.endsWith(".log"));
        }
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock, SyncMeters.NONE,
                EXPIRATION);
    }

    private List<AppendRecord> records(int n) {
        List<AppendRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new AppendRecord(null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
        }
        return out;
    }
}
