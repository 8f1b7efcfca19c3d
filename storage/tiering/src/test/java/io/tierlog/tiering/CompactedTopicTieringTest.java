package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Compacted topics on the cold tier, over the embedded filesystem store. */
class CompactedTopicTieringTest {
    static final TopicConfig SMALL = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.RETENTION_MS, 3_600_000L));

    @TempDir
    Path tmp;
    ManualClock clock;
    Path dataDir;
    ObjectStore store;
    TopicStore topics;
    TieredStorage storage;
    HotLog hot;
    final TopicPartition tp = new TopicPartition("table", 0);

    @BeforeEach
    void setUp() {
        clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        dataDir = tmp.resolve("hot");
        store = new FilesystemObjectStore(tmp.resolve("cold"));
        topics = new TopicStore(dataDir, clock);
        storage = new TieredStorage(dataDir, tmp.resolve("cache"), store, TieringConfig.DEFAULTS, clock, new Random(1),
                SegmentEvictionListener.NONE);
        hot = new HotLog(dataDir, tp, clock);
    }

    @AfterEach
    void tearDown() throws Exception {
        hot.close();
        storage.close();
        store.close();
    }

    @Test
    void retentionMsDeletesNothingOfACompactOnlyTopicButDoesOfCompactDelete() {
        topics.create("table", 1, SMALL.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact")));
        hot.append(60, 5, SMALL);
        storage.runTieringPass();
        Manifest tiered = storage.manifests().load(tp);
        assertThat(tiered.segments()).isNotEmpty();

        clock.advance(Duration.ofHours(3));
        storage.runRetentionPass();
        assertThat(storage.manifests().load(tp).logStartOffset()).as("compact: retention.ms removes nothing")
                .isZero();

        topics.updateConfig("table", Map.of(TopicConfig.CLEANUP_POLICY, "compact,delete"));
        storage.runRetentionPass();
        assertThat(storage.manifests().load(tp).logStartOffset()).as("compact,delete: retention.ms applies")
                .isGreaterThan(0);
    }
}
