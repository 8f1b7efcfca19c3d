package io.tierlog.sharegroups;

import io.tierlog.groups.GroupConfigs;
import io.tierlog.groups.TopicPartitions;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.sharegroups.ShareGroupMembers.Answer;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Share-group membership on real files: joins, heartbeats, leaves, fencing, sessions, several instances. */
class ShareGroupMembersTest {
    static final Duration SESSION = Duration.ofSeconds(45);
    static final Duration INTERVAL = Duration.ofSeconds(5);
    static final Duration SKEW = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock(1_000_000);

    TopicStore topics() {
        return new TopicStore(dir, clock);
    }

    /** An instance of the service on the volume: its own session clock, as each process has. */
    ShareGroupMembers instance() {
        return new ShareGroupMembers(dir, topics()::find, clock, SESSION, INTERVAL, SKEW);
    }

    static TopicPartitions all(String topic, int partitions) {
        List<Integer> ps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            ps.add(p);
        }
        return new TopicPartitions(topic, ps);
    }

    static void assertRefused(Runnable call, ErrorType type) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(TierlogException.class,
                e -> assertThat(e.type()).isEqualTo(type));
    }

    @Test
    void aMemberJoinsHeartbeatsAndLeavesWithEveryPartitionOfItsTopics() {
        topics().create("t", 3, TopicConfig.DEFAULTS);
        topics().create("u", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        assertThat(members.describe("g")).as("a look creates nothing").isEmpty();
        assertThat(members.describeAll(g -> true).keySet()).isEmpty();

        Answer joined = members.heartbeat("g", "m1", 0, List.of("t", "u"), "client-1", "rack-a");
        assertThat(joined).isEqualTo(new Answer("m1", 1, 5_000, List.of(all("t", 3), all("u", 1))));
        assertThat(dir.resolve("__share_groups/g/members.json")).exists();

        Answer again = members.heartbeat("g", "m1", 1, null, "client-1", null);
        assertThat(again).as("nothing changed: same epoch, same assignment").isEqualTo(joined);

        ShareMembersDescription d = members.describe("g").orElseThrow();
        assertThat(d.state()).isEqualTo(ShareMembersDescription.State.STABLE);
        assertThat(d.groupEpoch()).isEqualTo(1);
        assertThat(d.members()).singleElement().satisfies(m -> {
            assertThat(m.memberId()).isEqualTo("m1");
            assertThat(m.memberEpoch()).isEqualTo(1);
            assertThat(m.clientId()).isEqualTo("client-1");
            assertThat(m.rackId()).as("a null rack keeps the one named before").isEqualTo("rack-a");
            assertThat(m.subscribedTopics()).containsExactly("t", "u");
            assertThat(m.assignment()).containsExactly(all("t", 3), all("u", 1));
            assertThat(m.lastHeartbeatMs()).isEqualTo(clock.millis());
        });

        assertThat(members.heartbeat("g", "m1", -1, null, "client-1", null))
                .isEqualTo(new Answer("m1", -1, 0, List.of()));
        ShareMembersDescription left = members.describe("g").orElseThrow();
        assertThat(left.state()).isEqualTo(ShareMembersDescription.State.EMPTY);
        assertThat(left.members()).isEmpty();
        assertThat(left.groupEpoch()).as("a leave is a new group epoch").isEqualTo(2);
        assertThat(members.describeAll(g -> true).keySet()).containsExactly("g");
    }

    @Test
    void everyMemberIsAssignedEveryPartitionAndAnotherMembersJoinLeavesItsEpochAlone() {
        topics().create("t", 2, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        Answer a = members.heartbeat("g", "a", 0, List.of("t"), "c", null);
        Answer b = members.heartbeat("g", "b", 0, List.of("t"), "c", null);
        assertThat(a.assignment()).isEqualTo(b.assignment()).containsExactly(all("t", 2));
        assertThat(b.memberEpoch()).isEqualTo(2);
        assertThat(members.heartbeat("g", "a", 1, null, "c", null).memberEpoch()).isEqualTo(1);

        // A subscription change is a new epoch for that member only.
        topics().create("u", 1, TopicConfig.DEFAULTS);
        Answer moved = members.heartbeat("g", "b", 2, List.of("t", "u"), "c", null);
        assertThat(moved).isEqualTo(new Answer("b", 3, 5_000, List.of(all("t", 2), all("u", 1))));
        assertThat(members.describe("g").orElseThrow().groupEpoch()).isEqualTo(3);
    }

    @Test
    void aTopicThatAppearsGrowsOrIsRecreatedIsANewAssignmentAtTheNextHeartbeat() {
        ShareGroupMembers members = instance();
        Answer joined = members.heartbeat("g", "m", 0, List.of("later", "bad/name"), "c", null);
        assertThat(joined.assignment()).as("topics that do not exist are not assigned").isEmpty();
        assertThat(members.heartbeat("g", "m", 1, null, "c", null).memberEpoch()).isEqualTo(1);

        topics().create("later", 2, TopicConfig.DEFAULTS);
        assertThat(members.heartbeat("g", "m", 1, null, "c", null))
                .isEqualTo(new Answer("m", 2, 5_000, List.of(all("later", 2))));

        topics().increasePartitions("later", 4);
        assertThat(members.heartbeat("g", "m", 2, null, "c", null))
                .isEqualTo(new Answer("m", 3, 5_000, List.of(all("later", 4))));

        // Deleted and created again with the same partitions: another topic (id), so the client must hear of it.
        topics().delete("later");
        topics().create("later", 4, TopicConfig.DEFAULTS);
        assertThat(members.heartbeat("g", "m", 3, null, "c", null).memberEpoch()).isEqualTo(4);

        topics().delete("later");
        assertThat(members.heartbeat("g", "m", 4, null, "c", null))
                .isEqualTo(new Answer("m", 5, 5_000, List.of()));
    }

    @Test
    void aWrongEpochIsFencedThePreviousOneIsALostAnswerAndARejoinVoidsTheOldEpochs() {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        topics().create("u", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        members.heartbeat("g", "m", 0, List.of("t"), "c", null);
        assertRefused(() -> members.heartbeat("g", "m", 2, null, "c", null), ErrorType.FENCED_MEMBER);

        assertThat(members.heartbeat("g", "m", 1, List.of("t", "u"), "c", null).memberEpoch()).isEqualTo(2);
        // The answer with epoch 2 was lost: the member comes back with 1 and is told 2 and its assignment.
        assertThat(members.heartbeat("g", "m", 1, null, "c", null))
                .isEqualTo(new Answer("m", 2, 5_000, List.of(all("t", 1), all("u", 1))));
        assertRefused(() -> members.heartbeat("g", "m", 3, null, "c", null), ErrorType.FENCED_MEMBER);

        // A fenced client joins again under its id (epoch 0): a new epoch, and its earlier ones no longer pass.
        Answer rejoined = members.heartbeat("g", "m", 0, List.of("t"), "c", null);
        assertThat(rejoined).isEqualTo(new Answer("m", 3, 5_000, List.of(all("t", 1))));
        assertRefused(() -> members.heartbeat("g", "m", 2, null, "c", null), ErrorType.FENCED_MEMBER);
        assertRefused(() -> members.heartbeat("g", "m", 1, null, "c", null), ErrorType.FENCED_MEMBER);
        assertThat(members.describe("g").orElseThrow().members()).hasSize(1);
    }

    @Test
    void anUnknownMemberIsRefusedAndABadRequestStoresNothing() {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        assertRefused(() -> members.heartbeat("g", "ghost", 4, null, "c", null), ErrorType.UNKNOWN_MEMBER);
        assertRefused(() -> members.heartbeat("g", "ghost", -1, null, "c", null), ErrorType.UNKNOWN_MEMBER);
        assertRefused(() -> members.heartbeat("g", "m", 0, null, "c", null), ErrorType.BAD_REQUEST);
        assertRefused(() -> members.heartbeat("g", "m", 0, List.of(), "c", null), ErrorType.BAD_REQUEST);
        assertRefused(() -> members.heartbeat("g", "", 0, List.of("t"), "c", null), ErrorType.BAD_REQUEST);
        assertRefused(() -> members.heartbeat("g", "m", -2, null, "c", null), ErrorType.BAD_REQUEST);
        assertRefused(() -> members.heartbeat("no/such", "m", 0, List.of("t"), "c", null), ErrorType.INVALID_GROUP);
        assertThat(members.describe("g")).isEmpty();
        assertThat(members.describeAll(g -> true).keySet()).isEmpty();
    }

    @Test
    void aMemberSilentForTheSessionTimeoutIsRemoved() {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        members.heartbeat("g", "quiet", 0, List.of("t"), "c", null);
        members.heartbeat("g", "busy", 0, List.of("t"), "c", null);
        clock.advance(Duration.ofSeconds(30));
        members.heartbeat("g", "busy", 2, null, "c", null);
        clock.advance(Duration.ofSeconds(15));
        assertThat(members.describe("g").orElseThrow().members()).as("exactly the session timeout: still in")
                .hasSize(2);

        clock.advanceMillis(1);
        ShareMembersDescription d = members.describe("g").orElseThrow();
        assertThat(d.members()).extracting(ShareMembersDescription.Member::memberId).containsExactly("busy");
        assertThat(d.groupEpoch()).as("an expiry is a new group epoch").isEqualTo(3);
        assertRefused(() -> members.heartbeat("g", "quiet", 1, null, "c", null), ErrorType.UNKNOWN_MEMBER);
        assertThat(members.heartbeat("g", "quiet", 0, List.of("t"), "c", null).memberEpoch()).isEqualTo(4);
    }

    /**
     * A group's own {@code share.session.timeout.ms} and {@code share.heartbeat.interval.ms}: stored for every
     * instance, given to members at their next heartbeat, and a group only configured is neither listed nor described.
     */
    @Test
    void aGroupsOwnSessionAndIntervalHoldForItsMembersOnEveryInstance() {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers one = instance();
        ShareGroupMembers two = instance();
        one.alterConfigs("g", Map.of(GroupConfigs.SHARE.sessionTimeoutMs(), "10000"));
        assertThat(two.configs("g").values()).containsExactly(Map.entry("share.session.timeout.ms", "10000"));
        assertThat(two.describeAll(g -> true).keySet()).as("configured, never joined").isEmpty();
        assertThat(two.describeAll(g -> true)).isEmpty();
        assertThat(two.describe("g")).isEmpty();

        assertThat(two.heartbeat("g", "m", 0, List.of("t"), "c", null).heartbeatIntervalMs())
                .as("the service's 5 s, cut to a third of the group's session").isEqualTo(3_333);
        one.alterConfigs("g", Map.of(GroupConfigs.SHARE.heartbeatIntervalMs(), "1000"));
        assertThat(two.heartbeat("g", "m", 1, null, "c", null).heartbeatIntervalMs()).isEqualTo(1_000);
        assertThat(one.describeAll(g -> true).keySet()).containsExactly("g");
        assertThat(one.describeAll(g -> true).get("g").members())
                .extracting(ShareMembersDescription.Member::memberId).containsExactly("m");
        assertThat(one.describeAll(g -> !g.equals("g"))).as("not wanted").isEmpty();

        clock.advance(Duration.ofSeconds(10).plusMillis(1));
        assertThat(two.describe("g").orElseThrow().members()).as("gone after the group's 10 s, not 45 s").isEmpty();

        assertThatThrownBy(() -> one.alterConfigs("g", Map.of(GroupConfigs.SHARE.heartbeatIntervalMs(), "10000")))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.INVALID_CONFIG);
                    assertThat(e.extra()).containsEntry("key", "share.heartbeat.interval.ms");
                });
        assertThatThrownBy(() -> one.alterConfigs("g", Map.of("consumer.session.timeout.ms", "10000")))
                .isInstanceOf(TierlogException.class);
        Map<String, String> delete = new HashMap<>();
        delete.put(GroupConfigs.SHARE.sessionTimeoutMs(), null);
        delete.put(GroupConfigs.SHARE.heartbeatIntervalMs(), null);
        one.alterConfigs("g", delete);
        assertThat(two.configs("g").values()).isEmpty();
        assertThat(two.heartbeat("g", "m", 0, List.of("t"), "c", null).heartbeatIntervalMs()).isEqualTo(5_000);
    }

    @Test
    void twoInstancesOnOneVolumeShareMembersAndExpireOthersHeartbeatsOnlyAfterTheSkew() {
        topics().create("t", 2, TopicConfig.DEFAULTS);
        ShareGroupMembers one = instance();
        ShareGroupMembers two = instance();
        one.heartbeat("g", "a", 0, List.of("t"), "c-a", null);
        two.heartbeat("g", "b", 0, List.of("t"), "c-b", null);
        assertThat(one.describe("g").orElseThrow().members()).extracting(ShareMembersDescription.Member::memberId)
                .containsExactly("a", "b");
        assertThat(two.heartbeat("g", "a", 1, null, "c-a", null).memberEpoch()).as("a's epoch, through the other")
                .isEqualTo(1);
        assertRefused(() -> one.heartbeat("g", "b", 1, null, "c-b", null), ErrorType.FENCED_MEMBER);
        assertThat(one.heartbeat("g", "b", 2, null, "c-b", null).memberEpoch()).isEqualTo(2);
        assertThat(two.describeAll(g -> true).keySet()).containsExactly("g");

        // One heard "b" last and expires it after the session on its own clock; "a", last heard by two, only once the
        // clocks' skew has passed too.
        clock.advance(SESSION.plusMillis(1));
        assertThat(one.describe("g").orElseThrow().members()).extracting(ShareMembersDescription.Member::memberId)
                .containsExactly("a");
        clock.advance(SKEW);
        assertThat(one.describe("g").orElseThrow().members()).isEmpty();
    }

    @Test
    void concurrentJoinsThroughTwoInstancesAreAllKept() throws Exception {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        List<ShareGroupMembers> instances = List.of(instance(), instance());
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> joins = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                ShareGroupMembers members = instances.get(t % 2);
                String prefix = "t" + t + "-";
                joins.add(threads.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        members.heartbeat("g", prefix + i, 0, List.of("t"), "c", null);
                    }
                }));
            }
            for (Future<?> f : joins) {
                f.get();
            }
        } finally {
            threads.shutdownNow();
        }
        ShareMembersDescription d = instances.get(0).describe("g").orElseThrow();
        assertThat(d.members()).hasSize(100);
        assertThat(d.groupEpoch()).isEqualTo(100);
        assertThat(d.members()).extracting(ShareMembersDescription.Member::memberEpoch).doesNotHaveDuplicates();
    }

    @Test
    void theSettingsAreChecked() {
        assertThatThrownBy(() -> new ShareGroupMembers(dir, topics()::find, clock, SESSION, SESSION, SKEW))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ShareGroupMembers(dir, topics()::find, clock, SESSION, Duration.ZERO, SKEW))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(Files.exists(dir.resolve("__share_groups"))).isFalse();
    }

    @Test
    void aChangeWhileEmptyRunsOnlyWithoutMembersAndCreatesNothing() {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers members = instance();
        assertThat(members.whileEmpty("g", () -> "ran")).contains("ran");
        assertThat(members.describe("g")).as("no members file for a group never joined").isEmpty();

        members.heartbeat("g", "m", 0, List.of("t"), "c", null);
        assertThat(members.whileEmpty("g", () -> "ran")).as("a member is in").isEmpty();

        members.heartbeat("g", "m", -1, null, "c", null);
        assertThat(members.whileEmpty("g", () -> "ran")).as("it left").contains("ran");

        members.heartbeat("g", "m", 0, List.of("t"), "c", null);
        clock.advance(SESSION.plusMillis(1));
        assertThat(members.whileEmpty("g", () -> "ran")).as("its session ran out").contains("ran");
        assertThat(members.describe("g").orElseThrow().members()).isEmpty();
        assertRefused(() -> members.whileEmpty("no/such", () -> "ran"), ErrorType.INVALID_GROUP);
    }

    @Test
    void aMemberJoiningDuringAChangeWhileEmptyJoinsOnlyAfterIt() throws Exception {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers one = instance();
        ShareGroupMembers two = instance();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            List<String> order = Collections.synchronizedList(new ArrayList<>());
            List<Future<Answer>> joined = new ArrayList<>();
            Optional<String> during = one.whileEmpty("g", () -> {
                joined.add(joinBlockedOnTheMembersLock(pool, () -> {
                    Answer a = two.heartbeat("g", "m", 0, List.of("t"), "c", null);
                    order.add("joined");
                    return a;
                }));
                order.add("changed");
                return "changed";
            });
            assertThat(during).contains("changed");
            joined.get(0).get();
            assertThat(order).containsExactly("changed", "joined");
            assertThat(one.whileEmpty("g", () -> "ran")).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aGroupDeletedWhileEmptyLosesItsMembershipAndAJoinDuringTheDeleteWaitsForIt() throws Exception {
        topics().create("t", 1, TopicConfig.DEFAULTS);
        ShareGroupMembers one = instance();
        ShareGroupMembers two = instance();
        one.heartbeat("g", "m", 0, List.of("t"), "c", null);
        assertThat(one.deleteWhileEmpty("g", () -> true)).as("a member is in").isEmpty();
        one.heartbeat("g", "m", -1, null, "c", null);

        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            List<Future<Answer>> joined = new ArrayList<>();
            Optional<Boolean> deleted = one.deleteWhileEmpty("g", () -> {
                joined.add(joinBlockedOnTheMembersLock(pool, () -> two.heartbeat("g", "m2", 0, List.of("t"), "c", null)));
                assertThat(joined.get(0)).isNotDone();
                return false;
            });
            assertThat(deleted).as("the members file was there").contains(true);
            Answer a = joined.get(0).get();
            assertThat(a.memberEpoch()).isEqualTo(1);
            assertThat(two.describe("g").orElseThrow().groupEpoch()).as("a new group, not the deleted one's epochs")
                    .isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(instance().deleteWhileEmpty("nothing-here", () -> false)).contains(false);
    }

    /**
     * Starts {@code join} on {@code pool} while the caller holds the group's members lock, and returns once the join's
     * thread is parked on that lock (or after 10 s, failing): what happens next in the caller happens before the join.
     */
    private static Future<Answer> joinBlockedOnTheMembersLock(ExecutorService pool, Callable<Answer> join) {
        CountDownLatch started = new CountDownLatch(1);
        Thread[] joiner = new Thread[1];
        Future<Answer> joined = pool.submit(() -> {
            joiner[0] = Thread.currentThread();
            started.countDown();
            return join.call();
        });
        try {
            started.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (joiner[0].getState() == Thread.State.RUNNABLE && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(joiner[0].getState()).isIn(Thread.State.WAITING, Thread.State.BLOCKED, Thread.State.TIMED_WAITING);
        return joined;
    }
}
