package io.tierlog.tiering;

import io.tierlog.log.LogFixture;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The background passes over partitions that never sealed a hot segment (idle topics, most of
 * {@code __consumer_offsets}): they cost no object-store request, however many passes and refresh intervals go by,
 * because nothing of such a partition can be in the bucket (ADR 0033). Two {@link TieredStorage}s over one hot volume
 * and one (filesystem) bucket play two instances, so a partition tiered by the other one is seen as such.
 */
class IdlePassesTest {
    private static final TopicConfig DELETES = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16384,
            TopicConfig.RETENTION_MS, 3_600_000L));
    private static final TopicConfig COMPACTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 16384,
            TopicConfig.CLEANUP_POLICY, TopicConfig.POLICY_COMPACT));

    @TempDir
    Path tmp;
    private final ManualClock clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Path dataDir;
    private FilesystemObjectStore bucket;
    private FaultyStore counted;

    @BeforeEach
    void setUp() {
        dataDir = tmp.resolve("hot");
        bucket = new FilesystemObjectStore(tmp.resolve("bucket"));
        counted = new FaultyStore(bucket);
        TopicStore topics = new TopicStore(dataDir, clock);
        topics.create("events", 8, DELETES);
        topics.create("offsets", 6, COMPACTS);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        bucket.close();
    }

    @Test
    void passesAndReadsOverPartitionsThatNeverSealedASegmentCostNoStoreRequest() {
        // Some partitions hold records in their first segment, the others were never written.
        for (int p = 0; p < 3; p++) {
            fixture(new TopicPartition("events", p)).append(5, 3, DELETES);
            fixture(new TopicPartition("offsets", p)).append(5, 3, COMPACTS);
        }
        TieredStorage node = storage(counted);
        node.runTieringPass(); // publishes the topic descriptors: the one store work of an idle topic
        counted.resetCounts();

        io.tierlog.log.HotLog volume = new io.tierlog.log.HotLog(dataDir);
        for (int pass = 0; pass < 5; pass++) {
            node.runTieringPass();
            node.runRetentionPass();
            node.runCompactionPass();
            for (int p = 0; p < 8; p++) {
                // What a read (and a lag gauge) asks: the extent, from the hot listing it made anyway.
                TopicPartition tp = new TopicPartition("events", p);
                assertThat(node.tiers(tp, volume.segmentBases(tp)).coldSegments()).isZero();
            }
            clock.advance(Duration.ofMillis(ManifestStore.REFRESH_MS + 1)); // every cached manifest is stale now
        }

        assertThat(counted.count("list") + counted.count("get") + counted.count("head") + counted.count("put"))
                .as("store requests of 5 idle rounds of passes over 14 partitions").isZero();
    }

    @Test
    void aPartitionSealedAndTieredByAnotherInstanceIsLoadedNotTakenForNeverSealed() {
        TopicPartition tp = new TopicPartition("events", 0);
        LogFixture hot = fixture(tp);
        hot.append(2, 3, DELETES);
        TieredStorage node = storage(counted);
        node.runRetentionPass();
        assertThat(node.manifests().cachedUnlessNeverSealed(tp)).isEqualTo(Manifest.EMPTY);

        // The other instance on the volume sees the partition roll and tiers its sealed segments.
        hot.append(300, 3, DELETES);
        TieredStorage other = storage(bucket);
        assertThat(other.runTieringPass().segmentsCommitted()).isPositive();
        Manifest committed = other.manifests().load(tp);

        counted.resetCounts();
        assertThat(node.tiers(tp, new io.tierlog.log.HotLog(dataDir).segmentBases(tp)).coldSegments())
                .as("a read's extent shows the other instance's cold segments").isEqualTo(committed.segments().size());
        assertThat(node.manifests().cachedUnlessNeverSealed(tp).coldEnd()).isEqualTo(committed.coldEnd());
        assertThat(counted.count("list")).as("the sealed partition was looked up in the bucket").isPositive();
    }

    @Test
    void aManifestThisInstanceKnowsIsNeverHiddenByTheHotListing() {
        TopicPartition tp = new TopicPartition("events", 1);
        LogFixture hot = fixture(tp);
        hot.append(300, 3, DELETES);
        TieredStorage node = storage(counted);
        node.runTieringPass();
        Manifest known = node.manifests().load(tp);
        assertThat(known.isEmpty()).isFalse();

        assertThat(node.manifests().cachedUnlessNeverSealed(tp)).isEqualTo(known);
        assertThat(ManifestStore.neverSealed(List.of())).isTrue();
        assertThat(ManifestStore.neverSealed(List.of(0L))).isTrue();
        assertThat(ManifestStore.neverSealed(List.of(40L))).as("older segments were evicted after their commit")
                .isFalse();
        assertThat(ManifestStore.neverSealed(List.of(0L, 40L))).isFalse();
    }

    private TieredStorage storage(io.tierlog.objectstore.ObjectStore store) {
        TieredStorage ts = new TieredStorage(dataDir, tmp.resolve("cache-" + closeables.size()), store,
                TieringConfig.DEFAULTS, clock, new Random(closeables.size()), SegmentEvictionListener.NONE);
        closeables.add(ts);
        return ts;
    }

    private LogFixture fixture(TopicPartition tp) {
        LogFixture log = new LogFixture(dataDir, tp, clock);
        closeables.add(log);
        return log;
    }
}
