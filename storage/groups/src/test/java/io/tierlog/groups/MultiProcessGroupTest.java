package io.tierlog.groups;

import io.tierlog.testkit.JavaProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Consumer processes share a 12-partition topic through one directory, each with its own coordinator (so each is
 * also an instance of the service): 3 get 4 each; one is killed with SIGKILL (possibly while it holds the group's
 * lock) and its partitions move within the session timeout, resuming from its committed offsets; a 4th joins and
 * only the partitions it gets move. From every process's log of what it owned when: no partition ever had two
 * owners; every record was processed, and only records after the dead member's last commit were processed twice.
 */
class MultiProcessGroupTest {
    static final long SESSION_MS = 3_000;

    @TempDir
    Path dir;

    @Test
    void consumersShareATopicSurviveAKillAndRebalanceOnJoin() throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(data.resolve("commits"));
        GroupCoordinator observer = new GroupCoordinator(new GroupStateStore(data), t -> ConsumerMain.PARTITIONS,
                Clock.systemUTC(), Duration.ofMillis(200));
        List<Process> processes = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                start(data, i, processes, logs);
            }
            Map<String, Set<Integer>> three = awaitStable(observer, 3, 60);
            three.values().forEach(ps -> assertThat(ps).hasSize(4));

            // Kill -9 the member that owns partition 0, mid-way through the records.
            awaitCommitted(data, ps -> ps >= 10, 60);
            String victimId = three.entrySet().stream().filter(e -> e.getValue().contains(0)).findFirst().orElseThrow().getKey();
            int victim = indexOf(observer, victimId);
            Set<Integer> victimPartitions = three.get(victimId);
            processes.get(victim).destroyForcibly().waitFor();
            long killedMicros = ConsumerMain.micros();
            long killed = System.nanoTime();
            Map<String, Set<Integer>> two = awaitStable(observer, 2, 60);
            long movedMs = (System.nanoTime() - killed) / 1_000_000;
            System.out.println("partitions of the killed consumer moved " + movedMs + " ms after SIGKILL");
            two.values().forEach(ps -> assertThat(ps).hasSize(6));
            assertThat(movedMs).as("partitions moved within the session timeout (+ skew margin + a heartbeat)")
                    .isLessThan(SESSION_MS + 200 + 2_000);
            three.forEach((id, ps) -> {
                if (!id.equals(victimId)) {
                    assertThat(two.get(id)).as("survivors keep theirs").containsAll(ps);
                }
            });

            // A 4th joins: only the partitions it gets move.
            start(data, 3, processes, logs);
            Map<String, Set<Integer>> again = awaitStable(observer, 3, 60);
            again.values().forEach(ps -> assertThat(ps).hasSize(4));
            two.forEach((id, ps) -> assertThat(ps).containsAll(again.get(id)));

            awaitCommitted(data, ps -> ps >= ConsumerMain.RECORDS, 120);
            for (int i = 0; i < processes.size(); i++) {
                if (i != victim) {
                    processes.get(i).getOutputStream().close();
                    JavaProcess.awaitSuccess(processes.get(i), 30, logs.get(i));
                }
            }
            audit(logs, victim, killedMicros, victimPartitions);
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    private void start(Path data, int i, List<Process> processes, List<Path> logs) {
        Path log = dir.resolve("consumer-" + i + ".log");
        Path stderr = dir.resolve("consumer-" + i + ".err");
        logs.add(log);
        processes.add(JavaProcess.startLogged(ConsumerMain.class, stderr, data.toString(), "c" + i,
                Long.toString(SESSION_MS), log.toString()));
    }

    private static int indexOf(GroupCoordinator observer, String memberId) {
        String clientId = observer.describe(ConsumerMain.GROUP).orElseThrow().members().stream()
                .filter(m -> m.memberId().equals(memberId)).findFirst().orElseThrow().clientId();
        return Integer.parseInt(clientId.substring(1));
    }

    /** Waits for {@code members} members, stable; returns member id → partitions. */
    private static Map<String, Set<Integer>> awaitStable(GroupCoordinator observer, int members, int seconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        GroupDescription d = null;
        while (System.nanoTime() < deadline) {
            d = observer.describe(ConsumerMain.GROUP).orElse(null);
            if (d != null && d.members().size() == members && d.state() == GroupDescription.State.STABLE) {
                Map<String, Set<Integer>> out = new HashMap<>();
                d.members().forEach(m -> {
                    Set<Integer> ps = new TreeSet<>();
                    m.assignment().forEach(tps -> ps.addAll(tps.partitions()));
                    out.put(m.memberId(), ps);
                });
                return out;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no stable group of " + members + " in " + seconds + " s: " + d);
    }

    private static void awaitCommitted(Path data, Predicate<Long> done, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            boolean all = true;
            for (int p = 0; p < ConsumerMain.PARTITIONS && all; p++) {
                all = done.test(ConsumerMain.committed(data, p));
            }
            if (all) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("commits did not reach the goal in " + seconds + " s");
    }

    private record Interval(int consumer, long from, long to) {
    }

    private static void audit(List<Path> logs, int victim, long killedMicros, Set<Integer> victimPartitions)
            throws Exception {
        Map<Integer, List<Interval>> owned = new HashMap<>();
        Map<Long, Integer> processed = new HashMap<>(); // p * 1e6 + offset → times
        Map<Integer, Long> victimLastCommit = new HashMap<>();
        Map<Long, Boolean> byVictim = new HashMap<>();
        Map<Long, Integer> commits = new HashMap<>(); // p * 1e6 + offset → commits of offset + 1
        Set<Long> refused = new java.util.HashSet<>(); // records some member processed and could not commit
        for (int c = 0; c < logs.size(); c++) {
            Map<Integer, Long> open = new HashMap<>();
            for (String line : Files.readAllLines(logs.get(c))) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "G" -> assertThat(open.put(Integer.parseInt(f[1]), Long.parseLong(f[2]))).isNull();
                    case "R" -> {
                        Long from = open.remove(Integer.parseInt(f[1]));
                        assertThat(from).isNotNull();
                        owned.computeIfAbsent(Integer.parseInt(f[1]), k -> new ArrayList<>())
                                .add(new Interval(c, from, Long.parseLong(f[2])));
                    }
                    case "P" -> {
                        long key = Long.parseLong(f[1]) * 1_000_000 + Long.parseLong(f[2]);
                        processed.merge(key, 1, Integer::sum);
                        if (c == victim) {
                            byVictim.put(key, true);
                        }
                    }
                    case "F" -> refused.add(Long.parseLong(f[1]) * 1_000_000 + Long.parseLong(f[2]));
                    case "C" -> {
                        commits.merge(Long.parseLong(f[1]) * 1_000_000 + Long.parseLong(f[2]) - 1, 1, Integer::sum);
                        if (c == victim) {
                            victimLastCommit.put(Integer.parseInt(f[1]), Long.parseLong(f[2]));
                        }
                    }
                    default -> {
                    }
                }
            }
            int consumer = c;
            assertThat(c == victim || open.isEmpty()).as("consumer %d released everything on exit", c).isTrue();
            open.forEach((p, from) -> owned.computeIfAbsent(p, k -> new ArrayList<>())
                    .add(new Interval(consumer, from, killedMicros)));
        }
        owned.forEach((p, intervals) -> {
            for (Interval a : intervals) {
                for (Interval b : intervals) {
                    if (a != b && a.consumer() != b.consumer()) {
                        assertThat(a.to() <= b.from() || b.to() <= a.from())
                                .as("partition %d owned by consumers %d and %d at once: %s %s", p, a.consumer(),
                                        b.consumer(), a, b).isTrue();
                    }
                }
            }
        });
        for (int p = 0; p < ConsumerMain.PARTITIONS; p++) {
            for (int o = 0; o < ConsumerMain.RECORDS; o++) {
                assertThat(processed).as("record %d of partition %d processed", o, p).containsKey(p * 1_000_000L + o);
            }
        }
        // A record is processed again only if its first processing was never committed: by the killed member
        // after its last commit, or by a member whose commit was refused (fenced or expired under load).
        commits.forEach((key, times) -> assertThat(times).as("record %d/%d committed twice", key / 1_000_000,
                key % 1_000_000).isEqualTo(1));
        long[] duplicates = new long[1];
        processed.forEach((key, times) -> {
            if (times > 1) {
                duplicates[0]++;
                int p = (int) (key / 1_000_000);
                long o = key % 1_000_000;
                if (!refused.contains(key)) {
                    assertThat(byVictim).as("record %d/%d re-processed though nobody's commit of it failed", p, o)
                            .containsKey(key);
                    assertThat(o).as("re-processed only after the dead member's last commit")
                            .isGreaterThanOrEqualTo(victimLastCommit.getOrDefault(p, 0L));
                }
            }
        });
        System.out.println(processed.size() + " records processed, " + duplicates[0] + " of them twice or more, "
                + refused.size() + " commits refused");
    }
}
