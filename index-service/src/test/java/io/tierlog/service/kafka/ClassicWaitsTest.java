package io.tierlog.service.kafka;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Waiting classic-group requests: a change made elsewhere (another instance, no poke) is found by the periodic
 * question, a poke asks at once, an error ends the wait, and a finished wait leaves nothing scheduled.
 */
class ClassicWaitsTest {
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final ExecutorService workers = Executors.newFixedThreadPool(2);

    @AfterEach
    void tearDown() {
        timers.shutdownNow();
        workers.shutdownNow();
    }

    @Test
    void aChangeNobodyPokesAboutIsFoundByThePeriodicQuestion() throws Exception {
        ClassicWaits waits = new ClassicWaits(timers, 20);
        AtomicReference<String> state = new AtomicReference<>();
        AtomicInteger asked = new AtomicInteger();
        CompletableFuture<String> answer = waits.await("g", workers, () -> {
            asked.incrementAndGet();
            return state.get();
        });
        assertThat(answer).isNotDone();
        state.set("closed elsewhere");
        assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("closed elsewhere");
        assertThat(waits.waiting()).isZero();
        int after = asked.get();
        Thread.sleep(100); // a few periods: nothing asks a finished wait again
        assertThat(asked.get()).isEqualTo(after);
    }

    @Test
    void aPokeAsksAtOnceAndOnlyTheGroupsWaits() throws Exception {
        ClassicWaits waits = new ClassicWaits(timers, 60_000);
        AtomicReference<String> g = new AtomicReference<>();
        AtomicReference<String> h = new AtomicReference<>();
        CountDownLatch firstAsks = new CountDownLatch(2);
        CompletableFuture<String> inG = waits.await("g", workers, () -> {
            String now = g.get();
            firstAsks.countDown();
            return now;
        });
        CompletableFuture<String> inH = waits.await("h", workers, () -> {
            String now = h.get();
            firstAsks.countDown();
            return now;
        });
        assertThat(firstAsks.await(10, TimeUnit.SECONDS)).as("each asked once on arrival").isTrue();
        g.set("g closed");
        h.set("h closed");
        waits.poke("g");
        assertThat(inG.get(10, TimeUnit.SECONDS)).isEqualTo("g closed");
        assertThat(inH).as("h was not poked and its period is a minute").isNotDone();
        assertThat(waits.waiting()).isEqualTo(1);
        waits.poke("h");
        assertThat(inH.get(10, TimeUnit.SECONDS)).isEqualTo("h closed");
    }

    @Test
    void aFailingQuestionEndsTheWaitWithItsError() {
        ClassicWaits waits = new ClassicWaits(timers, 20);
        CompletableFuture<String> answer = waits.await("g", workers, () -> {
            throw new IllegalStateException("state file unreadable");
        });
        assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseMessage("state file unreadable");
        assertThat(waits.waiting()).isZero();
    }
}
