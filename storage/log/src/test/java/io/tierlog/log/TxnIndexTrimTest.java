package io.tierlog.log;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.tierlog.log.TransactionsTest.txnBatch;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transaction index's trim ({@link HotLog#trimTransactionIndex}): once the hot segments below an offset are gone,
 * the transactions that ended below the oldest remaining one leave the index, and open or later ones stay; readers
 * (whose cache outlives the file) and writers (whose channel does) see the trimmed file, not the one it replaced.
 */
class TxnIndexTrimTest {
    private static final TopicPartition TP = new TopicPartition("trim", 0);
    /** About three padded batches per segment. */
    private static final TopicConfig SMALL = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
    private static final String PAD = "x".repeat(300);
    private static final long ABORTED_EARLY = 1;
    private static final long COMMITTED_EARLY = 2;
    private static final long OPEN = 3;
    private static final long SPANNING = 4;
    private static final long ABORTED_LATE = 5;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    /**
     * Offsets: 0 aborted-early batch, 1 its abort; 2 committed-early batch, 3 its commit; 4 the open transaction's
     * batch; 5 the spanning transaction's batch; then filler (one producer's committed transactions) over several
     * segments, which the test evicts; then the spanning transaction's abort and a late aborted transaction.
     */
    private Layout writeLog(PartitionWriter w) throws IOException {
        w.append(txnBatch(ABORTED_EARLY, 0, 0, PAD), SMALL);                                   // 0
        w.appendMarker(new TransactionMarker(ABORTED_EARLY, (short) 0, false, 1), SMALL);     // 1
        w.append(txnBatch(COMMITTED_EARLY, 0, 0, PAD), SMALL);                                 // 2
        w.appendMarker(new TransactionMarker(COMMITTED_EARLY, (short) 0, true, 1), SMALL);    // 3
        w.append(txnBatch(OPEN, 0, 0, PAD), SMALL);                                            // 4
        w.append(txnBatch(SPANNING, 0, 0, PAD), SMALL);                                        // 5
        for (int i = 0; i < 12; i++) {
            w.append(txnBatch(100, 0, i, PAD), SMALL);
            w.appendMarker(new TransactionMarker(100, (short) 0, true, 1), SMALL);
        }
        long spanningAbort = w.appendMarker(new TransactionMarker(SPANNING, (short) 0, false, 1), SMALL).baseOffset();
        long lateFirst = w.append(txnBatch(ABORTED_LATE, 0, 0, PAD), SMALL).baseOffset();
        long lateAbort = w.appendMarker(new TransactionMarker(ABORTED_LATE, (short) 0, false, 1), SMALL).baseOffset();
        return new Layout(spanningAbort, lateFirst, lateAbort);
    }

    private record Layout(long spanningAbort, long lateFirst, long lateAbort) {
    }

    @Test
    void trimDropsWhatEndedBelowTheOldestHotSegmentAndKeepsOpenAndLaterTransactions() throws IOException {
        Layout l;
        try (PartitionWriter w = writer()) {
            l = writeLog(w);
        }
        HotLog log = new HotLog(data);
        long indexBefore = Files.size(indexFile());
        PartitionTransactions txns = log.transactions(TP);
        assertThat(txns.aborted(0, Long.MAX_VALUE)).extracting(AbortedTransaction::producerId)
                .containsExactly(ABORTED_EARLY, SPANNING, ABORTED_LATE);

        long oldest = evictAllButTheNewestSegments(log, 2);
        assertThat(oldest).as("the filler's segments are gone").isGreaterThan(5).isLessThan(l.spanningAbort());
        int dropped = log.trimTransactionIndex(TP);

        // ABORTED_EARLY and COMMITTED_EARLY (2 entries each) and the filler's transactions below the oldest segment.
        assertThat(dropped).isGreaterThan(4);
        assertThat(Files.size(indexFile())).isEqualTo(indexBefore - (long) dropped * TxnIndexEntry.SIZE);
        assertThat(txns.aborted(0, Long.MAX_VALUE)).as("a reader that had read the old file reads the new one")
                .containsExactly(new AbortedTransaction(SPANNING, 5, l.spanningAbort()),
                        new AbortedTransaction(ABORTED_LATE, l.lateFirst(), l.lateAbort()));
        assertThat(txns.openTransactions()).containsExactly(Map.entry(OPEN, 4L));
        assertThat(txns.lastStableOffset(l.lateAbort() + 1)).isEqualTo(4);
        assertThat(log.trimTransactionIndex(TP)).as("nothing more ended below it").isZero();
    }

    @Test
    void trimRewritesNothingWhenNothingEndedBelowTheOldestSegment() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(OPEN, 0, 0, PAD), SMALL);
            for (int i = 0; i < 6; i++) {
                w.append(txnBatch(100, 0, i, PAD), SMALL);
            }
        }
        HotLog log = new HotLog(data);
        Object inode = inode();
        evictAllButTheNewestSegments(log, 1);
        assertThat(log.trimTransactionIndex(TP)).isZero();
        assertThat(inode()).as("not rewritten").isEqualTo(inode);
        assertThat(log.transactions(TP).openTransactions()).containsOnlyKeys(OPEN, 100L);
    }

    @Test
    void aWriterWhoseChannelOutlivedATrimAppendsToTheTrimmedFile() throws IOException {
        HotLog log = new HotLog(data);
        try (PartitionWriter writer = writer()) {
            Layout l = writeLog(writer);
            evictAllButTheNewestSegments(log, 2);
            assertThat(log.trimTransactionIndex(TP)).isPositive();
            Object afterTrim = inode();

            // The same writer (its index channel still open on the replaced file), then a second one.
            long commit = writer.appendMarker(new TransactionMarker(OPEN, (short) 0, true, 1), SMALL).baseOffset();
            assertThat(log.transactions(TP).openTransactions()).as("the END went to the trimmed file").isEmpty();
            long next;
            try (PartitionWriter second = writer()) {
                next = second.append(txnBatch(ABORTED_EARLY, 1, 0, "again"), SMALL).baseOffset();
            }

            assertThat(inode()).isEqualTo(afterTrim);
            PartitionTransactions txns = log.transactions(TP);
            assertThat(txns.openTransactions()).as("OPEN's END went to the trimmed file")
                    .containsExactly(Map.entry(ABORTED_EARLY, next));
            assertThat(txns.lastStableOffset(next + 1)).isEqualTo(next);
            assertThat(txns.aborted(0, Long.MAX_VALUE)).extracting(AbortedTransaction::producerId)
                    .containsExactly(SPANNING, ABORTED_LATE);
            assertThat(commit).isGreaterThan(l.lateAbort());
        }
        try (PartitionWriter reopened = writer()) {
            // A fresh writer's recovery scan of the remaining segments writes nothing the trimmed index lacks.
            long size = Files.size(indexFile());
            reopened.append(txnBatch(100, 0, 12, "more"), SMALL);
            assertThat(Files.size(indexFile())).isEqualTo(size + TxnIndexEntry.SIZE);
        }
    }

    /**
     * A reader cached the index; the file is then rewritten shorter and grows back past what the reader had read,
     * under the same inode (a file system may give a new file the inode of a deleted one). The reader must not read
     * on from its old position.
     */
    @Test
    void aReaderNoticesARewrittenIndexEvenUnderTheSameInode() throws IOException {
        try (PartitionWriter w = writer()) {
            w.append(txnBatch(ABORTED_EARLY, 0, 0, "a"), SMALL);
            w.appendMarker(new TransactionMarker(ABORTED_EARLY, (short) 0, false, 1), SMALL);
        }
        PartitionTransactions txns = new HotLog(data).transactions(TP);
        assertThat(txns.aborted(0, Long.MAX_VALUE)).hasSize(1);

        // In place: [BEGIN OPEN@4, BEGIN SPANNING@5, END SPANNING@9 abort]: longer than the two entries read.
        ByteBuffer rewritten = ByteBuffer.allocate(3 * TxnIndexEntry.SIZE)
                .put(TxnIndexEntry.begin(OPEN, (short) 0, 4).encode())
                .put(TxnIndexEntry.begin(SPANNING, (short) 0, 5).encode())
                .put(TxnIndexEntry.end(SPANNING, (short) 0, 9, false).encode()).flip();
        try (FileChannel ch = FileChannel.open(indexFile(), StandardOpenOption.WRITE)) {
            ch.write(rewritten, 0);
        }

        assertThat(txns.aborted(0, Long.MAX_VALUE)).containsExactly(new AbortedTransaction(SPANNING, 5, 9));
        assertThat(txns.openTransactions()).containsExactly(Map.entry(OPEN, 4L));
    }

    /** Evicts the partition's segments but its newest {@code keep}; returns the oldest remaining base. */
    private static long evictAllButTheNewestSegments(HotLog log, int keep) {
        List<Long> bases = log.segmentBases(TP);
        assertThat(bases).hasSizeGreaterThan(keep + 1);
        long oldestKept = bases.get(bases.size() - keep);
        log.evictBelow(TP, oldestKept);
        assertThat(log.oldestSegmentBase(TP)).isEqualTo(oldestKept);
        return oldestKept;
    }

    private Object inode() throws IOException {
        return Files.readAttributes(indexFile(), BasicFileAttributes.class).fileKey();
    }

    private Path indexFile() {
        return data.resolve(TP.dirName()).resolve(TxnIndexEntry.FILE_NAME);
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ZERO, clock);
    }
}
