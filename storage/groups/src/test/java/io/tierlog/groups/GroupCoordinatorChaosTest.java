package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two coordinators on one directory whose clocks are up to a second apart, and clients that join, heartbeat at
 * random moments (some too late), die, leave, rejoin and change the assignor they ask for (range or uniform), while
 * the topic grows. After every step, no two live clients consume the same partition; at the end, a quiet period
 * converges to a balanced, complete assignment. The same for a streams group's members and their tasks (two
 * subtopologies over the topic), and for stateful streams members in processes of their own, whose moves wait for
 * warm-up tasks that restore a little with each heartbeat.
 */
class GroupCoordinatorChaosTest {
    static final long SESSION = 3_000;
    static final int PARTITIONS = 24;
    static final int GROWN = 30;
    /** Two subtopologies reading the topic: a task (s, p) is numbered {@code s * 1000 + p} below. */
    static final StreamsTopology TOPOLOGY = new StreamsTopology(1, List.of(
            new StreamsTopology.Subtopology("0", List.of("orders"), List.of(), List.of(), List.of("orders-by-key"),
                    List.of()),
            new StreamsTopology.Subtopology("1", List.of("orders-by-key"),
                    List.of(new StreamsTopology.InternalTopic("orders-by-key", 0, Map.of())), List.of(), List.of(),
                    List.of())));
    /** The same with state in subtopology 1: its tasks move through warm-ups. */
    static final StreamsTopology STATEFUL = new StreamsTopology(1, List.of(
            TOPOLOGY.subtopologies().get(0),
            new StreamsTopology.Subtopology("1", List.of("orders-by-key"),
                    List.of(new StreamsTopology.InternalTopic("orders-by-key", 0, Map.of())),
                    List.of(new StreamsTopology.InternalTopic("counts-changelog", 0, Map.of())), List.of(),
                    List.of())));
    /** Each stateful task's changelog end; a warm-up restores {@link #RESTORED_PER_BEAT} of it per heartbeat. */
    static final long CHANGELOG_END = 1_000;
    static final long RESTORED_PER_BEAT = 300;
    /** Answers that gave a member warm-up tasks in the current run: the stateful runs must see some. */
    static int warmupAnswers;

    @TempDir
    Path dir;

    /** How a client heartbeats and leaves: as a consumer group's member, or as a streams group's. */
    enum Kind {
        CONSUMER, STREAMS, STATEFUL_STREAMS
    }

    /** A client as the protocol asks it to behave: it consumes its last answer's partitions while its lease holds. */
    static final class Client {
        static int ids;
        final String ownId = "client-" + ids++;
        String memberId;
        int epoch;
        Set<Integer> owns = new TreeSet<>();
        long lastAnsweredSendMs = Long.MIN_VALUE;
        boolean alive = true;
        /** A stateful streams member's restored offset of each task it warms up (task numbered as below). */
        Map<Integer, Long> restored = new HashMap<>();
        /** The assignor it asks for; members changing their minds move the group between range and uniform. */
        String assignor;

        Set<Integer> consuming(long now) {
            if (!alive || now - lastAnsweredSendMs > SESSION) {
                return Set.of(); // a client whose lease ran out stops consuming
            }
            return owns;
        }
    }

    /** Seeds 1 to 3 in every build; {@code -Dgroups.chaos.seed=S -Dgroups.chaos.seeds=N} for longer rounds. */
    private static final long FIRST_SEED = Long.getLong("groups.chaos.seed", 1);
    private static final int SEEDS = Integer.getInteger("groups.chaos.seeds", 3);

    @Test
    void noPartitionEverHasTwoConsumers() {
        for (long seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
            run(Kind.CONSUMER, seed, seed % 2 == 0 ? 1_000 : -1_000);
        }
    }

    @Test
    void noStatefulTaskEverRunsOnTwoMembersWhileWarmUpsHoldItsMoves() {
        for (long seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
            run(Kind.STATEFUL_STREAMS, seed, seed % 2 == 0 ? 1_000 : -1_000);
        }
    }

    @Test
    void noTaskEverRunsOnTwoStreamsMembers() {
        for (long seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
            run(Kind.STREAMS, seed, seed % 2 == 0 ? 1_000 : -1_000);
        }
    }

    private void run(Kind kind, long seed, long skewMs) {
        Path groupDir = dir.resolve(kind + "-run" + seed);
        ManualClock trueTime = new ManualClock();
        ManualClock other = new ManualClock(trueTime.millis() + skewMs);
        int[] partitions = {PARTITIONS};
        PartitionCounts counts = t -> t.equals("orders") ? partitions[0] : 0;
        Duration skew = Duration.ofMillis(Math.abs(skewMs));
        GroupCoordinator[] coordinators = {
                new GroupCoordinator(new GroupStateStore(groupDir), counts, trueTime, skew),
                new GroupCoordinator(new GroupStateStore(groupDir), counts, other, skew)};
        Random random = new Random(seed);
        if (kind == Kind.STATEFUL_STREAMS) {
            coordinators[0].alterConfigs("g", GroupConfigs.STREAMS, Map.of(GroupConfigs.ACCEPTABLE_RECOVERY_LAG,
                    "100", GroupConfigs.WARMUP_REPLICAS, "20"), SESSION);
        }
        warmupAnswers = 0;
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            clients.add(new Client());
        }
        for (int step = 0; step < 600; step++) {
            long dt = random.nextInt(1200);
            trueTime.advanceMillis(dt);
            other.advanceMillis(dt);
            if (step == 300) {
                // The topic grows: its new partitions (a streams group's new tasks) are given out.
                partitions[0] = GROWN;
            }
            int action = random.nextInt(100);
            List<Client> alive = clients.stream().filter(c -> c.alive).toList();
            if (action < 3 && alive.size() > 1) {
                alive.get(random.nextInt(alive.size())).alive = false; // kill -9
            } else if (action < 6 && clients.size() < 12) {
                clients.add(new Client());
            } else if (action < 10 && !alive.isEmpty()) {
                alive.get(random.nextInt(alive.size())).assignor = random.nextBoolean() ? "range" : "uniform";
            } else if (action < 12 && !alive.isEmpty()) {
                Client c = alive.get(random.nextInt(alive.size()));
                if (c.memberId != null) {
                    try {
                        GroupCoordinator coordinator = coordinators[random.nextInt(2)];
                        if (kind == Kind.CONSUMER) {
                            coordinator.heartbeat("g", new Heartbeat(c.memberId, -1, Set.of(), 0, null, null));
                        } else { // either kind of streams member
                            coordinator.streamsHeartbeat("g", new StreamsHeartbeat(c.memberId, -1, null, 0, null,
                                    null, null, null, -1, null, false, null, null));
                        }
                    } catch (TierlogException e) {
                        assertThat(e.type()).isEqualTo(ErrorType.UNKNOWN_MEMBER);
                    }
                    c.memberId = null;
                    c.epoch = 0;
                    c.owns = new TreeSet<>();
                }
            } else if (!alive.isEmpty()) {
                heartbeat(kind, alive.get(random.nextInt(alive.size())), coordinators[random.nextInt(2)],
                        trueTime.millis());
            }
            assertNoTwoConsumers(clients, trueTime.millis(), seed, step);
        }
        // Quiet: every live client heartbeats in turn until nothing changes.
        for (int round = 0; round < 20; round++) {
            trueTime.advanceMillis(SESSION / 3);
            other.advanceMillis(SESSION / 3);
            for (Client c : clients) {
                if (c.alive) {
                    heartbeat(kind, c, coordinators[round % 2], trueTime.millis());
                }
            }
            assertNoTwoConsumers(clients, trueTime.millis(), seed, -round);
        }
        if (kind == Kind.STATEFUL_STREAMS) {
            assertThat(warmupAnswers).as("seed %d: moves went through warm-ups", seed).isPositive();
        }
        Map<Integer, Integer> owners = new HashMap<>();
        List<Client> alive = clients.stream().filter(c -> c.alive).toList();
        alive.forEach(c -> c.owns.forEach(p -> owners.merge(p, 1, Integer::sum)));
        assertThat(owners).as("%s seed %d: every partition consumed once", kind, seed)
                .hasSize(kind == Kind.CONSUMER ? GROWN : 2 * GROWN);
        for (int subtopology = 0; subtopology < (kind == Kind.CONSUMER ? 1 : 2); subtopology++) {
            int s = subtopology;
            IntSummaryStatistics shares = alive.stream()
                    .mapToInt(c -> (int) c.owns.stream().filter(t -> t / 1000 == s).count()).summaryStatistics();
            assertThat(shares.getMax() - shares.getMin()).as("%s seed %d balanced: %s", kind, seed, shares)
                    .isLessThanOrEqualTo(1);
        }
    }

    private static void heartbeat(Kind kind, Client c, GroupCoordinator coordinator, long now) {
        if (kind != Kind.CONSUMER) {
            streamsHeartbeat(c, coordinator, now, kind == Kind.STATEFUL_STREAMS);
            return;
        }
        List<TopicPartitions> owned = List.of(new TopicPartitions("orders", List.copyOf(c.consuming(now))));
        if (c.consuming(now).isEmpty()) {
            c.owns = new TreeSet<>();
        }
        try {
            HeartbeatAnswer a = coordinator.heartbeat("g", new Heartbeat(c.memberId, c.memberId == null ? 0 : c.epoch,
                    Set.of("orders"), SESSION, owned, null).withAssignor(c.assignor));
            c.memberId = a.memberId();
            c.epoch = a.memberEpoch();
            c.owns = new TreeSet<>();
            a.assignment().forEach(tps -> c.owns.addAll(tps.partitions()));
            c.lastAnsweredSendMs = now;
        } catch (TierlogException e) {
            refused(c, e);
        }
    }

    /**
     * A streams member: its own id, the topology when it joins, its running tasks in every heartbeat; a stateful one
     * runs in a process of its own and reports its tasks' offsets (those it runs at the changelog's end, those it
     * warms up as far as restored, a little more with each heartbeat).
     */
    private static void streamsHeartbeat(Client c, GroupCoordinator coordinator, long now, boolean stateful) {
        List<TopicPartitions> running = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            int subtopology = s;
            running.add(new TopicPartitions(Integer.toString(s), c.consuming(now).stream()
                    .filter(t -> t / 1000 == subtopology).map(t -> t % 1000).toList()));
        }
        if (c.consuming(now).isEmpty()) {
            c.owns = new TreeSet<>();
        }
        boolean joining = c.memberId == null;
        TaskProgress progress = TaskProgress.NONE;
        if (stateful) {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            Map<TopicPartition, Long> ends = new HashMap<>();
            c.restored.replaceAll((task, offset) -> Math.min(CHANGELOG_END, offset + RESTORED_PER_BEAT));
            c.restored.forEach((task, offset) -> offsets.put(new TopicPartition("1", task % 1000), offset));
            c.consuming(now).stream().filter(t -> t / 1000 == 1).forEach(t -> offsets.put(
                    new TopicPartition("1", t % 1000), WarmupTasks.LATEST));
            offsets.keySet().forEach(t -> ends.put(t, CHANGELOG_END));
            progress = new TaskProgress(offsets, ends);
        }
        try {
            StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("g", new StreamsHeartbeat(c.ownId,
                    joining ? 0 : c.epoch, null, SESSION, !joining && c.epoch != 0 ? null : stateful ? STATEFUL
                    : TOPOLOGY, running, stateful ? "process-" + c.ownId : "p", null, -1, null, false, null, null),
                    progress);
            Map<Integer, Long> warming = new HashMap<>();
            a.warmupTasks().forEach(t -> t.partitions().forEach(p -> warming.put(1000 + p,
                    c.restored.getOrDefault(1000 + p, 0L))));
            c.restored = warming; // restoring what it is told to warm up, from where it was
            warmupAnswers += warming.isEmpty() ? 0 : 1;
            c.memberId = a.membership().memberId();
            c.epoch = a.membership().memberEpoch();
            c.owns = new TreeSet<>();
            a.membership().assignment().forEach(t -> t.partitions().forEach(
                    p -> c.owns.add(Integer.parseInt(t.topic()) * 1000 + p)));
            c.lastAnsweredSendMs = now;
        } catch (TierlogException e) {
            refused(c, e);
        }
    }

    /** A refused heartbeat: the client stops consuming, and joins again (under its id when it was fenced). */
    private static void refused(Client c, TierlogException e) {
        c.owns = new TreeSet<>();
        if (e.type() == ErrorType.UNKNOWN_MEMBER) {
            c.memberId = null;
            c.epoch = 0;
        } else {
            assertThat(e.type()).isEqualTo(ErrorType.FENCED_MEMBER);
            c.epoch = 0; // rejoin under the same id
        }
    }

    private static void assertNoTwoConsumers(List<Client> clients, long now, long seed, int step) {
        Map<Integer, Integer> owners = new HashMap<>();
        for (Client c : clients) {
            for (int p : c.consuming(now)) {
                assertThat(owners.merge(p, 1, Integer::sum)).as("seed %d step %d: partition %d has two consumers",
                        seed, step, p).isEqualTo(1);
            }
        }
    }
}
