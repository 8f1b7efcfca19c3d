package io.tierlog.bench.kafkaperf;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The servers not being measured, stopped ({@code SIGSTOP}) for the length of a measured tool run and continued
 * ({@code SIGCONT}) after it, so that each server's runs share the 2 cores with nothing but their client (ADR 0074,
 * ADR 0080): the servers' idle work differs (Kafka's combined broker and controller about three times a service's)
 * and belongs to no other server's row. A run lasts up to about 10 s (17 s seen under heavy CPU steal):
 * {@code kafka-perf} gives its broker a 30 s session so that it is not fenced on the way back.
 */
final class PausedServers implements AutoCloseable {
    private final List<Long> pids;

    private PausedServers(List<Long> pids) {
        this.pids = pids;
    }

    /**
     * Stops every process of {@code all} but {@code measured}; {@link #close} continues them. If one cannot be stopped
     * (it has ended), none is left stopped and this throws.
     */
    static PausedServers allBut(long measured, List<Long> all) {
        List<Long> others = new ArrayList<>();
        for (long pid : all) {
            if (pid != measured) {
                others.add(pid);
            }
        }
        try {
            signal("-STOP", others);
        } catch (RuntimeException e) {
            // kill(1) signals every process it can before failing on one that is gone: continue those it stopped.
            try {
                signal("-CONT", others);
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return new PausedServers(others);
    }

    @Override
    public void close() {
        signal("-CONT", pids);
    }

    private static void signal(String signal, List<Long> pids) {
        if (pids.isEmpty()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of("kill", signal));
        pids.forEach(p -> command.add(Long.toString(p)));
        try {
            Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + signal + " " + pids + " failed: "
                        + new String(kill.getInputStream().readAllBytes()).strip());
            }
        } catch (IOException e) {
            throw new IllegalStateException("kill " + signal + " " + pids + " could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending " + signal + " to " + pids, e);
        }
    }
}
