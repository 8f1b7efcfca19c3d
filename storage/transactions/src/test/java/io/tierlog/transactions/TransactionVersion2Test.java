package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * EndTxn of transaction version 2 (KIP-890 part 2, {@link TransactionCoordinator#endTxnBumpingEpoch}): each
 * transaction ends at a new epoch that its markers carry and the answer returns, retries of an EndTxn are answered
 * again, an exhausted epoch continues under a new producer id, also across a completion that failed midway.
 */
class TransactionVersion2Test {
    static final TopicPartition T0 = new TopicPartition("t", 0);
    static final TopicPartition T1 = new TopicPartition("t", 1);

    @TempDir
    Path dir;

    final ManualClock clock = new ManualClock();
    final AtomicLong producerIds = new AtomicLong(1000);
    final RecordingParticipants participants = new RecordingParticipants();
    TransactionCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = new TransactionCoordinator(dir, false, clock, producerIds::incrementAndGet, participants,
                new TransactionConfig(Duration.ofMinutes(15), Duration.ofDays(7)));
    }

    @Test
    void eachTransactionEndsAtTheNextEpochWhichItsMarkersCarry() {
        InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
        assertThat(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0, T1)))
                .isEqualTo(TxnError.NONE);

        EndTxnResult first = coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true);

        assertThat(first).isEqualTo(new EndTxnResult(TxnError.NONE, p.producerId(), (short) 1));
        assertThat(participants.markers()).containsExactly(
                new RecordingParticipants.Marker(p.producerId(), (short) 1, true, T0),
                new RecordingParticipants.Marker(p.producerId(), (short) 1, true, T1));
        // The next transaction runs at the returned epoch; the old one is fenced everywhere.
        assertThat(coordinator.addPartitions("tx", p.producerId(), (short) 0, List.of(T0)))
                .isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(Appends.allowed(coordinator, "tx", p.producerId(), (short) 0, T0)).isFalse();
        assertThat(coordinator.addPartitions("tx", p.producerId(), (short) 1, List.of(T0))).isEqualTo(TxnError.NONE);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), (short) 1, false))
                .isEqualTo(new EndTxnResult(TxnError.NONE, p.producerId(), (short) 2));
        assertThat(participants.markers()).last()
                .isEqualTo(new RecordingParticipants.Marker(p.producerId(), (short) 2, false, T0));
    }

    @Test
    void aRetriedEndTxnGetsTheSameAnswerAndAnotherOutcomeIsRefused() {
        InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        EndTxnResult done = coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true);

        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(done);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), false).error())
                .isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(participants.markers()).as("no second set of markers").hasSize(1);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), (short) -3, true).error())
                .isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId() + 7, done.producerEpoch(), true).error())
                .isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void withNoTransactionAnAbortEndsAnEmptyOneAndACommitIsRefused() {
        InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true).error())
                .isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), false))
                .isEqualTo(new EndTxnResult(TxnError.NONE, p.producerId(), (short) 1));
        assertThat(participants.markers()).isEmpty();
        assertThat(coordinator.describe("tx").orElseThrow().state()).isEqualTo(TxnState.COMPLETE_ABORT);
    }

    @Test
    void anExhaustedEpochContinuesUnderANewProducerIdAlsoAfterAFailedCompletion() {
        short last = (short) (Short.MAX_VALUE - 1);
        new TransactionStore(dir, false).update("tx", txn -> {
            txn.write(new TransactionMetadata("tx", 77, 77, last, (short) (last - 1), 60_000, TxnState.ONGOING,
                    clock.millis(), clock.millis(), Set.of(T0), Set.of(), Map.of(), -1));
            return null;
        });
        participants.failOn(tp -> true);

        assertThat(coordinator.endTxnBumpingEpoch("tx", 77, last, true).error())
                .isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        assertThat(coordinator.describe("tx").orElseThrow().state()).as("decided, not complete")
                .isEqualTo(TxnState.PREPARE_COMMIT);
        participants.heal();

        // The client's retry (old id, last epoch) completes it: markers under the old id at the final epoch.
        EndTxnResult rotated = coordinator.endTxnBumpingEpoch("tx", 77, last, true);
        assertThat(rotated).isEqualTo(new EndTxnResult(TxnError.NONE, 1001, (short) 0));
        assertThat(participants.markers()).containsExactly(
                new RecordingParticipants.Marker(77, Short.MAX_VALUE, true, T0));
        assertThat(coordinator.endTxnBumpingEpoch("tx", 77, last, true)).as("retried again").isEqualTo(rotated);
        assertThat(producerIds.get()).as("one new id, allocated once").isEqualTo(1001);
        assertThat(coordinator.addPartitions("tx", 1001, (short) 0, List.of(T1))).isEqualTo(TxnError.NONE);
        assertThat(coordinator.addPartitions("tx", 77, last, List.of(T1))).isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
    }
}
