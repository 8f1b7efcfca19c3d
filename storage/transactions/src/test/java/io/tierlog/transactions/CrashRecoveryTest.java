package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static io.tierlog.transactions.RecordingParticipants.Marker;
import static io.tierlog.transactions.RecordingParticipants.OffsetCommit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance whose participants fail midway (as if it died between two markers) leaves the transaction prepared;
 * another instance on the same directory completes it with the same outcome, offsets committed once.
 */
class CrashRecoveryTest {
    static final TopicPartition T0 = new TopicPartition("t", 0);
    static final TopicPartition T1 = new TopicPartition("t", 1);
    static final TopicPartition T2 = new TopicPartition("t", 2);

    @TempDir
    Path dir;

    final ManualClock clock = new ManualClock();
    final AtomicLong producerIds = new AtomicLong();
    final RecordingParticipants failing = new RecordingParticipants();
    final RecordingParticipants healthy = new RecordingParticipants();

    TransactionCoordinator instance(RecordingParticipants participants) {
        return new TransactionCoordinator(dir, true, clock, producerIds::incrementAndGet, participants,
                TransactionConfig.DEFAULTS);
    }

    @Test
    void aCommitInterruptedAfterTheFirstMarkerIsCompletedByAnotherInstance() {
        TransactionCoordinator dying = instance(failing);
        InitResult p = dying.initProducerId("tx", 60_000, -1, (short) -1);
        dying.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0, T1, T2));
        dying.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        dying.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, new PendingOffset(5, "x", 1)));
        failing.failOn(tp -> !tp.equals(T0));

        assertThat(dying.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        assertThat(failing.markers()).containsExactly(new Marker(p.producerId(), p.producerEpoch(), true, T0));
        assertThat(failing.offsetCommits()).isEmpty();

        TransactionCoordinator survivor = instance(healthy);
        assertThat(survivor.describe("tx").orElseThrow().state()).isEqualTo(TxnState.PREPARE_COMMIT);
        assertThat(survivor.completePrepared()).isEqualTo(1);

        assertThat(healthy.markers()).containsExactlyInAnyOrder(new Marker(p.producerId(), p.producerEpoch(), true, T0),
                new Marker(p.producerId(), p.producerEpoch(), true, T1), new Marker(p.producerId(), p.producerEpoch(), true, T2));
        assertThat(healthy.offsetCommits()).containsExactly(new OffsetCommit("g", Map.of(T0, new PendingOffset(5, "x", 1))));
        assertThat(survivor.describe("tx").orElseThrow().state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(survivor.completePrepared()).isZero();
        // The producer's retry on either instance learns the outcome; nothing is written again.
        assertThat(dying.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);
        assertThat(healthy.markers()).hasSize(3);
        assertThat(failing.offsetCommits().size() + healthy.offsetCommits().size()).isEqualTo(1);
    }

    @Test
    void anAbortInterruptedAfterTheFirstMarkerIsCompletedAsAnAbort() {
        TransactionCoordinator dying = instance(failing);
        InitResult p = dying.initProducerId("tx", 60_000, -1, (short) -1);
        dying.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0, T1));
        dying.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        dying.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, new PendingOffset(5, "", 1)));
        failing.failOn(tp -> tp.equals(T1));
        assertThat(dying.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);

        TransactionCoordinator survivor = instance(healthy);
        assertThat(survivor.completePrepared()).isEqualTo(1);

        assertThat(healthy.markers()).extracting(Marker::commit).containsOnly(false);
        assertThat(healthy.markers()).extracting(Marker::partition).containsExactlyInAnyOrder(T0, T1);
        assertThat(healthy.offsetCommits()).isEmpty();
        assertThat(survivor.describe("tx").orElseThrow().state()).isEqualTo(TxnState.COMPLETE_ABORT);
    }

    @Test
    void aTimeoutAbortWhoseMarkersFailIsCompletedLaterWithTheFencingEpoch() {
        TransactionCoordinator dying = instance(failing);
        InitResult p = dying.initProducerId("tx", 1_000, -1, (short) -1);
        dying.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        failing.failOn(tp -> true);
        clock.advanceMillis(1_001);
        assertThat(dying.abortTimedOut()).isEqualTo(1);
        assertThat(dying.describe("tx").orElseThrow().state()).isEqualTo(TxnState.PREPARE_ABORT);

        assertThat(instance(healthy).completePrepared()).isEqualTo(1);
        assertThat(healthy.markers()).containsExactly(new Marker(p.producerId(), (short) 1, false, T0));
    }
}
