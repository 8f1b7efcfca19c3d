package io.tierlog.bench.kafkaperf;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Two stand-in servers ({@code sleep} processes): the one not measured is stopped until the run ends. */
@EnabledOnOs(OS.LINUX)
class PausedServersTest {
    private Process measured;
    private Process other;

    @BeforeEach
    void start() throws Exception {
        measured = new ProcessBuilder("sleep", "60").start();
        other = new ProcessBuilder("sleep", "60").start();
    }

    @AfterEach
    void stop() {
        measured.destroyForcibly();
        other.destroyForcibly();
    }

    @Test
    void theOthersAreStoppedForTheRunAndContinuedAfter() throws Exception {
        try (PausedServers paused = PausedServers.allBut(measured.pid(), List.of(measured.pid(), other.pid()))) {
            assertThat(awaitState(other.pid(), true)).as("the other server during the run").isEqualTo('T');
            assertThat(awaitState(measured.pid(), false)).as("the measured server").isNotEqualTo('T');
        }
        assertThat(awaitState(other.pid(), false)).as("the other server after the run").isNotEqualTo('T');
    }

    @Test
    void aServerThatHasEndedLeavesNoOtherStopped() throws Exception {
        Process ended = new ProcessBuilder("true").start();
        ended.waitFor();
        assertThatThrownBy(() -> PausedServers.allBut(measured.pid(), List.of(measured.pid(), other.pid(),
                ended.pid()))).isInstanceOf(IllegalStateException.class);
        assertThat(awaitState(other.pid(), false)).as("the other server after the failed stop").isNotEqualTo('T');
    }

    /** The state once it is (or is not) stopped, or after 5 s: a signal takes effect after kill(1) returns. */
    private static char awaitState(long pid, boolean stopped) throws Exception {
        long deadline = System.nanoTime() + 5_000_000_000L;
        char state = state(pid);
        while ((state == 'T') != stopped && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            state = state(pid);
        }
        return state;
    }

    /** The process state letter of /proc/PID/stat (after the command name in parentheses). */
    private static char state(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }
}
