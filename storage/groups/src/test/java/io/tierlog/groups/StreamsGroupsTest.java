package io.tierlog.groups;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Streams groups (Kafka Streams' rebalance protocol): topologies configured against topics, tasks as partitions. */
class StreamsGroupsTest {
    static final long SESSION = 10_000;
    static final Duration SKEW = Duration.ofSeconds(1);
    static final String REPARTITION = "app-counts-repartition";
    static final String CHANGELOG = "app-counts-changelog";
    static final StreamsTopology.Endpoint HOST_A = new StreamsTopology.Endpoint("host-a", 8080);

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    final Map<String, Integer> counts = new ConcurrentHashMap<>(Map.of("lines", 4, "orders", 6));
    GroupCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), clock, SKEW);
    }

    /** A word count: subtopology 0 reads lines and writes the repartition topic, 1 reads it and keeps counts. */
    static StreamsTopology wordCount(int epoch) {
        return new StreamsTopology(epoch, List.of(
                new StreamsTopology.Subtopology("0", List.of("lines"), List.of(), List.of(), List.of(REPARTITION),
                        List.of()),
                new StreamsTopology.Subtopology("1", List.of(REPARTITION),
                        List.of(new StreamsTopology.InternalTopic(REPARTITION, 0, Map.of("cleanup.policy", "delete"))),
                        List.of(new StreamsTopology.InternalTopic(CHANGELOG, 0, Map.of("cleanup.policy", "compact"))),
                        List.of(), List.of())));
    }

    static StreamsHeartbeat join(String member, StreamsTopology topology, StreamsTopology.Endpoint endpoint) {
        return new StreamsHeartbeat(member, 0, null, SESSION, topology, List.of(), "process-" + member, endpoint, -1,
                "c", false, null, null);
    }

    /** A well-behaved member: it runs exactly the tasks its last answer gave it. */
    StreamsHeartbeatAnswer beat(String group, StreamsHeartbeatAnswer last) {
        HeartbeatAnswer m = last.membership();
        return coordinator.streamsHeartbeat(group, new StreamsHeartbeat(m.memberId(), m.memberEpoch(), null, SESSION,
                null, m.assignment(), null, null, last.endpointEpoch(), "c", false, null, null));
    }

    static Set<TopicPartition> tasks(StreamsHeartbeatAnswer a) {
        Set<TopicPartition> s = new TreeSet<>(StickyBalancedAssignor.ORDER);
        a.membership().assignment().forEach(t -> t.partitions().forEach(p -> s.add(new TopicPartition(t.topic(), p))));
        return s;
    }

    @Test
    void internalTopicsAndTasksFollowTheSourceTopics() {
        StreamsTopology.Configured c = wordCount(1).configure(t -> counts.getOrDefault(t, 0));
        assertThat(c.ready()).isTrue();
        assertThat(c.taskCounts()).containsExactlyInAnyOrderEntriesOf(Map.of("0", 4, "1", 4));
        assertThat(c.internalTopics().get(REPARTITION).partitions()).as("derived from lines").isEqualTo(4);
        assertThat(c.internalTopics().get(CHANGELOG).partitions()).as("its subtopology's tasks").isEqualTo(4);
        assertThat(c.internalTopics().get(CHANGELOG).configs()).containsEntry("cleanup.policy", "compact");

        counts.remove("lines");
        StreamsTopology.Configured missing = wordCount(1).configure(t -> counts.getOrDefault(t, 0));
        assertThat(missing.statuses()).extracting(StreamsTopology.Status::code)
                .containsExactly(StreamsTopology.Status.MISSING_SOURCE_TOPICS);
        assertThat(missing.taskCounts().values()).containsOnly(0);
        assertThat(missing.internalTopics()).isEmpty();
    }

    @Test
    void copartitionedTopicsMustAgreeAndADerivedRepartitionTopicTakesTheirCount() {
        // A join of orders (6) with a re-keyed lines stream: the repartition topic must have orders' count.
        StreamsTopology join = new StreamsTopology(1, List.of(
                new StreamsTopology.Subtopology("0", List.of("lines"), List.of(), List.of(), List.of("rekeyed"),
                        List.of()),
                new StreamsTopology.Subtopology("1", List.of("orders", "rekeyed"),
                        List.of(new StreamsTopology.InternalTopic("rekeyed", 0, Map.of())), List.of(), List.of(),
                        List.of(List.of("orders", "rekeyed")))));
        StreamsTopology.Configured c = join.validated().configure(t -> counts.getOrDefault(t, 0));
        assertThat(c.internalTopics().get("rekeyed").partitions()).isEqualTo(6);
        assertThat(c.taskCounts()).containsEntry("1", 6);

        StreamsTopology unequal = new StreamsTopology(1, List.of(new StreamsTopology.Subtopology("0",
                List.of("lines", "orders"), List.of(), List.of(), List.of(), List.of(List.of("lines", "orders")))));
        assertThat(unequal.configure(t -> counts.getOrDefault(t, 0)).statuses())
                .extracting(StreamsTopology.Status::code)
                .containsExactly(StreamsTopology.Status.INCORRECTLY_PARTITIONED_TOPICS);
    }

    @Test
    void aTopologyThatCannotBeConfiguredIsRefusedNamingIt() {
        StreamsTopology sinkNobodyReads = new StreamsTopology(1, List.of(new StreamsTopology.Subtopology("0",
                List.of("lines"), List.of(), List.of(), List.of("nowhere"), List.of())));
        assertThatThrownBy(() -> coordinator.streamsHeartbeat("g", join("a", sinkNobodyReads, null)))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                    assertThat(e.extra()).containsEntry("field", "topology");
                });
        assertThatThrownBy(() -> coordinator.streamsHeartbeat("g", join("a", null, null)))
                .as("a join without a topology").isInstanceOf(TierlogException.class);
        assertThatThrownBy(() -> coordinator.streamsHeartbeat("g", join(null, wordCount(1), null)))
                .as("a member without an id").isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.extra()).containsEntry("field", "memberId"));
        assertThat(coordinator.describe("g")).as("nothing stored").isEmpty();
    }

    @Test
    void membersDivideTheTasksAndCommitOnlyThePartitionsTheirTasksRead() {
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(1), null));
        assertThat(a.statuses()).isEmpty();
        assertThat(tasks(a)).as("the only member runs all 8 tasks").hasSize(8);
        StreamsHeartbeatAnswer b = coordinator.streamsHeartbeat("app", join("b", wordCount(1), null));
        for (int i = 0; i < 4; i++) {
            a = beat("app", a);
            b = beat("app", b);
        }
        assertThat(tasks(a)).hasSize(4);
        assertThat(tasks(b)).hasSize(4).doesNotContainAnyElementsOf(tasks(a));

        // Another coordinator on the volume (another instance) sees the same group.
        GroupCoordinator other = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0),
                clock, SKEW);
        StreamsGroupDescription d = other.describeStreams("app").orElseThrow();
        assertThat(d.topology()).isEqualTo(wordCount(1));
        assertThat(d.members()).containsOnlyKeys("a", "b");
        assertThat(d.group().streams()).isTrue();

        TopicPartition task = tasks(a).iterator().next();
        Set<TopicPartition> read = wordCount(1).partitionsRead(List.of(task));
        boolean[] committed = {false};
        coordinator.commitHeld("app", "a", a.membership().memberEpoch(), read, () -> committed[0] = true);
        assertThat(committed[0]).as("a commits the partitions its task reads").isTrue();
        int epochOfB = b.membership().memberEpoch();
        assertThatThrownBy(() -> coordinator.commitHeld("app", "b", epochOfB, read, () -> { }))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.FENCED_MEMBER));
    }

    @Test
    void aGroupIsEitherAConsumerOrAStreamsGroupWhileItHasMembers() {
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(1), null));
        assertThatThrownBy(() -> coordinator.heartbeat("app", GroupCoordinatorTest.join()))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.GROUP_PROTOCOL_MISMATCH));
        HeartbeatAnswer consumer = coordinator.heartbeat("orders-group", GroupCoordinatorTest.join());
        assertThatThrownBy(() -> coordinator.streamsHeartbeat("orders-group", join("s", wordCount(1), null)))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.GROUP_PROTOCOL_MISMATCH));
        assertThat(consumer.memberEpoch()).isPositive();

        coordinator.streamsHeartbeat("app", new StreamsHeartbeat("a", -1, null, 0, null, null, null, null, -1, "c",
                false, null, null));
        HeartbeatAnswer taken = coordinator.heartbeat("app", GroupCoordinatorTest.join());
        assertThat(taken.memberEpoch()).as("an empty streams group becomes a consumer group").isPositive();
        assertThat(coordinator.describeStreams("app")).isEmpty();
        assertThat(a.membership().memberEpoch()).isPositive();
    }

    @Test
    void aMemberWithAnOlderTopologyIsToldItIsStaleAndAShutdownReachesEveryMember() {
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(2), null));
        StreamsHeartbeatAnswer old = coordinator.streamsHeartbeat("app", join("b", wordCount(1), null));
        assertThat(old.statuses()).extracting(StreamsTopology.Status::code)
                .containsExactly(StreamsTopology.Status.STALE_TOPOLOGY);
        a = beat("app", a);
        assertThat(a.statuses()).isEmpty();

        HeartbeatAnswer m = old.membership();
        coordinator.streamsHeartbeat("app", new StreamsHeartbeat(m.memberId(), m.memberEpoch(), null, SESSION, null,
                null, null, null, -1, "c", true, null, null));
        assertThat(beat("app", a).statuses()).extracting(StreamsTopology.Status::code)
                .as("a member asked the application to shut down")
                .contains(StreamsTopology.Status.SHUTDOWN_APPLICATION);
    }

    static Set<TopicPartition> standby(StreamsHeartbeatAnswer a) {
        Set<TopicPartition> s = new TreeSet<>(StickyBalancedAssignor.ORDER);
        a.standbyTasks().forEach(t -> t.partitions().forEach(p -> s.add(new TopicPartition(t.topic(), p))));
        return s;
    }

    /** Members a, b (one process) and c (another), each as it was last answered; beats until nothing changes. */
    private Map<String, StreamsHeartbeatAnswer> settle(Map<String, StreamsHeartbeatAnswer> members) {
        for (int round = 0; round < 6; round++) {
            members.replaceAll((id, last) -> beat("app", last));
        }
        return members;
    }

    @Test
    void standbyTasksGoToOtherProcessesNeverBesideTheirActiveCopyAndTakeOverWhenItsOwnerLeaves() {
        assertThatThrownBy(() -> coordinator.alterConfigs("app", GroupConfigs.STREAMS,
                Map.of(GroupConfigs.STANDBY_REPLICAS, "3"), SESSION))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.extra()).containsEntry("key", GroupConfigs.STANDBY_REPLICAS));
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.STANDBY_REPLICAS, "1"), SESSION);
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        for (String id : List.of("a", "c", "b")) { // b last: its process is known only once it joined
            members.put(id, coordinator.streamsHeartbeat("app", new StreamsHeartbeat(id, 0, null, SESSION,
                    wordCount(1), List.of(), processOf(id), null, -1, "c", false, null, null)));
        }
        assertStandbysApart(settle(members), 4);

        // a leaves: b and c, one process each, keep a standby of every stateful task in the other's process; c's
        // standbys of tasks it now runs are gone.
        Set<TopicPartition> tasksOfA = tasks(members.remove("a"));
        coordinator.streamsHeartbeat("app", new StreamsHeartbeat("a", -1, null, 0, null, null, null, null, -1, "c",
                false, null, null));
        assertStandbysApart(settle(members), 4);
        assertThat(tasksOfA).isNotEmpty();

        // c leaves: b runs everything, and no other process is left to keep standbys in.
        members.remove("c");
        coordinator.streamsHeartbeat("app", new StreamsHeartbeat("c", -1, null, 0, null, null, null, null, -1, "c",
                false, null, null));
        assertStandbysApart(settle(members), 0);
        assertThat(tasks(members.get("b"))).hasSize(8);
        assertThat(coordinator.describeStreams("app").orElseThrow().members().get("b").standbyTarget()).isEmpty();
    }

    @Test
    void aLeavingMembersStatefulTasksRestartWhereTheirStandbysAre() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.STANDBY_REPLICAS, "1"), SESSION);
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        for (String id : List.of("a", "b", "c", "d")) { // one process each
            members.put(id, coordinator.streamsHeartbeat("app", join(id, wordCount(1), null)));
        }
        settle(members);
        Map<TopicPartition, String> standbyOf = new java.util.HashMap<>();
        members.forEach((id, a) -> standby(a).forEach(t -> standbyOf.put(t, id)));
        Set<TopicPartition> statefulOfD = new TreeSet<>(StickyBalancedAssignor.ORDER);
        tasks(members.remove("d")).stream().filter(t -> t.topic().equals("1")).forEach(statefulOfD::add);
        assertThat(statefulOfD).isNotEmpty();
        coordinator.streamsHeartbeat("app", new StreamsHeartbeat("d", -1, null, 0, null, null, null, null, -1, "c",
                false, null, null));
        settle(members);
        for (TopicPartition task : statefulOfD) {
            assertThat(tasks(members.get(standbyOf.get(task))))
                    .as("task %s, whose standby was on %s", task, standbyOf.get(task)).contains(task);
        }
        members.values().forEach(a -> assertThat(tasks(a).stream().filter(t -> t.topic().equals("1")))
                .as("4 stateful tasks over 3 members").hasSizeBetween(1, 2));
    }

    static Set<TopicPartition> warmups(StreamsHeartbeatAnswer a) {
        Set<TopicPartition> s = new TreeSet<>(StickyBalancedAssignor.ORDER);
        a.warmupTasks().forEach(t -> t.partitions().forEach(p -> s.add(new TopicPartition(t.topic(), p))));
        return s;
    }

    /** {@link #beat} reporting {@code offsets} of the member's tasks' state and the changelogs' {@code ends}. */
    StreamsHeartbeatAnswer beat(StreamsHeartbeatAnswer last, Map<TopicPartition, Long> offsets,
                                Map<TopicPartition, Long> ends) {
        HeartbeatAnswer m = last.membership();
        return coordinator.streamsHeartbeat("app", new StreamsHeartbeat(m.memberId(), m.memberEpoch(), null, SESSION,
                null, m.assignment(), null, null, last.endpointEpoch(), "c", false, null, null),
                new TaskProgress(offsets, ends));
    }

    @Test
    void aJoiningMemberWarmsUpStatefulTasksWhileTheirOwnerRunsThemAndTakesThemOnceCaughtUp() {
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        members.put("a", coordinator.streamsHeartbeat("app", join("a", wordCount(1), null)));
        settle(members);
        Map<TopicPartition, Long> ends = new java.util.HashMap<>();
        Map<TopicPartition, Long> running = new java.util.HashMap<>();
        for (int p = 0; p < 4; p++) { // subtopology 1 keeps counts: 50,000 records in each task's changelog
            ends.put(new TopicPartition("1", p), 50_000L);
            running.put(new TopicPartition("1", p), WarmupTasks.LATEST);
        }
        members.put("a", beat(members.get("a"), running, ends));
        assertThat(members.get("a").acceptableRecoveryLag()).isEqualTo(10_000);
        assertThat(members.get("a").taskOffsetIntervalMs()).isEqualTo(60_000);

        members.put("b", coordinator.streamsHeartbeat("app", join("b", wordCount(1), null),
                new TaskProgress(Map.of(), Map.of()))); // no local state
        settle(members);
        Set<TopicPartition> warming = warmups(members.get("b"));
        assertThat(warming).as("two of the counting tasks, restoring on b").hasSize(2)
                .allMatch(t -> t.topic().equals("1"));
        assertThat(tasks(members.get("b"))).as("only stateless tasks moved").hasSize(2)
                .allMatch(t -> t.topic().equals("0"));
        assertThat(tasks(members.get("a"))).as("a still runs what b restores").hasSize(6).containsAll(warming);
        assertThat(coordinator.describeStreams("app").orElseThrow().members().get("b").warmupTarget())
                .isNotEmpty();

        Map<TopicPartition, Long> behind = new java.util.HashMap<>();
        warming.forEach(t -> behind.put(t, 30_000L)); // 20,000 records behind: not caught up
        members.put("b", beat(members.get("b"), behind, ends));
        settle(members);
        assertThat(warmups(members.get("b"))).isEqualTo(warming);
        assertThat(tasks(members.get("a"))).hasSize(6);

        Map<TopicPartition, Long> close = new java.util.HashMap<>();
        warming.forEach(t -> close.put(t, 45_000L)); // within the acceptable 10,000
        members.put("b", beat(members.get("b"), close, ends));
        settle(members);
        assertThat(tasks(members.get("b"))).as("caught up: the counting tasks moved").hasSize(4)
                .containsAll(warming);
        assertThat(warmups(members.get("b"))).isEmpty();
        assertThat(tasks(members.get("a"))).hasSize(4).doesNotContainAnyElementsOf(warming);
    }

    @Test
    void warmUpsAreBoundedByTheGroupsBudgetAndOffWhenItIsZero() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.WARMUP_REPLICAS, "1"), SESSION);
        assertThatThrownBy(() -> coordinator.alterConfigs("app", GroupConfigs.STREAMS,
                Map.of(GroupConfigs.WARMUP_REPLICAS, "21"), SESSION))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.extra()).containsEntry("key", GroupConfigs.WARMUP_REPLICAS));
        assertThatThrownBy(() -> coordinator.alterConfigs("app", GroupConfigs.STREAMS,
                Map.of(GroupConfigs.TASK_OFFSET_INTERVAL_MS, "1000"), SESSION))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.extra()).containsEntry("key", GroupConfigs.TASK_OFFSET_INTERVAL_MS));
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        members.put("a", coordinator.streamsHeartbeat("app", join("a", wordCount(1), null)));
        settle(members);
        Map<TopicPartition, Long> ends = new java.util.HashMap<>();
        for (int p = 0; p < 4; p++) {
            ends.put(new TopicPartition("1", p), 50_000L);
        }
        members.put("a", beat(members.get("a"), Map.of(), ends));
        members.put("b", coordinator.streamsHeartbeat("app", join("b", wordCount(1), null),
                new TaskProgress(Map.of(), Map.of())));
        settle(members);
        assertThat(warmups(members.get("b"))).as("one at a time").hasSize(1);
        assertThat(tasks(members.get("a")).stream().filter(t -> t.topic().equals("1"))).hasSize(4);

        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.WARMUP_REPLICAS, "0"), SESSION);
        settle(members);
        assertThat(warmups(members.get("b"))).as("no budget: the moves wait without warm-ups").isEmpty();
        assertThat(tasks(members.get("a")).stream().filter(t -> t.topic().equals("1"))).hasSize(4);
    }

    @Test
    void standbysGoToAnotherZoneThanTheirActiveCopy() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.STANDBY_REPLICAS, "1"), SESSION);
        Map<String, String> zoneOf = Map.of("a", "az-1", "b", "az-1", "c", "az-1", "d", "az-2");
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        for (String id : List.of("a", "b", "c", "d")) { // one process each, three of them in one zone
            members.put(id, coordinator.streamsHeartbeat("app", new StreamsHeartbeat(id, 0, null, SESSION,
                    wordCount(1), List.of(), "process-" + id, null, -1, "c", false, zoneOf.get(id), null)));
        }
        settle(members);
        assertThat(standbysInAnotherZone(members, zoneOf)).as("every stateful task's").isEqualTo(4);
        assertThat(coordinator.describeStreams("app").orElseThrow().members().get("d").rack()).isEqualTo("az-2");
    }

    /** How many standbys the members keep, each asserted to be in another zone than its task's active copy. */
    private static int standbysInAnotherZone(Map<String, StreamsHeartbeatAnswer> members,
                                             Map<String, String> zoneOf) {
        Map<TopicPartition, String> activeOwner = new java.util.HashMap<>();
        members.forEach((id, a) -> tasks(a).forEach(t -> activeOwner.put(t, id)));
        int standbys = 0;
        for (Map.Entry<String, StreamsHeartbeatAnswer> e : members.entrySet()) {
            for (TopicPartition t : standby(e.getValue())) {
                standbys++;
                assertThat(zoneOf.get(e.getKey())).as("task %s: its standby on %s, its active copy on %s", t,
                        e.getKey(), activeOwner.get(t)).isNotEqualTo(zoneOf.get(activeOwner.get(t)));
            }
        }
        return standbys;
    }

    @Test
    void standbysSpreadOverTheClientTagsTheGroupListsAndAMemberWithoutThemIsTold() {
        assertThatThrownBy(() -> coordinator.alterConfigs("app", GroupConfigs.STREAMS,
                Map.of(GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS, "zone, zone"), SESSION))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.getMessage())
                        .contains("must not contain duplicate tag keys"));
        assertThatThrownBy(() -> coordinator.alterConfigs("app", GroupConfigs.STREAMS,
                Map.of(GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS, "a,b,c,d,e,f"), SESSION))
                .isInstanceOf(TierlogException.class);
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.STANDBY_REPLICAS, "1",
                GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS, " zone "), SESSION);
        assertThat(coordinator.configs("app", GroupConfigs.STREAMS).list(GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS))
                .containsExactly("zone");
        Map<String, String> zoneOf = Map.of("a", "z1", "b", "z1", "c", "z1", "d", "z2");
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>();
        for (String id : List.of("a", "b", "c", "d")) { // one process each, three of them in one zone, no racks
            members.put(id, coordinator.streamsHeartbeat("app", new StreamsHeartbeat(id, 0, null, SESSION,
                    wordCount(1), List.of(), "process-" + id, null, -1, "c", false, null,
                    Map.of("zone", zoneOf.get(id), "team", "x"))));
            assertThat(members.get(id).statuses()).isEmpty();
        }
        settle(members);
        assertThat(standbysInAnotherZone(members, zoneOf)).as("every stateful task's").isEqualTo(4);
        assertThat(coordinator.describeStreams("app").orElseThrow().members().get("d").clientTags())
                .containsEntry("zone", "z2");

        StreamsHeartbeatAnswer untagged = coordinator.streamsHeartbeat("app", join("e", wordCount(1), null));
        assertThat(untagged.statuses()).extracting(StreamsTopology.Status::code)
                .containsExactly(StreamsTopology.Status.MISSING_CLIENT_TAGS);
        assertThat(untagged.statuses().get(0).detail()).contains("[zone]").contains("client.tag.<tagKey>");
    }

    @Test
    void aNewGroupWaitsItsInitialDelayForMoreMembersBeforeTheFirstTasksGoOut() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.INITIAL_REBALANCE_DELAY_MS, "3000"),
                SESSION);
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(1), null));
        assertThat(tasks(a)).as("the first member waits for the others").isEmpty();
        assertThat(a.membership().heartbeatIntervalMs()).as("back when the wait ends").isLessThanOrEqualTo(3000);
        clock.advance(Duration.ofSeconds(1));
        StreamsHeartbeatAnswer b = coordinator.streamsHeartbeat("app", join("b", wordCount(1), null));
        a = beat("app", a);
        assertThat(tasks(a)).isEmpty();
        assertThat(tasks(b)).isEmpty();

        clock.advance(Duration.ofSeconds(2));
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>(Map.of("a", a, "b", b));
        settle(members);
        assertThat(tasks(members.get("a"))).as("half each from the first assignment on").hasSize(4);
        assertThat(tasks(members.get("b"))).hasSize(4).doesNotContainAnyElementsOf(tasks(members.get("a")));

        StreamsHeartbeatAnswer c = coordinator.streamsHeartbeat("app", join("c", wordCount(1), null));
        settle(members);
        members.put("c", beat("app", c));
        settle(members);
        assertThat(tasks(members.get("c"))).as("a later member does not wait").isNotEmpty();
    }

    @Test
    void aRestartedApplicationGetsItsTasksBackWhereItsMembersReportTheirStores() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of(GroupConfigs.INITIAL_REBALANCE_DELAY_MS, "3000"),
                SESSION);
        Map<String, StreamsHeartbeatAnswer> members = new java.util.TreeMap<>(Map.of(
                "a", coordinator.streamsHeartbeat("app", join("a", wordCount(1), null)),
                "b", coordinator.streamsHeartbeat("app", join("b", wordCount(1), null))));
        clock.advance(Duration.ofSeconds(3));
        settle(members);
        Map<String, Set<TopicPartition>> counting = new java.util.HashMap<>();
        members.forEach((id, a) -> counting.put(id, tasks(a).stream().filter(t -> t.topic().equals("1"))
                .collect(java.util.stream.Collectors.toCollection(() -> new TreeSet<>(StickyBalancedAssignor.ORDER)))));
        assertThat(counting.get("a")).hasSize(2);
        members.forEach((id, a) -> coordinator.streamsHeartbeat("app", new StreamsHeartbeat(id, -1, null, 0, null,
                null, null, null, -1, "c", false, null, null)));
        assertThat(coordinator.describeStreams("app").orElseThrow().members()).as("every member left").isEmpty();

        // Both processes restart under new member ids, each reporting the stores its member left on disk. Range's
        // order alone gives "x", first by id, the lowest tasks: it reports the stores of whichever had the highest.
        String hadHighest = counting.get("a").contains(new TopicPartition("1", 3)) ? "a" : "b";
        String hadLowest = hadHighest.equals("a") ? "b" : "a";
        Map<String, String> before = Map.of("x", hadHighest, "y", hadLowest);
        Map<TopicPartition, Long> ends = new java.util.HashMap<>();
        for (int p = 0; p < 4; p++) {
            ends.put(new TopicPartition("1", p), 5_000L);
        }
        members.clear();
        for (String id : List.of("x", "y")) {
            Map<TopicPartition, Long> stores = new java.util.HashMap<>();
            counting.get(before.get(id)).forEach(t -> stores.put(t, 5_000L));
            members.put(id, coordinator.streamsHeartbeat("app", join(id, wordCount(1), null),
                    new TaskProgress(stores, ends)));
        }
        clock.advance(Duration.ofSeconds(3));
        settle(members);
        for (String id : List.of("x", "y")) {
            assertThat(tasks(members.get(id)).stream().filter(t -> t.topic().equals("1")))
                    .as("%s restarted where %s kept its counts", id, before.get(id))
                    .containsExactlyInAnyOrderElementsOf(counting.get(before.get(id)));
            assertThat(warmups(members.get(id))).as("nothing to restore").isEmpty();
        }
    }

    @Test
    void theGroupsStreamsConfigsSetItsMembersSessionsAndNotItsConsumersKeys() {
        coordinator.alterConfigs("app", GroupConfigs.STREAMS, Map.of("streams.session.timeout.ms", "20000",
                "streams.heartbeat.interval.ms", "1500"), SESSION);
        coordinator.alterConfigs("app", Map.of("consumer.heartbeat.interval.ms", "700"), SESSION);
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(1), null));
        assertThat(a.membership().heartbeatIntervalMs()).isEqualTo(1500);
        clock.advance(Duration.ofMillis(SESSION + 5_000));
        assertThat(beat("app", a).membership().memberEpoch()).as("alive past its own session of %d ms", SESSION)
                .isPositive();
        clock.advance(Duration.ofMillis(20_000).plus(SKEW).plusMillis(1));
        assertThat(coordinator.describeStreams("app").orElseThrow().members()).as("expired after 20 s").isEmpty();
    }

    private static String processOf(String member) {
        return member.equals("c") ? "process-2" : "process-1";
    }

    /**
     * Every task runs once; {@code standbys} of them have a standby (subtopology 1's, the one with a changelog), none
     * in its active copy's process.
     */
    private static void assertStandbysApart(Map<String, StreamsHeartbeatAnswer> members, int standbys) {
        Map<TopicPartition, String> activeOwner = new java.util.HashMap<>();
        members.forEach((id, a) -> tasks(a).forEach(t -> assertThat(activeOwner.put(t, id)).isNull()));
        assertThat(activeOwner).as("every task runs once").hasSize(8);
        Map<TopicPartition, String> standbyOwner = new java.util.HashMap<>();
        members.forEach((id, a) -> standby(a).forEach(t -> assertThat(standbyOwner.put(t, id)).isNull()));
        assertThat(standbyOwner).as("standbys").hasSize(standbys);
        assertThat(standbyOwner.keySet()).as("stateful tasks only").allMatch(t -> t.topic().equals("1"));
        standbyOwner.forEach((task, id) -> assertThat(processOf(id))
                .as("task %s: its standby on %s, its active copy on %s", task, id, activeOwner.get(task))
                .isNotEqualTo(processOf(activeOwner.get(task))));
    }

    @Test
    void theEndpointMapComesWhenTheMembersEpochIsBehindAndShowsThePartitionsEachServes() {
        StreamsHeartbeatAnswer a = coordinator.streamsHeartbeat("app", join("a", wordCount(1), HOST_A));
        assertThat(a.endpoints()).extracting(StreamsTopology.MemberEndpoint::memberId).containsExactly("a");
        assertThat(a.endpoints().get(0).endpoint()).isEqualTo(HOST_A);
        List<String> served = new ArrayList<>();
        a.endpoints().get(0).partitions().forEach(t -> served.add(t.topic() + "/" + t.partitions()));
        assertThat(served).containsExactlyInAnyOrder("lines/[0, 1, 2, 3]", REPARTITION + "/[0, 1, 2, 3]");

        StreamsHeartbeatAnswer again = beat("app", a);
        assertThat(again.endpoints()).as("the member is current").isNull();
        assertThat(again.endpointEpoch()).isEqualTo(a.endpointEpoch());

        StreamsHeartbeatAnswer b = coordinator.streamsHeartbeat("app",
                join("b", wordCount(1), new StreamsTopology.Endpoint("host-b", 8080)));
        StreamsHeartbeatAnswer a2 = beat("app", again);
        assertThat(a2.endpointEpoch()).isGreaterThan(a.endpointEpoch());
        assertThat(a2.endpoints()).extracting(StreamsTopology.MemberEndpoint::memberId).containsExactly("a", "b");
        beat("app", a2); // a stops running the tasks it was asked to give up
        assertThat(beat("app", b).membership().memberEpoch()).as("b has tasks once a gave them up").isPositive();
    }
}
