package io.tierlog.tiering;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.LogFixture;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
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

    @Test
    void coldCompactionDropsAbortedRecordsWhichNeverShadowTheCommittedValueAndKeepsTheMarkers() {
        TopicConfig compact = SMALL.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact"));
        topics.create(tp.topic(), 1, compact);
        long v1 = writer.append(keyedTxn(FILLER, 0, "k", "v1"), compact).baseOffset();
        long commit = writer.appendMarker(new TransactionMarker(FILLER, (short) 0, true, 1), compact).baseOffset();
        long first = writer.append(keyedTxn(ABORTING, 0, "k", "v2"), compact).baseOffset();
        writer.append(keyedTxn(ABORTING, 1, "j", "aborted-only"), compact);
        long abort = writer.appendMarker(new TransactionMarker(ABORTING, (short) 0, false, 1), compact).baseOffset();
        for (int i = 0; i < 12; i++) {
            writer.append(List.of(keyed("pad" + i, "p")), ProducerIdentity.NONE, compact);
        }
        storage.runTieringPass();
        assertThat(coldRecords()).as("tiered as written").extracting(ColdRecord::value).contains("v2", "aborted-only");

        assertThat(storage.runColdCompactionPass()).isEqualTo(1);

        List<ColdRecord> after = coldRecords();
        assertThat(after).as("no record of the aborted transaction is left").extracting(ColdRecord::value)
                .doesNotContain("v2", "aborted-only");
        assertThat(after).as("the committed value the aborted one would have shadowed")
                .anyMatch(r -> r.offset() == v1 && "v1".equals(r.value()));
        assertThat(after).as("markers stay").filteredOn(ColdRecord::control).extracting(ColdRecord::offset)
                .containsExactly(commit, abort);
        AbortedTransaction aborted = new AbortedTransaction(ABORTING, first, abort);
        Manifest m = storage.manifests().load(tp);
        for (ColdSegment s : m.segments()) {
            if (s.baseOffset() <= abort && s.lastOffset() >= first) {
                assertThat(SegmentSidecar.fromBytes(store.get(s.indexKey())).aborted())
                        .as("a sidecar still lists the aborted transaction its marker ends").contains(aborted);
            }
        }
        assertThat(storage.reader().abortedTransactions(tp, 0, m.coldEnd())).containsExactly(aborted);
    }

    /**
     * A segment tiered before sidecars listed aborted transactions (version 1) says nothing of its transactions'
     * outcomes: cold compaction fails on its first transactional batch rather than take an aborted record for a
     * committed one, and commits nothing.
     */
    @Test
    void coldCompactionRefusesTransactionalBatchesWhoseOutcomeNoSidecarTells() {
        TopicConfig compact = SMALL.with(Map.of(TopicConfig.CLEANUP_POLICY, "compact"));
        topics.create(tp.topic(), 1, compact);
        writer.append(keyedTxn(FILLER, 0, "k", "v1"), compact);
        writer.appendMarker(new TransactionMarker(FILLER, (short) 0, true, 1), compact);
        writer.append(keyedTxn(ABORTING, 0, "k", "v2"), compact);
        writer.appendMarker(new TransactionMarker(ABORTING, (short) 0, false, 1), compact);
        for (int i = 0; i < 12; i++) {
            writer.append(List.of(keyed("pad" + i, "p")), ProducerIdentity.NONE, compact);
        }
        storage.runTieringPass();
        Manifest before = storage.manifests().load(tp);
        for (ColdSegment s : before.segments()) {
            SegmentSidecar sidecar = SegmentSidecar.fromBytes(store.get(s.indexKey()));
            store.put(s.indexKey(), SegmentSidecarTest.versionOne(sidecar.entries()));
        }
        long failures = storage.coldCompactionStats().failures();

        assertThat(storage.runColdCompactionPass()).isZero();

        assertThat(storage.coldCompactionStats().failures()).isEqualTo(failures + 1);
        assertThat(storage.coldCompactionStats().lastFailure()).contains("aborted transactions are unknown");
        assertThat(storage.manifests().load(tp).segments()).isEqualTo(before.segments());
        assertThat(coldRecords()).extracting(ColdRecord::value).contains("v1", "v2");
    }

    /** One record of a cold object, as kafka-clients reads it (a control record is a marker's). */
    private record ColdRecord(long offset, boolean control, String value) {
    }

    private List<ColdRecord> coldRecords() {
        List<ColdRecord> out = new java.util.ArrayList<>();
        for (ColdSegment s : storage.manifests().load(tp).segments()) {
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(store.get(s.segmentKey())));
            for (RecordBatch b : records.batches()) {
                assertThat(b.isValid()).isTrue();
                for (Record r : b) {
                    String value = null;
                    if (r.hasValue() && !b.isControlBatch()) {
                        byte[] bytes = new byte[r.valueSize()];
                        r.value().get(bytes);
                        value = new String(bytes, StandardCharsets.UTF_8);
                    }
                    out.add(new ColdRecord(r.offset(), b.isControlBatch(), value));
                }
            }
        }
        return out;
    }

    /** A transactional batch of one keyed record, as kafka-clients' producer builds it. */
    private ClientBatch keyedTxn(long producerId, int sequence, String key, String value) {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) 0, sequence, true, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        builder.append(clock.millis(), key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
        return ClientBatchValidator.validate(builder.build().buffer(), Integer.MAX_VALUE, clock.millis());
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
