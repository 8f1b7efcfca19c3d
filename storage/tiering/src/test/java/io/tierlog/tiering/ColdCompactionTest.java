package io.tierlog.tiering;

import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.testkit.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Cold-tier compaction over a real S3 bucket (S3Proxy): the swap, the grace, readers in flight, racing tierers. */
class ColdCompactionTest {
    static final TopicConfig COMPACT = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.CLEANUP_POLICY, "compact"));

    static S3ProxyServer server;

    @TempDir
    java.nio.file.Path tmp;
    ColdCompactionHarness h;

    @BeforeAll
    static void startServer() {
        server = S3ProxyServer.started();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void setUp() {
        h = new ColdCompactionHarness(server, tmp, COMPACT);
    }

    @AfterEach
    void tearDown() {
        h.close();
    }

    @Test
    void aColdPassKeepsTheLatestRecordPerKeyWithOriginalOffsetsAndEveryBatchHeader() {
        h.appendVersions(60, 5); // keys k0..k4, 60 versions each, ~20 segments
        h.storage.runTieringPass();
        Manifest before = h.manifest();
        List<String> headersBefore = h.coldBatchHeaders();
        List<LogRecord> recordsBefore = h.readCold();
        assertThat(before.segments()).hasSizeGreaterThan(5);

        assertThat(h.storage.runColdCompactionPass()).isEqualTo(1);

        Manifest after = h.manifest();
        assertThat(after.coldStart()).isEqualTo(before.coldStart());
        assertThat(after.coldEnd()).isEqualTo(before.coldEnd());
        assertThat(after.segments().size()).as("small compacted segments are merged").isLessThan(
                before.segments().size());
        assertThat(after.cleaner().cleanedEnd()).isEqualTo(before.coldEnd());
        assertThat(after.retired()).hasSize(2 * before.segments().size());
        assertThat(Manifest.fromJson(after.toJson())).as("cleaner and retired survive JSON").isEqualTo(after);
        assertThat(h.coldBatchHeaders()).as("every batch header (offsets, producer state) is kept")
                .isEqualTo(headersBefore);
        List<LogRecord> cold = h.readCold();
        assertThat(cold).hasSize(5);
        for (LogRecord r : cold) {
            LogRecord latest = recordsBefore.stream().filter(o -> new String(o.key()).equals(new String(r.key())))
                    .reduce((a, b) -> b).orElseThrow();
            assertThat(r.offset()).isEqualTo(latest.offset());
            assertThat(r.timestamp()).isEqualTo(latest.timestamp());
            assertThat(r.value()).isEqualTo(latest.value());
        }
        // A second pass finds nothing dirty and changes nothing.
        assertThat(h.storage.runColdCompactionPass()).isZero();
        assertThat(h.manifest().version()).isEqualTo(after.version());
    }

    @Test
    void aCleanPartitionCostsNoStoreRequestPerPass() {
        h.appendVersions(30, 5);
        h.storage.runTieringPass();
        assertThat(h.storage.runColdCompactionPass()).isEqualTo(1);
        long requests = h.requestCount();
        for (int pass = 0; pass < 5; pass++) {
            assertThat(h.storage.runColdCompactionPass()).isZero();
        }
        assertThat(h.requestCount()).as("S3 requests of 5 passes over a clean partition").isEqualTo(requests);
        // Once the retired objects' grace has passed, the next pass does go to the store, and deletes them.
        h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
        h.storage.runColdCompactionPass();
        assertThat(h.requestCount()).isGreaterThan(requests);
        assertThat(h.manifest().retired()).isEmpty();
    }

    @Test
    void replacedObjectsStayForTheGraceSoAReaderOnTheOldManifestFinishesThenTheyAreDeleted() {
        h.appendVersions(60, 5);
        h.storage.runTieringPass();
        List<LogRecord> recordsBefore = h.readCold();
        Manifest before = h.manifest();
        // Another node loaded the old manifest and keeps serving it from its cache while the cleaner swaps.
        TieredStorage otherNode = h.openStorage();
        try {
            otherNode.manifests().load(h.tp);
            List<LogRecord> firstPage = new ArrayList<>(otherNode.reader().read(h.tp, before.coldStart(), 3, 1 << 20)
                    .records());

            h.storage.runColdCompactionPass();
            assertThat(h.storage.runOrphanCollection()).as("retired objects are not orphans").isZero();
            for (ColdSegment s : before.segments()) {
                assertThat(h.store.head(s.segmentKey())).as("replaced object kept for the grace").isPresent();
            }
            // The reader in flight goes on from where it was on its old manifest and sees the whole old log.
            long next = firstPage.get(firstPage.size() - 1).offset() + 1;
            while (next < before.coldEnd()) {
                var r = otherNode.reader().read(h.tp, next, 500, 1 << 20);
                firstPage.addAll(r.records());
                next = r.nextOffset();
            }
            assertThat(firstPage).extracting(LogRecord::offset)
                    .containsExactlyElementsOf(recordsBefore.stream().map(LogRecord::offset).toList());
        } finally {
            otherNode.close();
        }

        h.clock.advance(ColdCompactionHarness.GRACE.plusMinutes(1));
        h.storage.runColdCompactionPass();
        Manifest now = h.manifest();
        assertThat(now.retired()).isEmpty();
        Set<ObjectKey> referenced = new HashSet<>();
        now.segments().forEach(s -> {
            referenced.add(s.segmentKey());
            referenced.add(s.indexKey());
        });
        assertThat(h.segmentObjects()).as("only the compacted objects are left").containsExactlyInAnyOrderElementsOf(
                referenced);
        assertThat(h.readCold()).hasSize(5);
    }

    @Test
    void aTieringUploadRacingTheCleanerIsKeptTheCleanerRetriesOnTheNewManifest() {
        h.appendVersions(60, 5);
        h.storage.runTieringPass();
        long coldEndBefore = h.manifest().coldEnd();
        h.appendVersions(30, 5); // sealed segments not tiered yet
        TieredStorage tieringNode = h.openStorage();
        try {
            boolean[] raced = {false};
            ColdCompactor compactor = h.compactor((step, tp) -> {
                if (step == ColdCompactor.Step.COMMITTING && !raced[0]) {
                    raced[0] = true;
                    // Another node's tierer commits its segments between our load and our conditional create.
                    assertThat(tieringNode.runTieringPass().segmentsCommitted()).isPositive();
                }
            });
            assertThat(compactor.compact(h.tp, h.topicConfig).ran()).isTrue();
            assertThat(raced[0]).isTrue();
        } finally {
            tieringNode.close();
        }
        Manifest m = h.manifest();
        assertThat(m.coldEnd()).as("the racing tierer's segments are kept").isGreaterThan(coldEndBefore);
        assertThat(m.cleaner().cleanedEnd()).isEqualTo(coldEndBefore);
        List<LogRecord> cold = h.readCold();
        assertThat(cold.stream().filter(r -> r.offset() < coldEndBefore)).hasSize(5);
        assertThat(cold.stream().filter(r -> r.offset() >= coldEndBefore).count()).as("the new segments as tiered")
                .isEqualTo(h.readHot(coldEndBefore, Integer.MAX_VALUE).stream()
                        .filter(r -> r.offset() < m.coldEnd()).count());
        assertThat(cold).extracting(LogRecord::offset).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void tombstonesGoAfterDeleteRetentionAndTheCostIsCounted() {
        h.setConfig(Map.of(TopicConfig.DELETE_RETENTION_MS, 60_000L));
        h.appendVersions(40, 5);
        h.append(List.of(new String[]{"k1", null}, new String[]{"k2", null}));
        h.appendVersions(20, 1); // only k0 again, and enough to seal the tombstones' segment
        h.storage.runTieringPass();
        long bytesIn = h.manifest().totalBytes();
        long requestsBefore = h.requestCount();
        h.storage.runColdCompactionPass();
        long requests = h.requestCount() - requestsBefore;
        List<String> keys = h.readCold().stream().map(r -> new String(r.key(), StandardCharsets.UTF_8)).toList();
        assertThat(keys).as("tombstones kept until their horizon").containsExactlyInAnyOrder("k0", "k1", "k2", "k3",
                "k4");
        System.out.printf("cold compaction: %d bytes in, %d S3 requests (%s), %.0f requests per GiB%n", bytesIn,
                requests, h.requests, requests * (double) (1L << 30) / bytesIn);

        h.clock.advance(Duration.ofMinutes(2));
        assertThat(h.storage.runColdCompactionPass()).as("a due horizon runs a pass with nothing dirty (failures: %s)",
                h.storage.coldCompactionStats().lastFailure()).isEqualTo(1);
        assertThat(h.readCold().stream().map(r -> new String(r.key(), StandardCharsets.UTF_8)))
                .containsExactlyInAnyOrder("k0", "k3", "k4");
        assertThat(h.manifest().cleaner().nextHorizonMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aTopicThatDoesNotCompactIsLeftAlone() {
        h.setConfig(Map.of(TopicConfig.CLEANUP_POLICY, "delete"));
        h.appendVersions(60, 5);
        h.storage.runTieringPass();
        Manifest before = h.manifest();
        assertThat(h.storage.runColdCompactionPass()).isZero();
        assertThat(h.manifest()).isEqualTo(before);
    }

    @Test
    void aFlippedByteInAColdSegmentFailsThePassCountedAndChangesNothing() {
        h.appendVersions(60, 5);
        h.storage.runTieringPass();
        Manifest before = h.manifest();
        ColdSegment victim = before.segments().get(1);
        byte[] bytes = h.store.get(victim.segmentKey());
        bytes[bytes.length / 2] ^= 0x01;
        h.store.put(victim.segmentKey(), bytes);

        assertThat(h.storage.runColdCompactionPass()).isZero();
        assertThat(h.storage.coldCompactionStats().failures()).isEqualTo(1);
        assertThat(h.storage.coldCompactionStats().lastFailure()).contains("CRC32C");
        assertThat(h.manifest()).as("nothing committed").isEqualTo(before);
    }
}
