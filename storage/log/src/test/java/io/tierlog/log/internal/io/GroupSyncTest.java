package io.tierlog.log.internal.io;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class GroupSyncTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @Test
    void appendsWrittenDuringAForceShareTheNextOne() throws Exception {
        CountDownLatch firstForceStarted = new CountDownLatch(1);
        CountDownLatch releaseFirstForce = new CountDownLatch(1);
        AtomicInteger forces = new AtomicInteger();
        GroupSync sync = new GroupSync(() -> {
            if (forces.incrementAndGet() == 1) {
                firstForceStarted.countDown();
                await(releaseFirstForce);
            }
        });

        sync.wrote(100);
        CompletableFuture<Void> first = run(() -> sync.awaitDurable(100));
        assertThat(firstForceStarted.await(10, TimeUnit.SECONDS)).isTrue();
        // Written while the first force runs: it began before them, so it cannot cover them.
        List<CompletableFuture<Void>> later = new ArrayList<>();
        for (long end = 200; end <= 500; end += 100) {
            sync.wrote(end);
            long e = end;
            later.add(run(() -> sync.awaitDurable(e)));
        }
        Thread.sleep(50); // give a wrong implementation the chance to let them through early
        assertThat(later).noneMatch(CompletableFuture::isDone);
        assertThat(first).isNotDone();

        releaseFirstForce.countDown();
        first.get(10, TimeUnit.SECONDS);
        for (CompletableFuture<Void> f : later) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertThat(forces.get()).as("one force for the first append, one for the four written during it").isEqualTo(2);
        assertThat(sync.forces()).isEqualTo(2);

        // Covered already: no new force.
        sync.awaitDurable(300);
        assertThat(forces.get()).isEqualTo(2);
    }

    @Test
    void everyWaiterReturnsOnlyAfterAForceThatBeganAfterItsWrite() throws Exception {
        AtomicLong written = new AtomicLong();
        AtomicLong durableSoFar = new AtomicLong();
        // The stand-in file: a force makes durable whatever was written when it began.
        GroupSync sync = new GroupSync(() -> {
            long at = written.get();
            Thread.yield();
            durableSoFar.accumulateAndGet(at, Math::max);
        });
        AtomicLong violations = new AtomicLong();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            writers.add(run(() -> {
                for (int i = 0; i < 500; i++) {
                    long end;
                    synchronized (written) {
                        end = written.addAndGet(10);
                        sync.wrote(end);
                    }
                    sync.awaitDurable(end);
                    if (durableSoFar.get() < end) {
                        violations.incrementAndGet();
                    }
                }
            }));
        }
        for (CompletableFuture<Void> w : writers) {
            w.get(20, TimeUnit.SECONDS);
        }
        assertThat(violations.get()).isZero();
        assertThat(sync.forces()).isLessThanOrEqualTo(8 * 500).isPositive();
    }

    @Test
    void aFailedForceFailsItsRunnerAndTheWaitersTryAgain() throws Exception {
        CountDownLatch failingForceStarted = new CountDownLatch(1);
        CountDownLatch fail = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        GroupSync sync = new GroupSync(() -> {
            if (calls.incrementAndGet() == 1) {
                failingForceStarted.countDown();
                await(fail);
                throw new IOException("disk gone");
            }
        });
        sync.wrote(10);
        CompletableFuture<Void> runner = run(() -> sync.awaitDurable(10));
        assertThat(failingForceStarted.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> waiter = run(() -> sync.awaitDurable(10));
        fail.countDown();

        assertThatThrownBy(() -> runner.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("disk gone");
        waiter.get(10, TimeUnit.SECONDS);
        assertThat(calls.get()).isEqualTo(2);
        assertThat(sync.forces()).isEqualTo(1);
    }

    private CompletableFuture<Void> run(IoAction action) {
        return CompletableFuture.runAsync(() -> {
            try {
                action.run();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, pool);
    }

    private static void await(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new IOException("latch not released");
            }
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }
}
