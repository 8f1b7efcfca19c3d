package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static io.tierlog.transactions.RecordingParticipants.Marker;
import static io.tierlog.transactions.RecordingParticipants.OffsetCommit;
import static org.assertj.core.api.Assertions.assertThat;

/** The state machine, path by path, on one coordinator (the multi-instance and crash cases have their own tests). */
class TransactionCoordinatorTest {
    static final TopicPartition T0 = new TopicPartition("t", 0);
    static final TopicPartition T1 = new TopicPartition("t", 1);
    static final int TIMEOUT = 60_000;

    @TempDir
    Path dir;

    final ManualClock clock = new ManualClock();
    final AtomicLong producerIds = new AtomicLong(1000);
    final RecordingParticipants participants = new RecordingParticipants();
    TransactionCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = coordinator(new TransactionConfig(Duration.ofMinutes(15), Duration.ofDays(7)));
    }

    TransactionCoordinator coordinator(TransactionConfig config) {
        return new TransactionCoordinator(dir, false, clock, producerIds::incrementAndGet, participants, config);
    }

    InitResult init(String id) {
        InitResult r = coordinator.initProducerId(id, TIMEOUT, -1, (short) -1);
        assertThat(r.error()).isEqualTo(TxnError.NONE);
        return r;
    }

    TxnState state(String id) {
        return coordinator.describe(id).orElseThrow().state();
    }

    @Test
    void aNewIdGetsAFreshProducerIdAtEpochZeroAndEachInitBumpsTheEpoch() {
        InitResult first = init("tx");
        assertThat(first).isEqualTo(new InitResult(TxnError.NONE, 1001, (short) 0));
        assertThat(init("tx")).isEqualTo(new InitResult(TxnError.NONE, 1001, (short) 1));
        assertThat(init("other").producerId()).isEqualTo(1002);
        assertThat(coordinator.describe("tx").orElseThrow())
                .isEqualTo(new TransactionDescription("tx", TxnState.EMPTY, 1001, (short) 1, TIMEOUT, -1, Set.of(), Set.of()));
    }

    @Test
    void invalidTimeoutsAndRequestsAreRefusedAndCreateNothing() {
        assertThat(coordinator.initProducerId("tx", 0, -1, (short) -1).error()).isEqualTo(TxnError.INVALID_TRANSACTION_TIMEOUT);
        assertThat(coordinator.initProducerId("tx", 15 * 60_000 + 1, -1, (short) -1).error())
                .isEqualTo(TxnError.INVALID_TRANSACTION_TIMEOUT);
        assertThat(coordinator.initProducerId("", TIMEOUT, -1, (short) -1).error()).isEqualTo(TxnError.INVALID_REQUEST);
        assertThat(coordinator.initProducerId("tx", TIMEOUT, 5, (short) -1).error()).isEqualTo(TxnError.INVALID_REQUEST);
        assertThat(coordinator.initProducerId("x".repeat(Short.MAX_VALUE + 1), TIMEOUT, -1, (short) -1).error())
                .isEqualTo(TxnError.INVALID_REQUEST);
        assertThat(coordinator.describe("tx")).isEmpty();
        assertThat(coordinator.initProducerId("tx", 15 * 60_000, -1, (short) -1).error()).isEqualTo(TxnError.NONE);
        // The longest id Kafka's wire format can carry works: the file is named by its hash.
        assertThat(coordinator.initProducerId("x".repeat(Short.MAX_VALUE), TIMEOUT, -1, (short) -1).error())
                .isEqualTo(TxnError.NONE);
    }

    @Test
    void addingPartitionsStartsATransactionAndKeepsItsStartTime() {
        InitResult p = init("tx");
        clock.advanceMillis(5);
        long start = clock.millis();
        assertThat(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0))).isEqualTo(TxnError.NONE);
        clock.advanceMillis(5);
        assertThat(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T1))).isEqualTo(TxnError.NONE);
        assertThat(coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g")).isEqualTo(TxnError.NONE);

        TransactionDescription d = coordinator.describe("tx").orElseThrow();
        assertThat(d.state()).isEqualTo(TxnState.ONGOING);
        assertThat(d.startTimeMs()).isEqualTo(start);
        assertThat(d.partitions()).containsExactlyInAnyOrder(T0, T1);
        assertThat(d.groups()).containsExactly("g");
        assertThat(Appends.allowed(coordinator, "tx", p.producerId(), p.producerEpoch(), T0)).isTrue();
        assertThat(Appends.allowed(coordinator, "tx", p.producerId(), p.producerEpoch(), new TopicPartition("t", 2))).isFalse();
        assertThat(Appends.allowed(coordinator, "tx", p.producerId(), (short) (p.producerEpoch() + 1), T0)).isFalse();
        assertThat(Appends.allowed(coordinator, "tx", p.producerId() + 1, p.producerEpoch(), T0)).isFalse();
    }

    @Test
    void addChecksTheProducerIdAndEpoch() {
        assertThat(coordinator.addPartitions("unknown", 1, (short) 0, List.of(T0))).isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        InitResult old = init("tx");
        InitResult p = init("tx");
        assertThat(coordinator.addPartitions("tx", p.producerId() + 1, p.producerEpoch(), List.of(T0)))
                .isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        assertThat(coordinator.addPartitions("tx", old.producerId(), old.producerEpoch(), List.of(T0)))
                .isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.addOffsets("tx", old.producerId(), old.producerEpoch(), "g")).isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(state("tx")).isEqualTo(TxnState.EMPTY);
    }

    @Test
    void commitWritesCommitMarkersThenTheOffsetsAndCompletes() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0, T1));
        coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        PendingOffset first = new PendingOffset(10, "m", 3);
        PendingOffset second = new PendingOffset(12, "", 3);
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, first))).isEqualTo(TxnError.NONE);
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, second, T1, first)))
                .isEqualTo(TxnError.NONE);
        assertThat(participants.offsetCommits()).as("offsets wait for the commit").isEmpty();

        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);

        assertThat(participants.markers()).containsExactlyInAnyOrder(
                new Marker(p.producerId(), p.producerEpoch(), true, T0), new Marker(p.producerId(), p.producerEpoch(), true, T1));
        assertThat(participants.offsetCommits()).containsExactly(new OffsetCommit("g", Map.of(T0, second, T1, first)));
        TransactionDescription d = coordinator.describe("tx").orElseThrow();
        assertThat(d.state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(d.partitions()).isEmpty();
        assertThat(d.groups()).isEmpty();

        // Retries: the same outcome is answered again and written nowhere; the other outcome is refused.
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(participants.markers()).hasSize(2);
        assertThat(participants.offsetCommits()).hasSize(1);
    }

    @Test
    void abortWritesAbortMarkersAndDropsTheOffsets() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, new PendingOffset(1, "", -1)));

        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.NONE);

        assertThat(participants.markers()).containsExactly(new Marker(p.producerId(), p.producerEpoch(), false, T0));
        assertThat(participants.offsetCommits()).isEmpty();
        assertThat(state("tx")).isEqualTo(TxnState.COMPLETE_ABORT);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.NONE);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.INVALID_TXN_STATE);

        // The next transaction starts clean: the dropped offsets are not committed with it.
        clock.advanceMillis(7);
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T1));
        assertThat(coordinator.describe("tx").orElseThrow().startTimeMs()).isEqualTo(clock.millis());
        coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true);
        assertThat(participants.offsetCommits()).isEmpty();
        assertThat(participants.markers()).last().isEqualTo(new Marker(p.producerId(), p.producerEpoch(), true, T1));
    }

    @Test
    void endTxnWithoutATransactionIsAnInvalidState() {
        InitResult p = init("tx");
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(coordinator.endTxn("nope", 1, (short) 0, true)).isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        assertThat(coordinator.endTxn("tx", p.producerId() + 1, p.producerEpoch(), true)).isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        assertThat(coordinator.endTxn("tx", p.producerId(), (short) (p.producerEpoch() + 1), true)).isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(participants.markers()).isEmpty();
    }

    @Test
    void txnOffsetCommitNeedsTheGroupInAnOngoingTransaction() {
        InitResult p = init("tx");
        Map<TopicPartition, PendingOffset> offsets = Map.of(T0, new PendingOffset(5, "", -1));
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), offsets)).isEqualTo(TxnError.INVALID_TXN_STATE);
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), offsets)).isEqualTo(TxnError.INVALID_TXN_STATE);
        coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        assertThat(coordinator.txnOffsetCommit("tx", "other", p.producerId(), p.producerEpoch(), offsets)).isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), (short) (p.producerEpoch() - 1), offsets))
                .isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.txnOffsetCommit("nope", "g", p.producerId(), p.producerEpoch(), offsets))
                .isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        assertThat(coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), offsets)).isEqualTo(TxnError.NONE);
    }

    @Test
    void initOnAnOngoingTransactionAbortsItAtAFencingEpoch() {
        InitResult old = init("tx");
        coordinator.addPartitions("tx", old.producerId(), old.producerEpoch(), List.of(T0));

        InitResult next = init("tx");

        // Aborted with epoch + 1 (the zombie cannot write with it); the new producer gets epoch + 2, as Kafka's retry does.
        assertThat(participants.markers()).containsExactly(new Marker(old.producerId(), (short) 1, false, T0));
        assertThat(next).isEqualTo(new InitResult(TxnError.NONE, old.producerId(), (short) 2));
        assertThat(state("tx")).isEqualTo(TxnState.EMPTY);
        assertThat(coordinator.endTxn("tx", old.producerId(), old.producerEpoch(), true)).isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.addPartitions("tx", old.producerId(), old.producerEpoch(), List.of(T0))).isEqualTo(TxnError.PRODUCER_FENCED);
    }

    @Test
    void kip360ReinitWithTheExpectedProducerBumpsAndARetryOfItGetsTheSameEpoch() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false);

        InitResult bumped = coordinator.initProducerId("tx", TIMEOUT, p.producerId(), p.producerEpoch());
        assertThat(bumped).isEqualTo(new InitResult(TxnError.NONE, p.producerId(), (short) 1));
        // The answer was lost and the producer retries with what it still believes: the same epoch, no second bump.
        assertThat(coordinator.initProducerId("tx", TIMEOUT, p.producerId(), p.producerEpoch())).isEqualTo(bumped);
        // The current epoch bumps; anything else is a zombie.
        assertThat(coordinator.initProducerId("tx", TIMEOUT, p.producerId(), (short) 1))
                .isEqualTo(new InitResult(TxnError.NONE, p.producerId(), (short) 2));
        assertThat(coordinator.initProducerId("tx", TIMEOUT, p.producerId(), (short) 0).error()).isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.initProducerId("tx", TIMEOUT, p.producerId() + 7, (short) 2).error()).isEqualTo(TxnError.PRODUCER_FENCED);
        // A new id accepts any expected producer (it recovers from UNKNOWN_PRODUCER_ID) and starts at epoch 0.
        assertThat(coordinator.initProducerId("fresh", TIMEOUT, 42, (short) 9))
                .isEqualTo(new InitResult(TxnError.NONE, producerIds.get(), (short) 0));
    }

    @Test
    void anExhaustedEpochRotatesTheProducerIdAndAKip360RetryOfTheRotationIsAccepted() {
        InitResult p = init("tx");
        short nearlyExhausted = (short) (Short.MAX_VALUE - 2);
        new TransactionStore(dir, false).update("tx", txn -> {
            TransactionMetadata m = txn.current();
            txn.write(m.initialized(m.producerId(), nearlyExhausted, (short) -1, TIMEOUT, clock.millis()));
            return null;
        });
        InitResult last = init("tx");
        assertThat(last).isEqualTo(new InitResult(TxnError.NONE, p.producerId(), (short) (Short.MAX_VALUE - 1)));

        InitResult rotated = coordinator.initProducerId("tx", TIMEOUT, last.producerId(), last.producerEpoch());
        assertThat(rotated.error()).isEqualTo(TxnError.NONE);
        assertThat(rotated.producerId()).isNotEqualTo(p.producerId());
        assertThat(rotated.producerEpoch()).isZero();
        // The rotation's answer was lost: the retry with the old producer id and exhausted epoch gets it again.
        assertThat(coordinator.initProducerId("tx", TIMEOUT, last.producerId(), last.producerEpoch())).isEqualTo(rotated);
        assertThat(coordinator.addPartitions("tx", last.producerId(), last.producerEpoch(), List.of(T0)))
                .isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void fencingAnOngoingTransactionAtTheLastEpochRotatesTheProducerId() {
        InitResult p = init("tx");
        new TransactionStore(dir, false).update("tx", txn -> {
            TransactionMetadata m = txn.current();
            txn.write(m.initialized(m.producerId(), (short) (Short.MAX_VALUE - 1), (short) -1, TIMEOUT, clock.millis()));
            return null;
        });
        coordinator.addPartitions("tx", p.producerId(), (short) (Short.MAX_VALUE - 1), List.of(T0));

        InitResult next = init("tx");

        assertThat(participants.markers()).containsExactly(new Marker(p.producerId(), Short.MAX_VALUE, false, T0));
        assertThat(next.producerId()).isNotEqualTo(p.producerId());
        assertThat(next.producerEpoch()).isZero();
    }

    @Test
    void aTimedOutTransactionIsAbortedWithABumpedEpochThatFencesTheProducer() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        clock.advanceMillis(TIMEOUT);
        assertThat(coordinator.abortTimedOut()).as("not past its timeout yet").isZero();
        clock.advanceMillis(1);

        assertThat(coordinator.abortTimedOut()).isEqualTo(1);

        assertThat(participants.markers()).containsExactly(new Marker(p.producerId(), (short) 1, false, T0));
        TransactionDescription d = coordinator.describe("tx").orElseThrow();
        assertThat(d.state()).isEqualTo(TxnState.COMPLETE_ABORT);
        assertThat(d.producerEpoch()).isEqualTo((short) 1);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.PRODUCER_FENCED);
        assertThat(coordinator.abortTimedOut()).isZero();
        // The fenced producer's KIP-360 re-init is refused too: the fence left no last epoch to return to.
        assertThat(coordinator.initProducerId("tx", TIMEOUT, p.producerId(), p.producerEpoch()).error())
                .isEqualTo(TxnError.PRODUCER_FENCED);
    }

    @Test
    void replacedStatesAreKeptUntilReclaimedAndTheStateStaysWhole() throws java.io.IOException {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);
        // Written 4 times (init, add, prepare, complete): the 3 versions replaced are kept, none freed by a write.
        try (var kept = java.nio.file.Files.list(dir.resolve("replaced"))) {
            assertThat(kept.count()).isEqualTo(3);
        }

        assertThat(coordinator.reclaimReplaced()).isEqualTo(3);
        assertThat(coordinator.reclaimReplaced()).isZero();
        assertThat(state("tx")).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(coordinator.list(Set.of(), Set.of(), -1)).extracting(TransactionListing::transactionalId)
                .containsExactly("tx");
    }

    @Test
    void idleIdsExpireAndOngoingOnesDoNot() {
        coordinator = coordinator(new TransactionConfig(Duration.ofHours(2), Duration.ofHours(1)));
        InitResult idle = init("idle");
        InitResult busy = coordinator.initProducerId("busy", (int) Duration.ofHours(2).toMillis(), -1, (short) -1);
        coordinator.addPartitions("busy", busy.producerId(), busy.producerEpoch(), List.of(T0));
        InitResult done = init("done");
        coordinator.addPartitions("done", done.producerId(), done.producerEpoch(), List.of(T1));
        clock.advanceMillis(10);
        coordinator.endTxn("done", done.producerId(), done.producerEpoch(), true);

        clock.advance(Duration.ofHours(1).minusMillis(1)); // "idle" idle for 1 h, "done" 10 ms less
        assertThat(coordinator.expireIdle()).isEqualTo(1);
        assertThat(coordinator.describe("idle")).isEmpty();
        assertThat(coordinator.describe("busy")).isPresent();
        assertThat(coordinator.describe("done")).isPresent();
        clock.advanceMillis(1);
        assertThat(coordinator.expireIdle()).isEqualTo(1);
        assertThat(coordinator.describe("done")).isEmpty();
        assertThat(coordinator.describe("busy")).isPresent();

        // An expired id is unknown to its old producer and new to the next InitProducerId.
        assertThat(coordinator.addPartitions("idle", idle.producerId(), idle.producerEpoch(), List.of(T0)))
                .isEqualTo(TxnError.INVALID_PRODUCER_ID_MAPPING);
        assertThat(init("idle").producerId()).isNotEqualTo(idle.producerId());
    }

    @Test
    void listFiltersByStateProducerAndDuration() {
        InitResult a = init("a");
        InitResult b = init("b");
        coordinator.addPartitions("b", b.producerId(), b.producerEpoch(), List.of(T0));
        clock.advanceMillis(100);
        InitResult c = init("c");
        coordinator.addPartitions("c", c.producerId(), c.producerEpoch(), List.of(T0));
        clock.advanceMillis(10);

        assertThat(coordinator.list(Set.of(), Set.of(), -1)).extracting(TransactionListing::transactionalId)
                .containsExactlyInAnyOrder("a", "b", "c");
        assertThat(coordinator.list(Set.of(TxnState.ONGOING), Set.of(), -1)).extracting(TransactionListing::transactionalId)
                .containsExactlyInAnyOrder("b", "c");
        assertThat(coordinator.list(Set.of(), Set.of(a.producerId(), c.producerId()), -1))
                .containsExactlyInAnyOrder(new TransactionListing("a", a.producerId(), TxnState.EMPTY),
                        new TransactionListing("c", c.producerId(), TxnState.ONGOING));
        assertThat(coordinator.list(Set.of(TxnState.ONGOING), Set.of(), 50)).extracting(TransactionListing::transactionalId)
                .containsExactly("b");
    }

    @Test
    void aFailedMarkerWriteLeavesTheTransactionPreparedUntilARetryCompletesIt() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0, T1));
        participants.failOn(tp -> true);

        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        assertThat(state("tx")).isEqualTo(TxnState.PREPARE_COMMIT);
        assertThat(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0)))
                .isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        assertThat(coordinator.initProducerId("tx", TIMEOUT, -1, (short) -1).error()).isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), false)).isEqualTo(TxnError.INVALID_TXN_STATE);
        assertThat(coordinator.completePrepared()).isZero();

        participants.heal();
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);
        assertThat(state("tx")).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(participants.markers()).containsExactlyInAnyOrder(
                new Marker(p.producerId(), p.producerEpoch(), true, T0), new Marker(p.producerId(), p.producerEpoch(), true, T1));
    }

    @Test
    void aRequestOfTheSameProducerCompletesAPreparedTransactionBeforeItProceeds() {
        InitResult p = init("tx");
        coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
        coordinator.addOffsets("tx", p.producerId(), p.producerEpoch(), "g");
        coordinator.txnOffsetCommit("tx", "g", p.producerId(), p.producerEpoch(), Map.of(T0, new PendingOffset(3, "", 0)));
        participants.failOffsets(true);
        assertThat(coordinator.endTxn("tx", p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
        participants.heal();

        // The producer went on (Kafka's client would retry EndTxn; a new transaction must not mix with the old one).
        assertThat(coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T1))).isEqualTo(TxnError.NONE);

        assertThat(participants.offsetCommits()).containsExactly(new OffsetCommit("g", Map.of(T0, new PendingOffset(3, "", 0))));
        TransactionDescription d = coordinator.describe("tx").orElseThrow();
        assertThat(d.state()).isEqualTo(TxnState.ONGOING);
        assertThat(d.partitions()).containsExactly(T1);
        assertThat(d.groups()).isEmpty();
    }

    @Test
    void oneIdThatCannotBeLockedOrReadDoesNotStopThePeriodicTasksForTheOthers() throws Exception {
        String good = "good";
        String bad = "bad";
        assertThat(TransactionStore.hash(good).substring(0, 3)).isNotEqualTo(TransactionStore.hash(bad).substring(0, 3));
        for (String id : List.of(good, bad)) {
            InitResult p = init(id);
            coordinator.addPartitions(id, p.producerId(), p.producerEpoch(), List.of(T0));
        }
        // The bad id's lock file is a directory now: every locked access to it fails.
        Path lock = dir.resolve("locks").resolve(TransactionStore.hash(bad).substring(0, 3) + ".lock");
        Files.delete(lock);
        Files.createDirectory(lock);
        // And an unreadable state file sits next to them: listings skip it.
        Files.write(dir.resolve(TransactionStore.hash("garbage") + ".txn"), new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
        clock.advanceMillis(TIMEOUT + 1);

        assertThat(coordinator.abortTimedOut()).isEqualTo(1);

        assertThat(state(good)).isEqualTo(TxnState.COMPLETE_ABORT);
        assertThat(state(bad)).isEqualTo(TxnState.ONGOING);
        assertThat(coordinator.list(Set.of(), Set.of(), -1)).extracting(TransactionListing::transactionalId)
                .containsExactlyInAnyOrder(good, bad);
    }

    @Test
    void theStateFileRoundTrips() {
        TransactionMetadata m = new TransactionMetadata("id ✓", 7, 6, (short) 3, (short) 2, 1000, TxnState.PREPARE_COMMIT,
                11, 12, Set.of(T0, T1), Set.of("g", "h"),
                Map.of("g", Map.of(T0, new PendingOffset(4, "meta", 2)), "h", Map.of()), -1);
        assertThat(TransactionMetadataCodec.decode(TransactionMetadataCodec.encode(m))).isEqualTo(m);
        assertThat(TransactionMetadataCodec.encode(m)[4]).as("version 1 while no rotation is pending").isEqualTo((byte) 1);
        TransactionMetadata rotating = new TransactionMetadata("id", 7, 7, Short.MAX_VALUE, (short) (Short.MAX_VALUE - 1),
                1000, TxnState.PREPARE_COMMIT, 11, 12, Set.of(T0), Set.of(), Map.of(), 99);
        assertThat(TransactionMetadataCodec.decode(TransactionMetadataCodec.encode(rotating))).isEqualTo(rotating);
    }

    /**
     * EndTxn of transaction version 2 (KIP-890 part 2, {@link TransactionCoordinator#endTxnBumpingEpoch}): each
     * transaction ends at a new epoch that its markers carry and the answer returns, retries of an EndTxn are answered
     * again, an exhausted epoch continues under a new producer id, also across a completion that failed midway.
     */
    @Nested
    class Version2 {
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
        void withNoTransactionAnAbortEndsAnEmptyOneAndACommitIsRefusedOnceItsProducesCannotBeOnTheirWay() {
            InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
            clock.advance(Duration.ofMillis(60_000));
            assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true).error())
                    .isEqualTo(TxnError.INVALID_TXN_STATE);
            assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), false))
                    .isEqualTo(new EndTxnResult(TxnError.NONE, p.producerId(), (short) 1));
            assertThat(participants.markers()).isEmpty();
            assertThat(coordinator.describe("tx").orElseThrow().state()).isEqualTo(TxnState.COMPLETE_ABORT);
        }

        @Test
        void aCommitThatOvertookItsTransactionsProducesIsRetriedAndThenCommitsThem() {
            InitResult p = coordinator.initProducerId("tx", 60_000, -1, (short) -1);
            coordinator.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(T0));
            short next = coordinator.endTxnBumpingEpoch("tx", p.producerId(), p.producerEpoch(), true).producerEpoch();

            // kafka-clients' race: the next transaction's EndTxn arrives before its produce.
            clock.advance(Duration.ofMillis(59_999));
            assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), next, true).error())
                    .isEqualTo(TxnError.CONCURRENT_TRANSACTIONS);
            assertThat(state("tx")).isEqualTo(TxnState.COMPLETE_COMMIT);
            assertThat(participants.markers()).hasSize(1);
            assertThat(coordinator.addPartitions("tx", p.producerId(), next, List.of(T1))).isEqualTo(TxnError.NONE);

            assertThat(coordinator.endTxnBumpingEpoch("tx", p.producerId(), next, true))
                    .isEqualTo(new EndTxnResult(TxnError.NONE, p.producerId(), (short) (next + 1)));
            assertThat(participants.markers()).last()
                    .isEqualTo(new RecordingParticipants.Marker(p.producerId(), (short) (next + 1), true, T1));
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
}
