package io.tierlog.service.read;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A {@link HotTier} over a fresh data directory and a writer of {@link #TP} that is not the tier's (its appends are
 * seen by catching the index up, as another process's are), both on one manual clock.
 */
abstract class HotTierFixture {
    static final TopicPartition TP = new TopicPartition("events", 0);

    @TempDir
    Path tmp;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    Path data;
    HotLog log;
    PartitionWriter writer;
    HotTier hot;

    @BeforeEach
    void openTierAndWriter() throws Exception {
        data = Files.createDirectories(tmp.resolve("data"));
        log = new HotLog(data);
        writer = log.writer(TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
        hot = new HotTier(data, Files.createDirectories(tmp.resolve("index")), clock);
    }

    @AfterEach
    void closeTierAndWriter() throws Exception {
        writer.close();
        hot.close();
    }
}
