package io.tierlog.log.compaction;

import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
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
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hot cleaner on a log with Kafka transactions (Kafka's LogCleaner rules): records of aborted transactions go and
 * never count as a key's latest value, committed transactional records are compacted like any other, markers stay,
 * open transactions hold the cleaner back. The log is read back with kafka-clients' {@link FileRecords}, and the
 * read_committed view is what a Kafka consumer derives from the batches and the aborted transactions.
 */
class HotCleanerTransactionsTest {
    private static final TopicConfig COMPACT = HotCleanerTest.COMPACT;
    private static final String PAD = "x".repeat(300);
    private static final long COMMITTER = 10;
    private static final long ABORTER = 11;

    @TempDir
    Path data;
    final TopicPartition tp = new TopicPartition("txn-table", 0);
    final ManualClock clock = new ManualClock(1_800_000_000_000L);
    final Map<Long, Integer> sequences = new java.util.HashMap<>();
    PartitionWriter writer;
    HotCleaner cleaner;

    @BeforeEach
    void setUp() {
        writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        cleaner = new HotCleaner(data, clock);
    }

    @AfterEach
    void tearDown() throws IOException {
        writer.close();
    }

    @Test
    void anAbortedLatestValueNeverShadowsTheCommittedOneAndAbortedRecordsGoWhileMarkersStay() throws IOException {
        long v1 = txn(COMMITTER, "k", "v1");
        long commit = end(COMMITTER, true);
        long v2 = txn(ABORTER, "k", "v2", "j", "aborted-only");
        long abort = end(ABORTER, false);
        padUntilSealed();
        List<Entry> batchesBefore = batchHeaders();

        assertThat(cleaner.clean(tp, COMPACT, Long.MAX_VALUE).ran()).isTrue();

        List<Entry> after = entries();
        assertThat(committedTable()).containsEntry("k", "v1").doesNotContainKey("j");
        assertThat(after).as("no record of the aborted transaction is left, at any isolation level")
                .noneMatch(e -> e.value != null && (e.value.equals("v2") || e.value.equals("aborted-only")));
        assertThat(after).anyMatch(e -> e.offset == v1 && "v1".equals(e.value));
        assertThat(after).as("both markers stay").filteredOn(e -> e.control)
                .extracting(e -> e.offset).containsExactly(commit, abort);
        assertThat(batchHeaders()).as("every batch header stays, the aborted one emptied").isEqualTo(batchesBefore);
        assertThat(v2).isLessThan(abort);
    }

    @Test
    void committedTransactionalRecordsAreCompactedLikeAnyOther() throws IOException {
        long a = txn(COMMITTER, "k", "a", "other", "o");
        end(COMMITTER, true);
        long b = txn(COMMITTER, "k", "b");
        end(COMMITTER, true);
        padUntilSealed();

        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);

        List<Entry> after = entries();
        assertThat(after).as("the older committed value of k went").noneMatch(e -> e.offset == a);
        assertThat(after).anyMatch(e -> e.offset == b && "b".equals(e.value));
        assertThat(after).anyMatch(e -> "o".equals(e.value));
        assertThat(committedTable()).containsEntry("k", "b").containsEntry("other", "o");
        assertThat(after.stream().filter(e -> e.control)).hasSize(2);
    }

    @Test
    void markersSurviveEveryPassSoRecoveryFromTheCleanedLogEndsEachTransaction() throws IOException {
        txn(COMMITTER, "k", "v1");
        end(COMMITTER, true);
        txn(ABORTER, "k", "v2");
        long abort = end(ABORTER, false);
        padUntilSealed();
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        clock.advance(Duration.ofMillis(COMPACT.deleteRetentionMs() + 1));
        pad(5);
        cleaner.clean(tp, COMPACT.with(Map.of(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.01)), Long.MAX_VALUE);

        // A writer that rebuilds producer and transaction state from the cleaned log alone (no snapshot, no index):
        // every transaction it replays is ended by its marker, so nothing is left open.
        writer.close();
        try (Stream<Path> files = Files.list(data.resolve(tp.dirName()))) {
            for (Path f : files.filter(f -> f.toString().endsWith(SegmentFiles.SNAPSHOT_SUFFIX)
                    || f.getFileName().toString().equals(TxnIndexEntry.FILE_NAME)).toList()) {
                Files.delete(f);
            }
        }
        writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        long next = put("after", "recovery");
        PartitionTransactions txns = new HotLog(data).transactions(tp);
        assertThat(txns.openTransactions()).isEmpty();
        assertThat(txns.lastStableOffset(next + 1)).isEqualTo(next + 1);
        assertThat(txns.aborted(0, Long.MAX_VALUE)).extracting(AbortedTransaction::lastOffset).containsExactly(abort);
        assertThat(committedTable()).containsEntry("k", "v1");
        assertThat(entries()).filteredOn(e -> e.control).extracting(e -> e.offset).contains(abort);
    }

    @Test
    void anOpenTransactionHoldsTheCleanerBackUntilItEnds() throws IOException {
        txn(COMMITTER, "k", "v1");
        end(COMMITTER, true);
        long open = txn(ABORTER, "k", "v2");
        while (new HotLog(data).segmentBases(tp).stream().filter(b -> b > open).count() < 3) {
            pad(3); // sealed segments above the open transaction's, which the cleaner must not touch either
        }

        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        assertThat(entries()).as("an open transaction may still abort: k=v1 must stay")
                .anyMatch(e -> "v1".equals(e.value));

        end(ABORTER, false);
        padUntilSealed();
        cleaner.clean(tp, COMPACT.with(Map.of(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.01)), Long.MAX_VALUE);
        assertThat(entries()).noneMatch(e -> "v2".equals(e.value));
        assertThat(committedTable()).containsEntry("k", "v1");
    }

    /**
     * Regression: on a log without transactions the cleaner writes exactly the bytes it wrote before transactions
     * were taken into account (the digest below was taken from the cleaner of commit a0fd077 on this same log).
     */
    @Test
    void aPartitionWithoutTransactionsIsCleanedToTheSameBytesAsBefore() throws Exception {
        for (int round = 0; round < 12; round++) {
            for (int k = 0; k < 4; k++) {
                put("k" + k, "v" + round + "-" + PAD);
            }
            writer.append(List.of(record("idem", "i" + round)), new ProducerIdentity(42, (short) 0, round), COMPACT);
        }
        put("k1", null);
        put(null, "no key");
        pad(6);
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        clock.advance(Duration.ofMillis(COMPACT.deleteRetentionMs() + 1));
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);

        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (long base : SegmentFiles.segmentBases(data.resolve(tp.dirName()))) {
            sha.update(Files.readAllBytes(SegmentFiles.log(data.resolve(tp.dirName()), base)));
        }
        assertThat(HexFormat.of().formatHex(sha.digest())).isEqualTo(GOLDEN_SHA256);
    }

    private static final String GOLDEN_SHA256 = "c97d93d8bf2dd4347f5c714c3de17aa568e210052e2d832895d9e12f1a326b0d";

    // ---- writing -----------------------------------------------------------------------------------------------

    long put(String key, String value) {
        clock.advance(Duration.ofMillis(1));
        return writer.append(List.of(record(key, value)), ProducerIdentity.NONE, COMPACT).baseOffset();
    }

    AppendRecord record(String key, String value) {
        return new AppendRecord(key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis());
    }

    void pad(int n) {
        for (int i = 0; i < n; i++) {
            put("pad" + i, PAD);
        }
    }

    /** Writes until the last transactional write lies in a sealed segment (the active one is never cleaned). */
    void padUntilSealed() {
        long last = writer.append(List.of(record("pad", PAD)), ProducerIdentity.NONE, COMPACT).baseOffset();
        List<Long> bases;
        do {
            pad(3);
            bases = new HotLog(data).segmentBases(tp);
        } while (bases.get(bases.size() - 1) <= last);
    }

    /** One transactional batch of {@code keyValues} (key, value, key, value...) by {@code producerId}, epoch 0. */
    long txn(long producerId, String... keyValues) {
        clock.advance(Duration.ofMillis(1));
        int sequence = sequences.getOrDefault(producerId, 0);
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) 0, sequence, true, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (int i = 0; i < keyValues.length; i += 2) {
            builder.append(clock.millis(), keyValues[i].getBytes(StandardCharsets.UTF_8),
                    keyValues[i + 1].getBytes(StandardCharsets.UTF_8));
        }
        sequences.put(producerId, sequence + keyValues.length / 2);
        ClientBatch batch = ClientBatchValidator.validate(builder.build().buffer(), Integer.MAX_VALUE, clock.millis());
        return writer.append(batch, COMPACT).baseOffset();
    }

    long end(long producerId, boolean commit) {
        clock.advance(Duration.ofMillis(1));
        return writer.appendMarker(new TransactionMarker(producerId, (short) 0, commit, 1), COMPACT).baseOffset();
    }

    // ---- reading, as Kafka does --------------------------------------------------------------------------------

    /** One record of the log (a control record is a marker's), or one batch's header facts (key and value null). */
    record Entry(long offset, long batchBase, long lastOffset, long producerId, boolean transactional,
                 boolean control, String key, String value) {
    }

    List<Entry> entries() throws IOException {
        return read(false);
    }

    /** Every batch's header facts, in order. */
    List<Entry> batchHeaders() throws IOException {
        return read(true);
    }

    private List<Entry> read(boolean headersOnly) throws IOException {
        List<Entry> out = new ArrayList<>();
        Path dir = data.resolve(tp.dirName());
        for (long base : SegmentFiles.segmentBases(dir)) {
            try (FileRecords records = FileRecords.open(SegmentFiles.log(dir, base).toFile(), false)) {
                for (FileChannelRecordBatch b : records.batches()) {
                    b.ensureValid();
                    if (headersOnly) {
                        out.add(new Entry(b.baseOffset(), b.baseOffset(), b.lastOffset(), b.producerId(),
                                b.isTransactional(), b.isControlBatch(), null, null));
                        continue;
                    }
                    for (Record r : b) {
                        out.add(new Entry(r.offset(), b.baseOffset(), b.lastOffset(), b.producerId(),
                                b.isTransactional(), b.isControlBatch(), text(r.hasKey(), r.key()),
                                text(r.hasValue(), r.value())));
                    }
                }
            }
        }
        return out;
    }

    private static String text(boolean present, ByteBuffer b) {
        if (!present) {
            return null;
        }
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Key to value as a read_committed Kafka consumer sees the log from offset 0 (its fetch loop: a producer joins
     * the aborted set at its aborted transaction's first offset and leaves it at its abort marker; a transactional
     * batch of a producer in the set is skipped; control records are never delivered).
     */
    Map<String, String> committedTable() throws IOException {
        List<AbortedTransaction> aborted =
                new ArrayList<>(new HotLog(data).transactions(tp).aborted(0, Long.MAX_VALUE));
        Set<Long> abortedProducers = new HashSet<>();
        Map<String, String> table = new LinkedHashMap<>();
        for (Entry e : entries()) {
            while (!aborted.isEmpty() && aborted.get(0).firstOffset() <= e.lastOffset) {
                abortedProducers.add(aborted.remove(0).producerId());
            }
            if (e.control) {
                abortedProducers.remove(e.producerId); // a commit marker's producer is not in the set
                continue;
            }
            if (e.transactional && abortedProducers.contains(e.producerId)) {
                continue;
            }
            if (e.key != null) {
                if (e.value == null) {
                    table.remove(e.key);
                } else {
                    table.put(e.key, e.value);
                }
            }
        }
        return table;
    }
}
