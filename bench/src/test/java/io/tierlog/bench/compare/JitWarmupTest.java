package io.tierlog.bench.compare;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JitWarmupTest {
    @Test
    void readsNamedCountersFromPerfCounterOutput() {
        String out = "12345:\njava.ci.totalTime=2500000000\nsun.ci.lastMethod=\"x\"\nsun.os.hrt.frequency=1000000000\n";
        assertEquals(2.5e9, JitWarmup.counter(out, "java.ci.totalTime"));
        assertEquals(1e9, JitWarmup.counter(out, "sun.os.hrt.frequency"));
        assertThrows(IllegalStateException.class, () -> JitWarmup.counter(out, "java.ci.missing"));
    }

    @Test
    void compileTimeOfARunningJvmIsPositiveAndNeverShrinks() throws Exception {
        long self = ProcessHandle.current().pid();
        double first = JitWarmup.compileSeconds(self);
        double second = JitWarmup.compileSeconds(self);
        assertTrue(first > 0, "this JVM has compiled something by now: " + first);
        assertTrue(second >= first, first + " then " + second);
    }

    @Test
    void runsAtLeastOneRoundAndStopsAtTheLimit() throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        JitWarmup.Outcome outcome = JitWarmup.untilQuiet(List.of(ProcessHandle.current().pid()), Duration.ZERO,
                round -> assertEquals(rounds.incrementAndGet(), round));
        assertEquals(1, outcome.rounds());
        assertEquals(1, rounds.get());
    }

    @Test
    void waitsForTheGivenNumberOfQuietRoundsInARow() throws Exception {
        // Rounds of a quarter second doing nothing: this JVM's compiler soon goes quiet in them.
        JitWarmup.Outcome outcome = JitWarmup.untilQuiet(List.of(ProcessHandle.current().pid()), Duration.ofSeconds(60),
                3, round -> Thread.sleep(250));
        assertTrue(outcome.quiet(), outcome.toString());
        assertTrue(outcome.rounds() >= 3, outcome.toString());
    }
}
