package io.tierlog.transactions;

import io.tierlog.testkit.JavaProcess;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two service instances in two JVMs, where only the cross-process file lock keeps them apart, race AddPartitions and
 * EndTxn on one transactional id ({@link RaceMain}): every partition either added is committed, and exactly once.
 */
@Tag("slow")
class TwoProcessesTest {
    @TempDir
    Path dir;

    @Test
    void racingInstancesInTwoProcessesLoseNoPartitionAndCommitEachOnce() throws Exception {
        Path state = dir.resolve("state");
        Path effects = dir.resolve("effects");
        Files.createFile(effects);
        InitResult p = new TransactionCoordinator(state, false, new ManualClock(), () -> 77, new FileParticipants(effects),
                TransactionConfig.DEFAULTS).initProducerId("tx", 60_000, -1, (short) -1);
        int rounds = 300;
        Process a = JavaProcess.startLogged(RaceMain.class, dir.resolve("a.log"), state.toString(), effects.toString(),
                Long.toString(p.producerId()), Short.toString(p.producerEpoch()), "a", Integer.toString(rounds));
        Process b = JavaProcess.startLogged(RaceMain.class, dir.resolve("b.log"), state.toString(), effects.toString(),
                Long.toString(p.producerId()), Short.toString(p.producerEpoch()), "b", Integer.toString(rounds));
        JavaProcess.awaitSuccess(a, 120, dir.resolve("a.log"));
        JavaProcess.awaitSuccess(b, 120, dir.resolve("b.log"));

        Map<String, Integer> commitMarkers = new HashMap<>();
        for (String line : Files.readAllLines(effects)) {
            String[] f = line.split(" ");
            assertThat(f[3]).as(line).isEqualTo("C");
            commitMarkers.merge(f[4], 1, Integer::sum);
        }
        for (String topic : new String[]{"a", "b"}) {
            for (int round = 0; round < rounds; round++) {
                assertThat(commitMarkers.get(topic + "-" + round)).as("commit markers of %s-%d", topic, round).isEqualTo(1);
            }
        }
    }
}
