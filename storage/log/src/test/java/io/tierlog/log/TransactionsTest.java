package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Kafka transactions (KIP-98) on one partition: transactional batches open a producer's transaction, markers close
 * it, and the transaction index gives read_committed readers the last stable offset and the aborted transactions,
 * also across writers, checkpoints, segment rolls, a writer killed between a marker and its index entry, and a torn
 * index entry.
 */
class TransactionsTest {
    private static final TopicPartition TP = new TopicPartition("txns", 0);
    private static final TopicConfig CONFIG = TopicConfig.DEFAULTS;
    private static final long A = 11;
    private static final long B = 22;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void lastStableOffsetHoldsAtTheFirstBatchUntilTheCommitMarker() throws IOException {
        try (PartitionWriter w = writer()) {
            assertThat(w.append(txnBatch(A, 0, 0, "a0", "a1"), CONFIG).baseOffset()).isZero();
            assertThat(transactions().lastStableOffset(2)).isZero();
            assertThat(transactions().openTransactions()).containsExactly(Map.entry(A, 0L));
            w.append(txnBatch(A, 0, 2, "a2"), CONFIG);
            assertThat(transactions().lastStableOffset(3)).isZero();

            AppendResult marker = w.appendMarker(new TransactionMarker(A, (short) 0, true, 5), CONFIG);

            assertThat(marker.baseOffset()).isEqualTo(3);
            assertThat(transactions().lastStableOffset(4)).isEqualTo(4);
            assertThat(transactions().openTransactions()).isEmpty();
            assertThat(transactions().aborted(0, Long.MAX_VALUE)).isEmpty();
        }
    }

    @Test
    void abortedTransactionIsListedWithItsMarkerOffset() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(List.of(record("plain")), ProducerIdentity.NONE, CONFIG);
            w.append(txnBatch(A, 0, 0, "a0", "a1"), CONFIG);
            long marker = w.appendMarker(new TransactionMarker(A, (short) 0, false, 5), CONFIG).baseOffset();

            assertThat(marker).isEqualTo(3);
            assertThat(transactions().aborted(0, 10)).containsExactly(new AbortedTransaction(A, 1, 3));
            assertThat(transactions().aborted(3, 4)).containsExactly(new AbortedTransaction(A, 1, 3));
            assertThat(transactions().aborted(4, 10)).as("ends before the range").isEmpty();
            assertThat(transactions().aborted(0, 1)).as("begins after the range").isEmpty();
            assertThat(transactions().lastStableOffset(4)).isEqualTo(4);
        }
    }

    @Test
    void twoProducersInterleaved() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);                         // 0
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);                         // 1
            w.append(txnBatch(A, 0, 1, "a1"), CONFIG);                         // 2
            assertThat(transactions().openTransactions()).containsOnly(Map.entry(A, 0L), Map.entry(B, 1L));
            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG); // 3
            assertThat(transactions().lastStableOffset(4)).as("B still open").isEqualTo(1);
            w.append(txnBatch(B, 0, 1, "b1"), CONFIG);                         // 4
            w.append(txnBatch(A, 0, 2, "a2"), CONFIG);                         // 5: A's next transaction
            w.appendMarker(new TransactionMarker(B, (short) 0, false, 1), CONFIG); // 6
            assertThat(transactions().lastStableOffset(7)).as("A's second transaction").isEqualTo(5);
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG); // 7

            assertThat(transactions().lastStableOffset(8)).isEqualTo(8);
            assertThat(transactions().aborted(0, 8)).containsExactly(new AbortedTransaction(B, 1, 6),
                    new AbortedTransaction(A, 5, 7));
            assertThat(transactions().aborted(7, 8)).containsExactly(new AbortedTransaction(A, 5, 7));
        }
    }

    @Test
    void transactionSpansSegmentRollsAndAFreshWriterEndsItFromTheCheckpoint() throws IOException {
        TopicConfig small = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        try (PartitionWriter w = writer()) {
            w.append(List.of(record("before")), ProducerIdentity.NONE, small);
            for (int i = 0; i < 12; i++) {
                w.append(txnBatch(A, 0, i, "a" + i + "|" + "x".repeat(200)), small);
                assertThat(transactions().lastStableOffset(i + 2)).isEqualTo(1);
            }
        }
        List<Long> bases = new HotLog(data).segmentBases(TP);
        assertThat(bases).hasSizeGreaterThan(2);
        // The roll's checkpoint carries the open transaction (format 3).
        ProducerSnapshot checkpoint = ProducerSnapshot.read(data.resolve(TP.dirName()), bases.get(bases.size() - 1))
                .orElseThrow();
        assertThat(checkpoint.version()).isEqualTo(3);
        assertThat(checkpoint.producers().get(A).txnFirstOffset()).isEqualTo(1);

        try (PartitionWriter fresh = writer()) {
            assertThat(fresh.activeProducers()).singleElement()
                    .satisfies(p -> assertThat(p.currentTxnStartOffset()).isEqualTo(1));
            long marker = fresh.appendMarker(new TransactionMarker(A, (short) 0, false, 3), small).baseOffset();
            assertThat(marker).isEqualTo(13);
            assertThat(fresh.activeProducers()).singleElement()
                    .satisfies(p -> assertThat(p.currentTxnStartOffset()).isEqualTo(-1));
        }
        assertThat(transactions().lastStableOffset(14)).isEqualTo(14);
        assertThat(transactions().aborted(0, 14)).containsExactly(new AbortedTransaction(A, 1, 13));
    }

    @Test
    void aSecondWriterContinuesTheFirstOnesTransaction() throws IOException {
        try (PartitionWriter first = writer(); PartitionWriter second = writer()) {
            first.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            second.append(txnBatch(A, 0, 1, "a1"), CONFIG);
            second.append(txnBatch(B, 0, 0, "b0"), CONFIG);
            first.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);
            assertThat(second.activeProducers()).extracting(PartitionWriter.ActiveProducer::currentTxnStartOffset)
                    .containsExactly(-1L, 2L);
            second.appendMarker(new TransactionMarker(B, (short) 0, true, 1), CONFIG);
        }
        assertThat(transactions().lastStableOffset(5)).isEqualTo(5);
        assertThat(transactions().aborted(0, 5)).containsExactly(new AbortedTransaction(A, 0, 3));
        assertThat(Files.size(indexFile())).as("one BEGIN and one END per transaction")
                .isEqualTo(4L * TxnIndexEntry.SIZE);
    }

    @Test
    void markerWithANewerEpochFencesTheOlderEpochsBatches() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 1, false, 2), CONFIG);

            TierlogException fenced = refusal(
                    () -> w.append(txnBatch(A, 0, 1, "zombie"), CONFIG));
            assertThat(fenced.type()).isEqualTo(ErrorType.FENCED_PRODUCER);
            assertThat(w.append(txnBatch(A, 1, 0, "new epoch"), CONFIG).baseOffset()).isEqualTo(2);
        }
    }

    @Test
    void markerWithAnOlderEpochIsRefused() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 3, 0, "a0"), CONFIG);
            TierlogException fenced = refusal(
                    () -> w.appendMarker(new TransactionMarker(A, (short) 2, true, 1), CONFIG));
            assertThat(fenced.type()).isEqualTo(ErrorType.FENCED_PRODUCER);
            assertThat(w.cachedNextOffset()).as("nothing appended").isEqualTo(1);
            assertThat(transactions().lastStableOffset(1)).isZero();
        }
    }

    @Test
    void nonTransactionalBatchWhileTheTransactionIsOpenIsRefused() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            TierlogException refused = refusal(
                    () -> w.append(batch(A, 0, 1, false, "plain"), CONFIG));
            assertThat(refused.type()).isEqualTo(ErrorType.INVALID_TXN_STATE);
            assertThat(w.cachedNextOffset()).isEqualTo(1);

            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG);
            assertThat(w.append(batch(A, 0, 1, false, "plain"), CONFIG).baseOffset())
                    .as("accepted once the transaction ended; the marker took no sequence").isEqualTo(2);
        }
    }

    @Test
    void markerForAProducerWithoutAnOpenTransactionIsWrittenAndHarmless() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);
            AppendResult retried = w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);
            AppendResult stranger = w.appendMarker(new TransactionMarker(B, (short) 0, true, 1), CONFIG);

            assertThat(List.of(retried.baseOffset(), stranger.baseOffset())).containsExactly(2L, 3L);
            assertThat(transactions().aborted(0, 4)).containsExactly(new AbortedTransaction(A, 0, 1));
            assertThat(transactions().lastStableOffset(4)).isEqualTo(4);
        }
    }

    @Test
    void markerBatchIsKafkasControlBatchAndJsonReadersSkipIt() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 4, 0, "a0"), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 4, true, 9), CONFIG);
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);
            w.appendMarker(new TransactionMarker(B, (short) 0, false, 9), CONFIG);
        }
        ByteBuffer segment = ByteBuffer.wrap(Files.readAllBytes(SegmentFiles.log(data.resolve(TP.dirName()), 0)));
        List<RecordBatch> batches = new ArrayList<>();
        MemoryRecords.readableRecords(segment).batches().forEach(batches::add);
        assertThat(batches).hasSize(4).allSatisfy(b -> {
            assertThat(b.isValid()).isTrue();
            assertThat(b.isTransactional()).isTrue();
        });
        assertThat(batches).extracting(RecordBatch::isControlBatch).containsExactly(false, true, false, true);
        RecordBatch commit = batches.get(1);
        assertThat(commit.baseOffset()).isEqualTo(1);
        assertThat(commit.producerId()).isEqualTo(A);
        assertThat(commit.producerEpoch()).isEqualTo((short) 4);
        assertThat(commit.baseSequence()).isEqualTo(RecordBatch.NO_SEQUENCE);
        Record control = commit.iterator().next();
        assertThat(ControlRecordType.parse(control.key())).isEqualTo(ControlRecordType.COMMIT);
        assertThat(EndTransactionMarker.deserialize(control).coordinatorEpoch()).isEqualTo(9);
        Record abort = batches.get(3).iterator().next();
        assertThat(ControlRecordType.parse(abort.key())).isEqualTo(ControlRecordType.ABORT);

        assertThat(new PartitionReader(data, TP).read(0, null, 100, 1 << 20).records())
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8)).containsExactly("a0", "b0");
    }

    @Test
    void writerKilledBetweenTheMarkerAndItsEndIsRepairedByTheNextWriter() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);
        }
        truncateIndex(TxnIndexEntry.SIZE); // the END, as if killed right after the marker batch
        assertThat(transactions().lastStableOffset(2)).as("a missing END holds the LSO back").isZero();

        try (PartitionWriter next = writer()) {
            next.append(List.of(record("after")), ProducerIdentity.NONE, CONFIG);
        }
        assertThat(transactions().lastStableOffset(3)).isEqualTo(3);
        assertThat(transactions().aborted(0, 3)).containsExactly(new AbortedTransaction(A, 0, 1));
        assertThat(Files.size(indexFile())).as("the BEGIN was not written twice").isEqualTo(2L * TxnIndexEntry.SIZE);
    }

    @Test
    void aCheckpointedOpenTransactionWhoseBeginIsLostGetsItBack() throws IOException {
        TopicConfig small = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        try (PartitionWriter w = writer()) {
            w.append(List.of(record("before")), ProducerIdentity.NONE, small);
            for (int i = 0; i < 4; i++) {
                w.append(txnBatch(A, 0, i, "a" + i + "|" + "x".repeat(400)), small);
            }
        }
        assertThat(new HotLog(data).segmentBases(TP)).as("rolled, so checkpointed with the transaction open")
                .hasSizeGreaterThan(1);
        // An OS crash after the roll's checkpoint was durable, before the index's BEGIN was.
        Files.delete(indexFile());
        assertThat(transactions().lastStableOffset(5)).isEqualTo(5);

        try (PartitionWriter fresh = writer()) {
            fresh.append(List.of(record("after")), ProducerIdentity.NONE, small);
        }
        assertThat(transactions().openTransactions()).containsExactly(Map.entry(A, 1L));
    }

    @Test
    void aCheckpointAheadOfTheIndexIsSkippedAndTheLostEndReplayed() throws IOException {
        TopicConfig small = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), small);
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), small);
            for (int i = 0; i < 4; i++) {
                w.append(List.of(record("p" + i + "|" + "x".repeat(400))), ProducerIdentity.NONE, small);
            }
        }
        List<Long> bases = new HotLog(data).segmentBases(TP);
        assertThat(bases).as("rolled, so checkpointed after the marker").hasSizeGreaterThan(1);
        assertThat(ProducerSnapshot.read(data.resolve(TP.dirName()), bases.get(bases.size() - 1)).orElseThrow()
                .newestTxnEnd()).isEqualTo(1);
        // An OS crash after the checkpoint was written back, before the index's END was (the index is not forced).
        truncateIndex(TxnIndexEntry.SIZE);

        try (PartitionWriter fresh = writer()) {
            fresh.append(List.of(record("after")), ProducerIdentity.NONE, small);
        }
        assertThat(transactions().openTransactions()).as("the END is back, from the marker").isEmpty();
        assertThat(transactions().aborted(0, 7)).containsExactly(new AbortedTransaction(A, 0, 1));
    }

    @Test
    void tornOrDamagedLastEntryIsIgnoredByReadersAndTruncatedByTheNextWriter() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
        }
        appendToIndex(new byte[]{2, 1, 0, 0, 0, 0, 0}); // half an END
        assertThat(transactions().openTransactions()).containsExactly(Map.entry(A, 0L));
        try (PartitionWriter w = writer()) {
            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG);
        }
        assertThat(Files.size(indexFile())).isEqualTo(2L * TxnIndexEntry.SIZE);
        assertThat(transactions().lastStableOffset(2)).isEqualTo(2);

        try (PartitionWriter w = writer()) {
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);
        }
        byte[] damaged = TxnIndexEntry.end(B, (short) 0, 3, false).encode().array();
        damaged[12] ^= 1; // a whole entry whose CRC fails, then a torn one: more than the next entry overwrites
        appendToIndex(damaged);
        appendToIndex(new byte[]{1, 1, 0, 0, 0, 0, 0, 0});
        assertThat(transactions().openTransactions()).containsExactly(Map.entry(B, 2L));
        try (PartitionWriter w = writer()) {
            w.appendMarker(new TransactionMarker(B, (short) 0, false, 1), CONFIG);
        }
        assertThat(Files.size(indexFile())).isEqualTo(4L * TxnIndexEntry.SIZE);
        assertThat(transactions().aborted(0, 4)).containsExactly(new AbortedTransaction(B, 2, 3));
    }

    @Test
    void readerCopesWithNoIndexAndWithAPartitionDeletedAndRecreated() throws IOException {
        assertThat(transactions().lastStableOffset(7)).isEqualTo(7);
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);
        }
        assertThat(transactions().lastStableOffset(2)).isZero();
        new HotLog(data).deletePartition(TP);
        // Re-created before the reader looks again: its index is shorter than what the reader had read.
        try (PartitionWriter w = writer()) {
            w.append(List.of(record("x")), ProducerIdentity.NONE, CONFIG);
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);
        }
        assertThat(transactions().openTransactions()).as("read anew, not the old file's entries")
                .containsExactly(Map.entry(B, 1L));
        new HotLog(data).deletePartition(TP);
        assertThat(transactions().lastStableOffset(9)).as("no index: no transactions").isEqualTo(9);
    }

    @Test
    void theProcessWideCacheKeepsOnlyPartitionsWithAnIndexAndForgetsDeletedOnes() throws IOException {
        Path dir = data.resolve(TP.dirName());
        assertThat(transactions().lastStableOffset(7)).isEqualTo(7);
        assertThat(PartitionTransactions.isCached(dir)).as("no index file: nothing kept").isFalse();
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
        }
        assertThat(transactions().lastStableOffset(1)).isZero();
        assertThat(PartitionTransactions.isCached(dir)).isTrue();

        new HotLog(data).deletePartition(TP);
        assertThat(PartitionTransactions.isCached(dir)).as("deleted by this process").isFalse();

        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
        }
        assertThat(transactions().lastStableOffset(1)).isZero();
        deleteRecursively(dir); // as another instance deletes it
        assertThat(transactions().lastStableOffset(3)).isEqualTo(3);
        assertThat(PartitionTransactions.isCached(dir)).as("found missing").isFalse();
    }

    /**
     * The ordering that lets readers go without a lock: at every moment of an append (probed whenever the writer reads
     * its clock, which it does right after writing a batch too), a reader that reads the log's end first and the index
     * second finds every transaction that is open in the log open in the index, from no later an offset.
     */
    @Test
    void aReaderOfTheHighWatermarkThenTheIndexNeverMissesAnOpenTransaction() throws IOException {
        List<String> violations = new ArrayList<>();
        AtomicInteger probes = new AtomicInteger();
        ProbingClock probing = new ProbingClock(clock, () -> {
            probes.incrementAndGet();
            Map<Long, Long> open = openInLog();
            Map<Long, Long> indexed = transactions().openTransactions();
            open.forEach((pid, first) -> {
                if (indexed.getOrDefault(pid, Long.MAX_VALUE) > first) {
                    violations.add("producer " + pid + " open since " + first + " in the log, index says " + indexed);
                }
            });
        });
        try (PartitionWriter w = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ZERO, probing)) {
            w.append(txnBatch(A, 0, 0, "a0"), CONFIG);
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);
            w.append(txnBatch(A, 0, 1, "a1"), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG);
            w.append(txnBatch(A, 0, 2, "a2"), CONFIG);
            w.appendMarker(new TransactionMarker(B, (short) 0, false, 1), CONFIG);
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);
        }
        assertThat(probes.get()).isGreaterThan(7);
        assertThat(violations).isEmpty();
    }

    /** Producer id to first offset of the transactions open in the log as written so far (the high watermark). */
    private Map<Long, Long> openInLog() {
        Map<Long, Long> open = new java.util.HashMap<>();
        if (new HotLog(data).segmentBases(TP).isEmpty()) {
            return open;
        }
        new PartitionReader(data, TP).scan(new Position(0, 0, 0), (info, batch) -> {
            if (info.control()) {
                open.remove(info.producerId());
            } else if (info.transactional()) {
                open.putIfAbsent(info.producerId(), info.baseOffset());
            }
            return true;
        });
        return open;
    }

    /** A clock that runs a probe each time it is read. */
    private static final class ProbingClock extends java.time.Clock {
        private final java.time.Clock delegate;
        private final Runnable probe;

        ProbingClock(java.time.Clock delegate, Runnable probe) {
            this.delegate = delegate;
            this.probe = probe;
        }

        @Override
        public java.time.ZoneId getZone() {
            return delegate.getZone();
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            probe.run();
            return delegate.instant();
        }

        @Override
        public long millis() {
            probe.run();
            return delegate.millis();
        }
    }

    @Test
    void underFsyncAlwaysTheIndexIsForcedOnlyByAppendsThatWroteIt() throws IOException {
        AtomicInteger forces = new AtomicInteger();
        SyncMeters meters = new SyncMeters(nanos -> forces.incrementAndGet(), nanos -> { });
        try (PartitionWriter w = new PartitionWriter(data, TP, FsyncPolicy.ALWAYS, Duration.ZERO, clock, meters,
                PartitionWriter.DEFAULT_PRODUCER_ID_EXPIRATION)) {
            w.append(List.of(record("warm-up")), ProducerIdentity.NONE, CONFIG);
            forces.set(0);
            w.append(txnBatch(A, 0, 0, "opens"), CONFIG);
            assertThat(forces.get()).as("segment and index").isEqualTo(2);
            forces.set(0);
            w.append(txnBatch(A, 0, 1, "continues"), CONFIG);
            assertThat(forces.get()).as("the segment only").isEqualTo(1);
            forces.set(0);
            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG);
            assertThat(forces.get()).as("segment and index").isEqualTo(2);
        }
    }

    @Test
    void aReadWithoutAbortedBatchesKeepsCommittedPlainAndMarkerBatchesInOrder() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(A, 0, 0, "a0", "a1"), CONFIG);                         // 0-1: A, aborted
            w.append(List.of(record("plain")), ProducerIdentity.NONE, CONFIG);     // 2
            w.append(txnBatch(B, 0, 0, "b0"), CONFIG);                             // 3: B, committed
            w.append(txnBatch(A, 0, 2, "a2"), CONFIG);                             // 4: A, aborted
            w.appendMarker(new TransactionMarker(A, (short) 0, false, 1), CONFIG);  // 5
            w.appendMarker(new TransactionMarker(B, (short) 0, true, 1), CONFIG);   // 6
            w.append(txnBatch(A, 0, 3, "a3"), CONFIG);                             // 7: A again, committed
            w.appendMarker(new TransactionMarker(A, (short) 0, true, 1), CONFIG);   // 8
        }
        List<AbortedTransaction> aborted = transactions().aborted(0, 9);
        assertThat(aborted).containsExactly(new AbortedTransaction(A, 0, 5));
        PartitionReader reader = new PartitionReader(data, TP);
        try (BatchRead read = reader.readBatches(1, null, Integer.MAX_VALUE, 1 << 20).withoutAborted(aborted, 1)) {
            assertThat(baseOffsets(read)).containsExactly(2L, 3L, 5L, 6L, 7L, 8L);
            assertThat(read.nextOffset()).isEqualTo(9);
            // Counted from the offset asked for: the plain, B's and A's committed records (markers count too).
            assertThat(read.records()).isEqualTo(6);
        }
        try (BatchRead read = reader.readBatches(0, null, Integer.MAX_VALUE, 1 << 20)) {
            assertThat(read.abortedBatches(aborted)).as("what withoutAborted leaves out")
                    .containsExactly(new OffsetRange(0, 1), new OffsetRange(4, 4));
            assertThat(read.withoutAborted(List.of(), 0)).as("nothing aborted: the read itself").isSameAs(read);
        }
    }

    private static List<Long> baseOffsets(BatchRead read) {
        ByteBuffer b = read.buffer();
        List<Long> out = new ArrayList<>();
        for (int at = 0; at < b.limit(); at += RecordBatchCodec.LOG_OVERHEAD + b.getInt(at + RecordBatchCodec.LENGTH_OFFSET)) {
            out.add(b.getLong(at));
        }
        return out;
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
    }

    private PartitionTransactions transactions() {
        return new HotLog(data).transactions(TP);
    }

    private Path indexFile() {
        return data.resolve(TP.dirName()).resolve(TxnIndexEntry.FILE_NAME);
    }

    private void truncateIndex(int bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(indexFile(), StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - bytes);
        }
    }

    private void appendToIndex(byte[] bytes) throws IOException {
        Files.write(indexFile(), bytes, StandardOpenOption.APPEND);
    }

    private static AppendRecord record(String value) {
        return new AppendRecord(null, value.getBytes(StandardCharsets.UTF_8), List.of(), 1_700_000_000_000L);
    }

    static ClientBatch txnBatch(long producerId, int epoch, int sequence, String... values) {
        return batch(producerId, epoch, sequence, true, values);
    }

    /** A batch as kafka-clients' producer builds it, validated as the produce path does. */
    static ClientBatch batch(long producerId, int epoch, int sequence, boolean transactional, String... values) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) epoch, sequence,
                transactional, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (String v : values) {
            builder.append(1_700_000_000_000L, null, v.getBytes(StandardCharsets.UTF_8));
        }
        ClientBatch batch = ClientBatchValidator.validate(builder.build().buffer(), Integer.MAX_VALUE,
                1_700_000_000_000L);
        assertThat(batch.transactional()).isEqualTo(transactional);
        return batch;
    }

    /** The exception {@code call} throws, which must be a {@link TierlogException}. */
    private static TierlogException refusal(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        Throwable thrown = catchThrowable(call);
        assertThat(thrown).isInstanceOf(TierlogException.class);
        return (TierlogException) thrown;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
