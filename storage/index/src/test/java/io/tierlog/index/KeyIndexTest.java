package io.tierlog.index;

import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.HotCleaner;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The index's key entries: a key's latest offset, tombstones, a rebuild from the segments, and compaction. */
class KeyIndexTest {
    static final TopicConfig COMPACT = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.CLEANUP_POLICY, "compact"));
    static final TopicPartition TP = new TopicPartition("table", 0);

    @TempDir
    Path tmp;

    @Test
    void latestOffsetOfEveryKeyMatchesTheLogThroughTombstonesRebuildsAndCompaction() throws IOException {
        Path data = tmp.resolve("data");
        java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.ofEpochMilli(1_800_000_000_000L),
                java.time.ZoneOffset.UTC);
        Map<String, Long> expected = new HashMap<>();
        Random random = new Random(11);
        try (PartitionWriter w = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < 3000; i++) {
                List<AppendRecord> batch = new ArrayList<>();
                List<String> keys = new ArrayList<>();
                for (int r = 0; r < 1 + random.nextInt(3); r++) {
                    String key = "key-" + random.nextInt(300);
                    boolean tombstone = random.nextInt(8) == 0;
                    keys.add(tombstone ? "-" + key : key);
                    batch.add(new AppendRecord(key.getBytes(StandardCharsets.UTF_8),
                            tombstone ? null : ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
                }
                long base = w.append(batch, ProducerIdentity.NONE, COMPACT).baseOffset();
                for (int r = 0; r < keys.size(); r++) {
                    String k = keys.get(r);
                    if (k.startsWith("-")) {
                        expected.remove(k.substring(1));
                    } else {
                        expected.put(k, base + r);
                    }
                }
                if (i % 700 == 0) {
                    // Index part-way, so that entries are overwritten and deleted across catch-ups too.
                    try (LogIndex index = LogIndex.open(tmp.resolve("index"))) {
                        new HotIndexer(index, data).catchUp(TP);
                    }
                }
            }
        }
        check(data, expected);

        // Deleted, the index is rebuilt from the segments with the same answers.
        deleteRecursively(tmp.resolve("index"));
        check(data, expected);

        // After compaction (the index rebuilt from compacted segments too), every latest offset is still readable.
        new HotCleaner(data, clock).clean(TP, COMPACT, Long.MAX_VALUE);
        deleteRecursively(tmp.resolve("index"));
        check(data, expected);
        PartitionReader reader = new HotLog(data).reader(TP);
        expected.forEach((key, offset) -> {
            ReadResult r = reader.read(offset, null, 1, 1);
            assertThat(r.records().get(0).offset()).as(key).isEqualTo(offset);
            assertThat(new String(r.records().get(0).key(), StandardCharsets.UTF_8)).isEqualTo(key);
        });
    }

    /**
     * An indexer that lagged: its checkpoint lies in the middle of a segment that was sealed and compacted before the
     * next catch-up (ingest functions append without the service indexing). The checkpoint's byte position names no
     * batch of the rewritten file, or another batch; the indexer must neither stop there nor skip batches.
     */
    @Test
    void aCheckpointInsideASegmentCompactedSinceIsNotResumedAtItsStaleBytePosition() throws IOException {
        Path data = tmp.resolve("data");
        java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.ofEpochMilli(1_800_000_000_000L),
                java.time.ZoneOffset.UTC);
        Map<String, Long> expected = new HashMap<>();
        try (PartitionWriter w = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
             LogIndex index = LogIndex.open(tmp.resolve("index"))) {
            HotIndexer indexer = new HotIndexer(index, data);
            PartitionReader probe = new HotLog(data).reader(TP);
            boolean indexed = false;
            for (int i = 0; i < 400; i++) {
                String key = "key-" + (i % 7);
                long offset = w.append(List.of(new AppendRecord(key.getBytes(StandardCharsets.UTF_8),
                        ("value-" + i + "-" + "x".repeat(40)).getBytes(StandardCharsets.UTF_8), List.of(),
                        clock.millis())), ProducerIdentity.NONE, COMPACT).baseOffset();
                expected.put(key, offset);
                List<Long> now = probe.segmentBases();
                long activeBytes = probe.segmentBytes(now.get(now.size() - 1));
                if (!indexed && i > 100 && activeBytes > 0 && activeBytes < 500) {
                    // A few batches into a segment: after compaction the rewritten file (one 61-byte empty batch
                    // per batch at least) is longer than this position, which then falls inside some batch.
                    indexer.catchUp(TP);
                    indexed = true;
                }
            }
            assertThat(indexed).isTrue();
            PartitionReader reader = new HotLog(data).reader(TP);
            io.tierlog.log.Position checkpoint = index.indexedEnd(TP).orElseThrow();
            List<Long> bases = reader.segmentBases();
            assertThat(checkpoint.position()).as("mid-segment").isPositive()
                    .isLessThan(reader.segmentBytes(checkpoint.segmentBase()));
            assertThat(bases.get(bases.size() - 1)).as("its segment is sealed since")
                    .isGreaterThan(checkpoint.segmentBase());

            long sizeBefore = reader.segmentBytes(checkpoint.segmentBase());
            assertThat(new HotCleaner(data, clock).clean(TP, COMPACT, Long.MAX_VALUE).ran()).isTrue();
            assertThat(reader.segmentBytes(checkpoint.segmentBase())).as("the checkpoint's segment was rewritten")
                    .isLessThan(sizeBefore);

            io.tierlog.log.Position end = indexer.catchUp(TP);
            assertThat(end.offset()).isEqualTo(400);
            for (int k = 0; k < 7; k++) {
                String key = "key-" + k;
                assertThat(index.latestOffset(TP, key.getBytes(StandardCharsets.UTF_8))).as(key)
                        .hasValue(expected.get(key));
            }
            // Hints from the index name batch boundaries of the files as they are now.
            for (long offset : expected.values()) {
                io.tierlog.log.Position hint = indexer.hint(TP, offset).orElseThrow();
                assertThat(reader.read(offset, hint, 1, 1).records().get(0).offset()).isEqualTo(offset);
            }
        }
    }

    private void check(Path data, Map<String, Long> expected) {
        try (LogIndex index = LogIndex.open(tmp.resolve("index"))) {
            new HotIndexer(index, data).catchUp(TP);
            for (int k = 0; k < 300; k++) {
                String key = "key-" + k;
                OptionalLong found = index.latestOffset(TP, key.getBytes(StandardCharsets.UTF_8));
                if (expected.containsKey(key)) {
                    assertThat(found).as(key).hasValue(expected.get(key));
                } else {
                    assertThat(found).as(key + " (never written, or its latest is a tombstone)").isEmpty();
                }
            }
            assertThat(index.latestOffset(new TopicPartition("table", 1), "key-1".getBytes(StandardCharsets.UTF_8)))
                    .isEmpty();
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
