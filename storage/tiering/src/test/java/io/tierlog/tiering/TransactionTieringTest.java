package io.tierlog.tiering;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.LogFixture;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions across the tiers: a segment is tiered only once every transaction touching it ended, its sidecar
 * carries its aborted transactions, cold reads answer them after the hot index was trimmed, and cold compaction
 * carries them into its outputs.
 */
class TransactionTieringTest {
    /** About three padded batches per segment; hot segments evicted as soon as they are cold. */
    private static final TopicConfig SMALL = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024,
            TopicConfig.LOCAL_RETENTION_BYTES, 0L, TopicConfig.RETENTION_MS, -1L));
    private static final String PAD = "x".repeat(300);
    private static final long ABORTING = 7;
    private static final long FILLER = 9;

    @TempDir
    Path tmp;
    ManualClock clock;
    Path dataDir;
    ObjectStore store;
    TopicStore topics;
    TieredStorage storage;
    PartitionWriter writer;
    final TopicPartition tp = new TopicPartition("txns", 0);

    @BeforeEach
    void setUp() {
        clock = new ManualClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        dataDir = tmp.resolve("hot");
        store = new FilesystemObjectStore(tmp.resolve("cold"));
        topics = new TopicStore(dataDir, clock);
        storage = new TieredStorage(dataDir, tmp.resolve("cache"), store, TieringConfig.DEFAULTS, clock, new Random(1),
                SegmentEvictionListener.NONE);
        writer = new HotLog(dataDir).writer(tp, FsyncPolicy.NEVER, Duration.ZERO, clock);
    }

    @AfterEach
    void tearDown() throws Exception {
        writer.close();
        storage.close();
        store.close();
    }

    @Test
    void anOpenTransactionHoldsBackItsSegmentsUntilItEndsThenTheSidecarListsItsAbort() throws IOException {
        topics.create(tp.topic(), 1, SMALL);
        writer.append(List.of(plain("before")), ProducerIdentity.NONE, SMALL);                 // 0
        long first = writer.append(LogFixture.transactionalBatch(ABORTING, 0, 0, PAD), SMALL).baseOffset(); // 1
        fill(8);
        assertThat(new HotLog(dataDir).segmentBases(tp)).hasSizeGreaterThan(3);

        storage.runTieringPass();
        assertThat(storage.manifests().load(tp).coldEnd()).as("the segment holding offset 1 waits, and all after it")
                .isLessThanOrEqualTo(first);

        long abort = writer.appendMarker(new TransactionMarker(ABORTING, (short) 0, false, 1), SMALL).baseOffset();
        fill(4);
        storage.runTieringPass();
        Manifest m = storage.manifests().load(tp);
        assertThat(m.coldEnd()).isGreaterThan(abort);

        AbortedTransaction aborted = new AbortedTransaction(ABORTING, first, abort);
        for (ColdSegment s : m.segments()) {
            SegmentSidecar sidecar = SegmentSidecar.fromBytes(store.get(s.indexKey()));
            boolean overlaps = s.lastOffset() >= first && s.baseOffset() <= abort;
            assertThat(sidecar.aborted()).as("segment %d..%d", s.baseOffset(), s.lastOffset())
                    .isEqualTo(overlaps ? List.of(aborted) : List.of());
        }
        assertThat(storage.reader().abortedTransactions(tp, 0, m.coldEnd())).containsExactly(aborted);
        assertThat(storage.reader().abortedTransactions(tp, abort + 1, m.coldEnd())).isEmpty();
    }

    @Test
    void afterEvictionTheHotIndexIsTrimmedAndColdReadsStillAnswerTheAbortedTransactions() throws IOException {
        topics.create(tp.topic(), 1, SMALL);
        long first = writer.append(LogFixture.transactionalBatch(ABORTING, 0, 0, PAD), SMALL).baseOffset();
        fill(3);
        long abort = writer.appendMarker(new TransactionMarker(ABORTING, (short) 0, false, 1), SMALL).baseOffset();
        fill(8);
        Path index = dataDir.resolve(tp.dirName()).resolve("txn.index");
        long indexBefore = Files.size(index);

        storage.runTieringPass();
        RetentionEnforcer.PassResult evicted = storage.runRetentionPass();

        assertThat(evicted.hotSegmentsEvicted()).isPositive();
        long oldestHot = new HotLog(dataDir).oldestSegmentBase(tp);
        assertThat(oldestHot).isGreaterThan(abort);
        assertThat(Files.size(index)).as("trimmed by the retention pass").isLessThan(indexBefore);
        assertThat(new HotLog(dataDir).transactions(tp).aborted(0, oldestHot)).as("no longer hot").isEmpty();
        assertThat(storage.reader().abortedTransactions(tp, first, abort + 1))
                .containsExactly(new AbortedTransaction(ABORTING, first, abort));
    }

    @Test
    void coldCompactionCarriesTheAbortedTransactionsOfItsInputsIntoItsOutputs() throws IOException {
        TopicConfig compact = SMALL.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact"));
        topics.create(tp.topic(), 1, compact);
        for (int i = 0; i < 6; i++) {
            writer.append(List.of(keyed("k", "v" + i)), ProducerIdentity.NONE, compact);
        }
        long first = writer.append(LogFixture.transactionalBatch(ABORTING, 0, 0, PAD), compact).baseOffset();
        long abort = writer.appendMarker(new TransactionMarker(ABORTING, (short) 0, false, 1), compact).baseOffset();
        for (int i = 0; i < 12; i++) {
            writer.append(List.of(keyed("k", "w" + i)), ProducerIdentity.NONE, compact);
        }
        storage.runTieringPass();
        Manifest before = storage.manifests().load(tp);

        assertThat(storage.runColdCompactionPass()).isEqualTo(1);

        Manifest after = storage.manifests().load(tp);
        assertThat(after.segments()).isNotEqualTo(before.segments());
        AbortedTransaction aborted = new AbortedTransaction(ABORTING, first, abort);
        ColdSegment holding = after.segmentFor(first).orElseThrow();
        assertThat(before.segments()).as("rewritten").doesNotContain(holding);
        assertThat(SegmentSidecar.fromBytes(store.get(holding.indexKey())).aborted()).containsExactly(aborted);
        assertThat(storage.reader().abortedTransactions(tp, 0, after.coldEnd())).containsExactly(aborted);
    }

    /** {@code n} committed transactions of another producer, padded to roll segments. */
    private void fill(int n) {
        for (int i = 0; i < n; i++) {
            writer.append(LogFixture.transactionalBatch(FILLER, 0, fillerSequence++, PAD), SMALL);
            writer.appendMarker(new TransactionMarker(FILLER, (short) 0, true, 1), SMALL);
        }
    }

    private int fillerSequence;

    private AppendRecord plain(String value) {
        return new AppendRecord(null, value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis());
    }

    private AppendRecord keyed(String key, String value) {
        return new AppendRecord(key.getBytes(StandardCharsets.UTF_8), (value + PAD).getBytes(StandardCharsets.UTF_8),
                List.of(), clock.millis());
    }
}
