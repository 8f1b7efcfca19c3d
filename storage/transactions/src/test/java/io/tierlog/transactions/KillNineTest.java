package io.tierlog.transactions;

import io.tierlog.testkit.JavaProcess;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A process committing transactions in a loop ({@link CommitLoopMain}) is killed with SIGKILL at some point; a new
 * coordinator on the directory finds the transaction in flight complete, prepared (and completes it with the same
 * outcome) or ongoing (and aborts it once timed out), and every acknowledged commit has its commit marker and its
 * offset, none an abort marker. Two kills at two points of the loop, one for certain between two markers.
 */
@Tag("slow")
class KillNineTest {
    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedCommitSurvivesAKillAndATransactionInFlightIsCompletedOrAborted() throws Exception {
        killRuns(false, new int[]{20, 33, 46});
    }

    /**
     * The same under transaction protocol 2, from an epoch about to run out: the third run is killed between the two
     * markers of the commit that moves the producer id to a new one, which the survivor completes onto a new id.
     */
    @Test
    void protocol2CommitsSurviveAKillAlsoWhileTheProducerIdRotates() throws Exception {
        killRuns(true, new int[]{3, 11, CommitLoopMain.EPOCHS_BEFORE_ROTATION - 1});
    }

    /** Run {@code i} is killed once {@code targets[i]} commits are acknowledged; the last run hangs at that commit. */
    private void killRuns(boolean v2, int[] targets) throws Exception {
        for (int run = 0; run < targets.length; run++) {
            Path state = dir.resolve("state-" + run);
            Path effects = dir.resolve("effects-" + run);
            Path audit = dir.resolve("audit-" + run);
            Path log = dir.resolve("child-" + run + ".log");
            Files.createFile(audit);
            Files.createFile(effects);
            boolean hang = run == targets.length - 1;
            int target = targets[run]; // a different point in the loop each run
            Process child = JavaProcess.startLogged(CommitLoopMain.class, log, state.toString(), effects.toString(),
                    audit.toString(), Integer.toString(hang ? target : -1), v2 ? "v2" : "v1");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // Random runs: killed once target commits are acknowledged. Hanging run: once t-<target>'s marker is out.
            while (!(hang ? Files.readString(effects).contains(" t-" + target + "\n")
                    : Files.readAllLines(audit).size() >= target) && child.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(5); // polling another process's progress: no latch crosses processes
            }
            assertThat(child.isAlive()).as("child still committing; log %s", log).isTrue();
            child.destroyForcibly().waitFor(); // SIGKILL

            // Two minutes on: past the child's 60 s transaction timeout.
            ManualClock later = new ManualClock(Instant.now().plus(Duration.ofMinutes(2)));
            TransactionCoordinator survivor = new TransactionCoordinator(state, false, later, System::nanoTime,
                    new FileParticipants(effects), TransactionConfig.DEFAULTS);
            TxnState found = survivor.describe("tx").orElseThrow().state();
            int acked = Files.readAllLines(audit).size();
            String inFlight = Integer.toString(acked); // the first unacknowledged transaction's number
            assertThat(survivor.completePrepared()).isEqualTo(found.isPrepared() ? 1 : 0);
            assertThat(survivor.abortTimedOut()).isEqualTo(found == TxnState.ONGOING ? 1 : 0);
            TxnState after = survivor.describe("tx").orElseThrow().state();

            Set<String> committed = new HashSet<>();
            Set<String> aborted = new HashSet<>();
            Set<String> offsets = new HashSet<>();
            for (String line : Files.readAllLines(effects)) {
                String[] f = line.split(" ");
                if (f[0].equals("M")) {
                    (f[3].equals("C") ? committed : aborted).add(f[4]);
                } else {
                    offsets.add(f[3]);
                }
            }
            for (int n = 0; n < acked; n++) {
                assertThat(committed).as("run %d: commit markers of acknowledged txn %d", run, n).contains("t-" + n, "u-" + n);
                assertThat(offsets).as("run %d: offset of acknowledged txn %d", run, n).contains(Integer.toString(n));
            }
            switch (found) {
                case PREPARE_COMMIT -> {
                    assertThat(after).isEqualTo(TxnState.COMPLETE_COMMIT);
                    assertThat(committed).contains("t-" + inFlight, "u-" + inFlight);
                    assertThat(offsets).contains(inFlight);
                }
                case ONGOING -> {
                    assertThat(after).isEqualTo(TxnState.COMPLETE_ABORT);
                    assertThat(committed).doesNotContain("t-" + inFlight, "u-" + inFlight);
                    assertThat(offsets).doesNotContain(inFlight);
                }
                case COMPLETE_COMMIT -> assertThat(after).isEqualTo(TxnState.COMPLETE_COMMIT);
                default -> throw new AssertionError("run " + run + ": unexpected state " + found);
            }
            assertThat(aborted).as("run %d: only the ongoing txn in flight may be aborted", run)
                    .isSubsetOf(found == TxnState.ONGOING ? Set.of("t-" + inFlight, "u-" + inFlight) : Set.of());
            if (hang) {
                assertThat(found).as("killed between two markers").isEqualTo(TxnState.PREPARE_COMMIT);
            }
            if (v2 && hang) {
                // The rotating commit: its markers at the last epoch under the first id, the id then a new one.
                assertThat(Files.readAllLines(effects)).contains("M " + survivorFirstId(effects) + " "
                        + Short.MAX_VALUE + " C t-" + target, "M " + survivorFirstId(effects) + " " + Short.MAX_VALUE
                        + " C u-" + target);
                TransactionDescription d = survivor.describe("tx").orElseThrow();
                assertThat(d.producerId()).as("a new producer id").isNotEqualTo(survivorFirstId(effects));
                assertThat(d.producerEpoch()).isZero();
            }
            System.out.printf("run %d: killed after %d acknowledged commits, found %s%n", run, acked, found);
        }
    }

    /** The producer id of the first marker written: the id the child initialized. */
    private static long survivorFirstId(Path effects) throws java.io.IOException {
        String first = Files.readAllLines(effects).stream().filter(l -> l.startsWith("M ")).findFirst().orElseThrow();
        return Long.parseLong(first.split(" ")[1]);
    }
}
