package io.tierlog.tiering;

import io.tierlog.log.LogFixture;
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
    LogFixture hot;
    final TopicPartition tp = new TopicPartition("table", 0);

    @BeforeEach
    void setUp() {
        clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        dataDir = tmp.resolve("hot");
        store = new FilesystemObjectStore(tmp.resolve("cold"));
        topics = new TopicStore(dataDir, clock);
        storage = new TieredStorage(dataDir, tmp.resolve("cache"), store, TieringConfig.DEFAULTS, clock, new Random(1),
                SegmentEvictionListener.NONE);
        hot = new LogFixture(dataDir, tp, clock);
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

    @Test
    void aCompactionPassCleansOnlyTieredHotSegmentsAndReadsKeepOriginalOffsets() {
        topics.create("table", 1, SMALL.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact")));
        hot.append(60, 5, SMALL); // keys k0..k4, 60 versions each
        storage.runTieringPass();
        long coldEnd = storage.manifests().load(tp).coldEnd();
        assertThat(coldEnd).isPositive();
        hot.append(30, 5, SMALL); // sealed segments above the cold end: not tiered yet, so not cleaned
        java.util.List<io.tierlog.log.format.LogRecord> before = hot.readHot(0);

        assertThat(storage.runCompactionPass()).as("hot and cold").isEqualTo(2);

        java.util.List<io.tierlog.log.format.LogRecord> after = hot.readHot(0);
        assertThat(after.stream().filter(r -> r.offset() < coldEnd).count()).as("one record per key below the cold end")
                .isEqualTo(5);
        assertThat(after.stream().filter(r -> r.offset() >= coldEnd).count())
                .isEqualTo(before.stream().filter(r -> r.offset() >= coldEnd).count());
        // Survivors keep their offsets and values; the latest value of each key is unchanged.
        java.util.Map<Long, String> original = new java.util.HashMap<>();
        before.forEach(r -> original.put(r.offset(), new String(r.value())));
        after.forEach(r -> assertThat(new String(r.value())).isEqualTo(original.get(r.offset())));
        assertThat(storage.compactionStats().bytesCleaned()).isPositive();
        assertThat(storage.compactionStats().bytesRemoved()).isPositive();
        assertThat(storage.compactionStats().passes()).isEqualTo(1);
        // The tierer goes on uploading the segments above the cold end, unaffected.
        storage.runTieringPass();
        assertThat(storage.manifests().load(tp).coldEnd()).isGreaterThan(coldEnd);
    }
}
