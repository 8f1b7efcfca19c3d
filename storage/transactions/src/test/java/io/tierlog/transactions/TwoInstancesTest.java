package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

import static io.tierlog.transactions.RecordingParticipants.Marker;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two coordinators on one directory, as two service instances on the hot volume: each sees what the other wrote,
 * and racing requests for one id neither lose an update nor complete a transaction twice.
 */
class TwoInstancesTest {
    static final int TIMEOUT = 60_000;

    @TempDir
    Path dir;

    final ManualClock clock = new ManualClock();
    final AtomicLong producerIds = new AtomicLong();
    final RecordingParticipants participants = new RecordingParticipants();
    TransactionCoordinator a;
    TransactionCoordinator b;

    @BeforeEach
    void twoInstances() {
        a = instance();
        b = instance();
    }

    TransactionCoordinator instance() {
        return new TransactionCoordinator(dir, false, clock, producerIds::incrementAndGet, participants,
                TransactionConfig.DEFAULTS);
    }

    /**
     * A produce in its transaction and that transaction's EndTxn on two instances. The produce checks its transaction
     * holding the partition's lock until its batch is in; the markers take that lock after the prepared state is
     * written (modelled here by one lock the marker write takes), so they come after the batch.
     */
    @Test
    void aBatchCheckedUnderThePartitionLockLandsBeforeItsMarkers() throws Exception {
        TopicPartition t0 = new TopicPartition("t", 0);
        InitResult p = transactionOn(t0);
        ReentrantLock partitionLock = new ReentrantLock();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch prepared = new CountDownLatch(1);
        markersTake(partitionLock, prepared, () -> order.add("markers"));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        partitionLock.lock();
        try {
            a.requireInTransaction("tx", p.producerId(), p.producerEpoch(), t0);
            Future<TxnError> end = pool.submit(() -> b.endTxn("tx", p.producerId(), p.producerEpoch(), true));
            assertThat(prepared.await(10, TimeUnit.SECONDS)).as("the EndTxn is not held back by the check").isTrue();
            order.add("batch");
            partitionLock.unlock();
            assertThat(end.get(10, TimeUnit.SECONDS)).isEqualTo(TxnError.NONE);
        } finally {
            releaseAndStop(partitionLock, pool);
        }
        assertThat(order).containsExactly("batch", "markers");
        assertThat(Appends.allowed(a, "tx", p.producerId(), p.producerEpoch(), t0)).as("ended").isFalse();
    }

    /** A check between the prepared state's write and the markers (waiting for the partition's lock) refuses. */
    @Test
    void aCheckAfterTheTransactionIsPreparedRefuses() throws Exception {
        TopicPartition t0 = new TopicPartition("t", 0);
        InitResult p = transactionOn(t0);
        ReentrantLock partitionLock = new ReentrantLock();
        CountDownLatch prepared = new CountDownLatch(1);
        markersTake(partitionLock, prepared, () -> { });
        ExecutorService pool = Executors.newSingleThreadExecutor();
        partitionLock.lock();
        try {
            Future<TxnError> end = pool.submit(() -> b.endTxn("tx", p.producerId(), p.producerEpoch(), false));
            assertThat(prepared.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(Appends.allowed(a, "tx", p.producerId(), p.producerEpoch(), t0))
                    .as("the transaction is ending: a batch now would land behind its marker").isFalse();
            partitionLock.unlock();
            assertThat(end.get(10, TimeUnit.SECONDS)).isEqualTo(TxnError.NONE);
        } finally {
            releaseAndStop(partitionLock, pool);
        }
    }

    /** Producer "tx" initialized on instance a, its transaction holding {@code tp}. */
    private InitResult transactionOn(TopicPartition tp) {
        InitResult p = a.initProducerId("tx", TIMEOUT, -1, (short) -1);
        assertThat(a.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(tp))).isEqualTo(TxnError.NONE);
        return p;
    }

    /**
     * The marker write, after the prepared state is written, counts {@code prepared} down and takes
     * {@code partitionLock} (as a marker append takes the partition's), running {@code underIt} while holding it.
     */
    private void markersTake(ReentrantLock partitionLock, CountDownLatch prepared, Runnable underIt) {
        participants.beforeMarkers(() -> {
            prepared.countDown();
            partitionLock.lock();
            try {
                underIt.run();
            } finally {
                partitionLock.unlock();
            }
        });
    }

    private static void releaseAndStop(ReentrantLock partitionLock, ExecutorService pool) {
        if (partitionLock.isHeldByCurrentThread()) {
            partitionLock.unlock();
        }
        pool.shutdownNow();
    }

    @Test
    void requestsForOneIdMayAlternateBetweenInstances() {
        TopicPartition t0 = new TopicPartition("t", 0);
        InitResult first = a.initProducerId("tx", TIMEOUT, -1, (short) -1);
        InitResult second = b.initProducerId("tx", TIMEOUT, -1, (short) -1);
        assertThat(second.producerEpoch()).isEqualTo((short) 1);
        // Instance a must not answer from what it knew: the first producer is fenced.
        assertThat(a.addPartitions("tx", first.producerId(), first.producerEpoch(), List.of(t0))).isEqualTo(TxnError.PRODUCER_FENCED);

        assertThat(a.addPartitions("tx", second.producerId(), second.producerEpoch(), List.of(t0))).isEqualTo(TxnError.NONE);
        assertThat(b.addOffsets("tx", second.producerId(), second.producerEpoch(), "g")).isEqualTo(TxnError.NONE);
        assertThat(a.txnOffsetCommit("tx", "g", second.producerId(), second.producerEpoch(),
                Map.of(t0, new PendingOffset(9, "", 0)))).isEqualTo(TxnError.NONE);
        assertThat(Appends.allowed(b, "tx", second.producerId(), second.producerEpoch(), t0)).isTrue();
        assertThat(b.endTxn("tx", second.producerId(), second.producerEpoch(), true)).isEqualTo(TxnError.NONE);
        assertThat(a.endTxn("tx", second.producerId(), second.producerEpoch(), true)).as("a retry on the other instance")
                .isEqualTo(TxnError.NONE);

        assertThat(a.describe("tx").orElseThrow().state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(participants.markers()).containsExactly(new Marker(second.producerId(), second.producerEpoch(), true, t0));
        assertThat(participants.offsetCommits()).hasSize(1);
    }

    @Test
    void partitionsAddedConcurrentlyThroughBothInstancesAreAllKept() throws Exception {
        InitResult p = a.initProducerId("tx", TIMEOUT, -1, (short) -1);
        int perInstance = 40;
        run(instanceIndex -> () -> {
            TransactionCoordinator c = instanceIndex == 0 ? a : b;
            for (int i = 0; i < perInstance; i++) {
                TopicPartition tp = new TopicPartition("t", instanceIndex * perInstance + i);
                assertThat(c.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(tp))).isEqualTo(TxnError.NONE);
            }
            return null;
        });
        assertThat(a.describe("tx").orElseThrow().partitions()).hasSize(2 * perInstance);
    }

    @Test
    void racingEndTxnWritesEachTransactionsMarkersOnce() throws Exception {
        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        InitResult p = a.initProducerId("tx", TIMEOUT, -1, (short) -1);
        int rounds = 150;
        int committedRounds = 0;
        for (int round = 0; round < rounds; round++) {
            assertThat(a.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(t0, t1))).isEqualTo(TxnError.NONE);
            // Odd rounds race a commit against an abort: exactly one wins, the other is refused.
            boolean mixed = round % 2 == 1;
            List<TxnError> answers = run(i -> () -> (i == 0 ? a : b).endTxn("tx", p.producerId(), p.producerEpoch(),
                    !mixed || i == 0));
            if (mixed) {
                assertThat(answers).containsExactlyInAnyOrder(TxnError.NONE, TxnError.INVALID_TXN_STATE);
            } else {
                assertThat(answers).containsOnly(TxnError.NONE);
            }
            TxnState state = b.describe("tx").orElseThrow().state();
            committedRounds += state == TxnState.COMPLETE_COMMIT ? 1 : 0;
            assertThat(participants.markers()).as("round %d", round).hasSize(2 * (round + 1));
            assertThat(participants.markers().subList(2 * round, 2 * round + 2)).extracting(Marker::commit)
                    .containsOnly(state == TxnState.COMPLETE_COMMIT);
        }
        assertThat(participants.markers().stream().filter(Marker::commit).count()).isEqualTo(2L * committedRounds);
    }

    @Test
    void aTimeoutAbortRechecksUnderTheLockWhatItsScanSaw() {
        // Two ids of different lock stripes, so one may be ended while the other's lock is held on this thread.
        assertThat(TransactionStore.hash("x").substring(0, 3)).isNotEqualTo(TransactionStore.hash("y").substring(0, 3));
        TopicPartition t0 = new TopicPartition("t", 0);
        InitResult x = a.initProducerId("x", 1_000, -1, (short) -1);
        InitResult y = a.initProducerId("y", 1_000, -1, (short) -1);
        a.addPartitions("x", x.producerId(), x.producerEpoch(), List.of(t0));
        a.addPartitions("y", y.producerId(), y.producerEpoch(), List.of(t0));
        clock.advanceMillis(1_001);
        // While a aborts the first id its scan found, the other id's producer commits through instance c.
        RecordingParticipants other = new RecordingParticipants();
        TransactionCoordinator c = new TransactionCoordinator(dir, false, clock, producerIds::incrementAndGet, other,
                TransactionConfig.DEFAULTS);
        AtomicBoolean first = new AtomicBoolean(true);
        AtomicReference<String> committed = new AtomicReference<>();
        participants.beforeMarkers(() -> {
            if (first.getAndSet(false)) {
                boolean xIsBeingAborted = a.describe("x").orElseThrow().state() == TxnState.PREPARE_ABORT;
                InitResult p = xIsBeingAborted ? y : x;
                committed.set(xIsBeingAborted ? "y" : "x");
                assertThat(c.endTxn(committed.get(), p.producerId(), p.producerEpoch(), true)).isEqualTo(TxnError.NONE);
            }
        });

        assertThat(a.abortTimedOut()).isEqualTo(1);

        TransactionDescription d = a.describe(committed.get()).orElseThrow();
        assertThat(d.state()).isEqualTo(TxnState.COMPLETE_COMMIT);
        assertThat(d.producerEpoch()).as("not fenced").isZero();
        assertThat(participants.markers()).extracting(Marker::commit).containsExactly(false);
    }

    /** Runs task(0) and task(1) on two threads released together; returns their results. */
    private static <T> List<T> run(IntFunction<Callable<T>> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Callable<T> c = task.apply(i);
                futures.add(pool.submit(() -> {
                    start.await();
                    return c.call();
                }));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
