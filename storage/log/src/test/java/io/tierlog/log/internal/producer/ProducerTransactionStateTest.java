package io.tierlog.log.internal.producer;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The producer table's side of transactions: a transactional batch opens the producer's transaction, a marker (a
 * control batch with base sequence -1) closes it without touching the sequences, an open transaction never expires,
 * and checkpoints carry it (format 3) while format 2 checkpoints still load.
 */
class ProducerTransactionStateTest {
    private static final long EXPIRATION_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L;
    private static final long PID = 7;

    @TempDir
    Path dir;

    private final ProducerStateTable table = new ProducerStateTable(Duration.ofMillis(EXPIRATION_MS));

    @Test
    void markerClosesTheTransactionAndLeavesTheSequencesAlone() {
        table.apply(data(0, 0, 4, true), T0);
        assertThat(table.openTransaction(PID)).isZero();
        table.apply(data(5, 5, 6, true), T0);
        assertThat(table.openTransaction(PID)).as("opened by the first batch only").isZero();
        assertThat(table.check(producer(0, 7), 1, false, T0)).isEqualTo(new ProducerStateTable.InvalidTxnState(0));

        table.apply(marker(7, (short) 0), T0);

        assertThat(table.openTransaction(PID)).isEqualTo(ProducerStateTable.NO_TXN);
        assertThat(table.check(producer(0, 7), 1, false, T0)).isEqualTo(new ProducerStateTable.Append());
        assertThat(table.check(producer(0, 5), 2, true, T0)).as("a retry is still answered")
                .isEqualTo(new ProducerStateTable.Duplicate(new ProducerStateTable.AppendedBatch(5, 6, 5, 6)));
    }

    @Test
    void markerOfANewerEpochFencesTheOlderOne() {
        table.apply(data(0, 0, 0, true), T0);
        assertThat(table.checkMarker(PID, (short) 1, T0)).isEqualTo(new ProducerStateTable.Append());
        table.apply(marker(1, (short) 1), T0);

        assertThat(table.check(producer(0, 1), 1, true, T0)).isEqualTo(new ProducerStateTable.Fenced((short) 1));
        assertThat(table.checkMarker(PID, (short) 0, T0)).isEqualTo(new ProducerStateTable.Fenced((short) 1));
    }

    @Test
    void aProducerWithAnOpenTransactionNeverExpires() {
        table.apply(data(0, 0, 0, true), T0);
        assertThat(table.expire(T0 + 10 * EXPIRATION_MS)).isZero();
        table.apply(marker(1, (short) 0), T0 + 10 * EXPIRATION_MS);
        assertThat(table.expire(T0 + 11 * EXPIRATION_MS)).isEqualTo(1);
    }

    @Test
    void checkpointFormat3RoundTripsTheOpenTransaction() {
        table.apply(data(0, 40, 41, true), T0);
        ProducerSnapshot written = new ProducerSnapshot(0, 100, 42, T0, table.entries(), 39);
        written.writeTo(dir, true);

        ProducerSnapshot read = ProducerSnapshot.read(dir, 42).orElseThrow();

        assertThat(read.version()).isEqualTo(3);
        assertThat(read.newestTxnEnd()).isEqualTo(39);
        assertThat(read.producers()).isEqualTo(written.producers());
        assertThat(read.producers().get(PID).txnFirstOffset()).isEqualTo(40);
    }

    @Test
    void checkpointFormat2LoadsWithoutOpenTransactions() throws IOException {
        Files.writeString(dir.resolve(SegmentFiles.snapshotName(5)), """
                {"version":2,"segmentBase":0,"position":300,"nextOffset":5,"segmentCreatedMs":1700000000000,
                 "producers":[{"id":7,"epoch":2,"lastSeenMs":1700000000000,
                   "batches":[{"firstSequence":0,"lastSequence":4,"firstOffset":0,"lastOffset":4}]}]}
                """, StandardCharsets.UTF_8);

        ProducerSnapshot read = ProducerSnapshot.read(dir, 5).orElseThrow();

        assertThat(read.version()).isEqualTo(2);
        assertThat(read.perRequestSequences()).isFalse();
        assertThat(read.producers()).isEqualTo(Map.of(PID, new ProducerStateTable.Entry((short) 2, T0, false,
                List.of(new ProducerStateTable.AppendedBatch(0, 4, 0, 4)), ProducerStateTable.NO_TXN)));
    }

    private static ProducerIdentity producer(int epoch, int sequence) {
        return new ProducerIdentity(PID, (short) epoch, sequence);
    }

    private static BatchInfo data(int sequence, long first, long last, boolean transactional) {
        return new BatchInfo(0, 0, 100, first, last, T0, PID, (short) 0, sequence, transactional, false);
    }

    private static BatchInfo marker(long offset, short epoch) {
        return new BatchInfo(0, 0, 78, offset, offset, T0, PID, epoch, -1, true, true);
    }
}
