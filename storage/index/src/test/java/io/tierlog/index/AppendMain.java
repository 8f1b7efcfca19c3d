package io.tierlog.index;

import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A separate writer process for {@link CrossProcessIndexingTest}: appends {@code batches} batches of two records
 * ({@code child-<i>-<r>}, timestamp {@code 3_000_000_000_000 + i}) to a partition, then exits 0.
 *
 * <p>Usage: {@code AppendMain <dataDir> <topic> <partition> <batches> <segmentBytes>}
 */
public final class AppendMain {
    private AppendMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        int batches = Integer.parseInt(args[3]);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, Long.parseLong(args[4])));
        try (PartitionWriter writer = new HotLog(dataDir).writer(tp, FsyncPolicy.NEVER, Duration.ZERO,
                Clock.systemUTC())) {
            for (int i = 0; i < batches; i++) {
                byte[] filler = new byte[100 + (i * 37) % 700];
                writer.append(List.of(
                        new AppendRecord(null, ("child-" + i + "-0").getBytes(StandardCharsets.UTF_8), List.of(), 3_000_000_000_000L + i),
                        new AppendRecord(null, filler, List.of(), 3_000_000_000_000L + i)), ProducerIdentity.NONE, config);
            }
        }
    }
}
