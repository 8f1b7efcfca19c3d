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
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The reconciliation state machine on real files, with a ManualClock. */
class GroupCoordinatorTest {
    static final long SESSION = 10_000;
    static final Duration SKEW = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    final Map<String, Integer> counts = new ConcurrentHashMap<>(Map.of("orders", 6));
    GroupCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), clock, SKEW);
    }

    static Heartbeat join() {
        return new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "c");
    }

    static Heartbeat beat(HeartbeatAnswer last, List<TopicPartitions> owned) {
        return new Heartbeat(last.memberId(), last.memberEpoch(), Set.of("orders"), SESSION, owned, "c");
    }

    /** Heartbeat as a well-behaved client: it owns exactly what its last answer gave it. */
    HeartbeatAnswer beat(HeartbeatAnswer last) {
        return coordinator.heartbeat("g", beat(last, last.assignment()));
    }

    static Set<Integer> parts(HeartbeatAnswer a) {
        Set<Integer> s = new TreeSet<>();
        a.assignment().forEach(tps -> s.addAll(tps.partitions()));
        return s;
    }

    @Test
    void groupsWithMembersListsGroupsWithLiveMembersOnly() {
        assertThat(coordinator.groupsWithMembers()).isEmpty();
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer h = coordinator.heartbeat("h", join());
        assertThat(coordinator.groupsWithMembers()).containsExactly("g", "h");

        coordinator.heartbeat("h", new Heartbeat(h.memberId(), -1, Set.of("orders"), SESSION, List.of(), "c"));
        assertThat(coordinator.groupsWithMembers()).as("h's only member left").containsExactly("g");

        clock.advance(Duration.ofMillis(SESSION).plus(SKEW).plusMillis(1));
        assertThat(coordinator.groupsWithMembers()).as("g's member expired").isEmpty();
        assertThat(a.memberId()).isNotBlank();
    }

    @Test
    void firstMemberGetsEverythingAndTheEpochGrows() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        assertThat(a.memberId()).isNotBlank();
        assertThat(a.memberEpoch()).isEqualTo(1);
        assertThat(parts(a)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(a.heartbeatIntervalMs()).isEqualTo(SESSION / 3);
        HeartbeatAnswer again = beat(a);
        assertThat(again.memberEpoch()).as("no change, same epoch").isEqualTo(1);
    }

    @Test
    void membersAskingForRangeGetCoPartitionedTopicsTogether() {
        counts.put("payments", 6);
        Set<String> both = Set.of("orders", "payments");
        HeartbeatAnswer a = coordinator.heartbeat("g",
                new Heartbeat(null, 0, both, SESSION, List.of(), "c").withAssignor("range"));
        HeartbeatAnswer b = coordinator.heartbeat("g",
                new Heartbeat(null, 0, both, SESSION, List.of(), "c").withAssignor("range"));
        GroupDescription d = coordinator.describe("g").orElseThrow();
        assertThat(d.assignor()).isEqualTo("range");
        for (GroupDescription.MemberDescription m : d.members()) {
            Map<String, List<Integer>> byTopic = new java.util.TreeMap<>();
            m.target().forEach(tps -> byTopic.put(tps.topic(), tps.partitions()));
            assertThat(byTopic.get("orders")).hasSize(3).isEqualTo(byTopic.get("payments"));
        }
        // Another instance reads the same choice from the volume; the assignor stays while the members ask for it.
        GroupCoordinator other = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), clock,
                SKEW);
        assertThat(other.describe("g").orElseThrow().assignor()).isEqualTo("range");
        HeartbeatAnswer a2 = other.heartbeat("g", new Heartbeat(a.memberId(), a.memberEpoch(), null, SESSION, null,
                "c"));
        assertThat(other.describe("g").orElseThrow().assignor()).as("a heartbeat naming none").isEqualTo("range");

        // One of the two changes to uniform: a tie, which goes to uniform.
        coordinator.heartbeat("g", new Heartbeat(a2.memberId(), a2.memberEpoch(), null, SESSION, null, "c")
                .withAssignor("uniform"));
        assertThat(coordinator.describe("g").orElseThrow().assignor()).isEqualTo("uniform");
        assertThat(b.memberId()).isNotEqualTo(a.memberId());
    }

    @Test
    void anAssignorTheServiceLacksIsRefusedNamingTheField() {
        assertThatThrownBy(() -> coordinator.heartbeat("g", join().withAssignor("sticky")))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                    assertThat(e.getMessage()).contains("assignor");
                });
        assertThat(coordinator.describe("g")).as("nothing kept").isEmpty();
    }

    @Test
    void aJoinerGetsPartitionsOnlyAfterTheirOwnerStopsListingThem() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        assertThat(parts(b)).as("a still holds everything").isEmpty();
        assertThat(b.memberEpoch()).isZero();

        // a's next heartbeat still lists all six: it is told to keep three; the other three are revoking.
        HeartbeatAnswer a2 = beat(a);
        assertThat(parts(a2)).hasSize(3);
        assertThat(a2.memberEpoch()).isEqualTo(2);
        HeartbeatAnswer b2 = beat(b);
        assertThat(parts(b2)).as("a has not confirmed the revocation").isEmpty();
        assertThat(coordinator.describe("g").orElseThrow().state()).isEqualTo(GroupDescription.State.RECONCILING);

        // a's heartbeat now lists only its three: the others are free and b gets them.
        HeartbeatAnswer a3 = beat(a2);
        HeartbeatAnswer b3 = beat(b2);
        assertThat(parts(b3)).hasSize(3).doesNotContainAnyElementsOf(parts(a3));
        assertThat(b3.memberEpoch()).isEqualTo(1);
        assertThat(coordinator.describe("g").orElseThrow().state()).isEqualTo(GroupDescription.State.STABLE);
    }

    @Test
    void aClientThatOmitsOwnedPartitionsKeepsThemUntilItStopsListingThem() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        HeartbeatAnswer a2 = coordinator.heartbeat("g", beat(a, null));
        HeartbeatAnswer b2 = beat(b);
        assertThat(parts(b2)).as("null ownedPartitions: a still owns what it had").isEmpty();
        beat(a2);
        assertThat(parts(beat(b2))).hasSize(3);
    }

    @Test
    void leaveFreesPartitionsAtOnce() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        a = beat(a);
        a = beat(a);
        b = beat(b);
        assertThat(parts(b)).hasSize(3);
        HeartbeatAnswer left = coordinator.heartbeat("g", new Heartbeat(a.memberId(), -1, Set.of(), 0, null, null));
        assertThat(left.memberEpoch()).isEqualTo(-1);
        assertThat(left.assignment()).isEmpty();
        assertThat(parts(beat(b))).containsExactly(0, 1, 2, 3, 4, 5);
        HeartbeatAnswer gone = a;
        assertThatThrownBy(() -> beat(gone)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.UNKNOWN_MEMBER);
    }

    @Test
    void theInstanceThatHeardAMemberLastExpiresItAfterTheSessionTimeoutAndItMustRejoin() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        a = beat(a);
        a = beat(a);
        b = beat(b);
        // a stops heartbeating; b goes on. This coordinator heard a last: one clock, no skew margin.
        clock.advanceMillis(SESSION);
        b = beat(b);
        assertThat(parts(b)).as("not expired before the session timeout").hasSize(3);
        clock.advanceMillis(1);
        b = beat(b);
        assertThat(parts(b)).containsExactly(0, 1, 2, 3, 4, 5);
        HeartbeatAnswer dead = a;
        assertThatThrownBy(() -> beat(dead)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.UNKNOWN_MEMBER);
        assertThat(coordinator.describe("g").orElseThrow().members()).hasSize(1);
    }

    @Test
    void anotherInstanceExpiresAMemberOnlyAfterTheSessionTimeoutPlusSkew() {
        ManualClock behind = new ManualClock(clock.millis() - SKEW.toMillis());
        GroupCoordinator other = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), behind,
                SKEW);
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = other.heartbeat("g", join());
        a = beat(a);
        a = beat(a);
        b = other.heartbeat("g", beat(b, b.assignment()));
        // a, heard last by the first coordinator, stops; b heartbeats to the other one, whose clock is a second
        // behind and so reads a's lastHeartbeatMs as a second in its future.
        for (long step : new long[]{4_000, 4_000, 3_000}) {
            clock.advanceMillis(step);
            behind.advanceMillis(step);
            b = other.heartbeat("g", beat(b, b.assignment()));
        }
        assertThat(parts(b)).as("11 s: another instance waits for the session timeout plus the skew").hasSize(3);
        clock.advanceMillis(SKEW.toMillis());
        behind.advanceMillis(SKEW.toMillis());
        b = other.heartbeat("g", beat(b, b.assignment()));
        assertThat(parts(b)).as("12 s: its clock, a second behind, reads a's session + skew as just over").hasSize(3);
        clock.advanceMillis(1);
        behind.advanceMillis(1);
        b = other.heartbeat("g", beat(b, b.assignment()));
        assertThat(parts(b)).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void aWallClockStepDoesNotExpireAMemberEarly() {
        ManualClock wall = new ManualClock(clock.millis());
        // the wall clock jumps ahead by a minute (NTP); the monotonic clock (the test's clock) does not
        GroupCoordinator stepped = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), wall,
                SKEW, clock::millis);
        HeartbeatAnswer a = stepped.heartbeat("g", join());
        HeartbeatAnswer b = stepped.heartbeat("g", join());
        a = stepped.heartbeat("g", beat(a, a.assignment()));
        a = stepped.heartbeat("g", beat(a, a.assignment()));
        b = stepped.heartbeat("g", beat(b, b.assignment()));
        assertThat(parts(b)).hasSize(3);
        wall.advanceMillis(60_000);
        clock.advanceMillis(SESSION / 2);
        b = stepped.heartbeat("g", beat(b, b.assignment()));
        assertThat(parts(b)).as("a's session has half its time left").hasSize(3);
        assertThat(stepped.heartbeat("g", beat(a, a.assignment())).memberId()).isEqualTo(a.memberId());
    }

    @Test
    void whenAMemberFallsSilentTheOthersAreAskedToHeartbeatJustAfterItExpires() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        a = beat(a);
        a = beat(a);
        b = beat(b);
        long usual = SESSION / 3;
        assertThat(b.heartbeatIntervalMs()).as("a stable group: the usual third of the session").isEqualTo(usual);
        // a falls silent; b heartbeats on time. Once a would expire before b's next heartbeat, b is asked to come
        // back just after a's expiry, and then gets a's partitions.
        clock.advanceMillis(usual);
        b = beat(b);
        assertThat(b.heartbeatIntervalMs()).as("a missed one heartbeat: not yet a suspect").isEqualTo(usual);
        clock.advanceMillis(usual);
        b = beat(b);
        assertThat(b.heartbeatIntervalMs()).as("a expires %d ms from now", SESSION - 2 * usual)
                .isEqualTo(usual);
        clock.advanceMillis(usual - 500);
        b = beat(b);
        long left = SESSION - (3 * usual - 500);
        assertThat(b.heartbeatIntervalMs()).as("just after a's expiry, %d ms from now", left)
                .isEqualTo(left + 1 + GroupCoordinator.AFTER_EXPIRY_MS);
        assertThat(parts(b)).hasSize(3);
        clock.advanceMillis(b.heartbeatIntervalMs());
        b = beat(b);
        assertThat(parts(b)).as("b took a's partitions at the hinted heartbeat").containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(b.heartbeatIntervalMs()).isEqualTo(usual);
    }

    @Test
    void aMemberWaitingForPartitionsHeartbeatsSoonerUntilItHasThem() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        a = beat(a);
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        assertThat(parts(b)).as("a still holds everything").isEmpty();
        assertThat(b.heartbeatIntervalMs()).as("pending: a tenth of the usual").isEqualTo(SESSION / 3 / 10);
        a = beat(a); // a is told to give three up
        a = beat(a); // and does
        b = beat(b);
        assertThat(parts(b)).hasSize(3);
        assertThat(b.heartbeatIntervalMs()).isEqualTo(SESSION / 3);
        assertThat(a.heartbeatIntervalMs()).isEqualTo(SESSION / 3);
    }

    @Test
    void aStaleEpochIsFencedAndARejoinUnderTheSameIdReleasesItsPartitions() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        HeartbeatAnswer a2 = beat(a); // epoch 2, revoking three
        HeartbeatAnswer stale = a;
        assertThatThrownBy(() -> beat(stale)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.FENCED_MEMBER);
        assertThatThrownBy(() -> coordinator.heartbeat("g", beat(a2, a2.assignment()).withEpoch(a2.memberEpoch() + 5)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.FENCED_MEMBER);
        // Fenced, a drops everything and rejoins with epoch 0 under its id: all six are free for b at once.
        HeartbeatAnswer rejoined = coordinator.heartbeat("g", beat(a2, List.of()).withEpoch(0));
        assertThat(rejoined.memberId()).isEqualTo(a.memberId());
        assertThat(rejoined.memberEpoch()).isGreaterThan(a2.memberEpoch());
        HeartbeatAnswer b2 = beat(b);
        assertThat(parts(b2)).hasSize(3).doesNotContainAnyElementsOf(parts(rejoined));
    }

    @Test
    void unknownMemberIs404AndBadInputChangesNothing() {
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat("nobody", 3, Set.of("orders"), SESSION, null, null)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.UNKNOWN_MEMBER);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), 1, null, null)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat(null, 2, Set.of("orders"), SESSION, null, null)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat(null, -1, Set.of(), 0, null, null)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat(null, 0, Set.of("bad/topic"), SESSION, null, null)))
                .extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.INVALID_TOPIC);
        assertThat(coordinator.describe("g")).isEmpty();
    }

    @Test
    void newPartitionsArePickedUp() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        counts.put("orders", 8);
        HeartbeatAnswer a2 = beat(a);
        assertThat(parts(a2)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(a2.memberEpoch()).isGreaterThan(a.memberEpoch());
    }

    @Test
    void commitsAreFencedWhileTheGroupHasMembers() {
        AtomicBoolean ran = new AtomicBoolean();
        List<TopicPartition> p0 = List.of(new TopicPartition("orders", 0));
        coordinator.commitAs("g", null, null, p0, () -> ran.set(true));
        assertThat(ran).as("no members: anyone commits").isTrue();

        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        HeartbeatAnswer b = coordinator.heartbeat("g", join());
        a = beat(a); // a keeps 3, revokes 3 (still its own until its heartbeat stops listing them)
        Set<Integer> kept = parts(a);
        int revoking = new TreeSet<>(Set.of(0, 1, 2, 3, 4, 5)).stream().filter(p -> !kept.contains(p)).findFirst().orElseThrow();
        int keptOne = kept.iterator().next();
        String aId = a.memberId();
        int aEpoch = a.memberEpoch();
        assertFenced(() -> coordinator.commitAs("g", null, null, p0, () -> ran.set(false)));
        assertFenced(() -> coordinator.commitAs("g", aId, aEpoch - 1, List.of(new TopicPartition("orders", keptOne)), () -> ran.set(false)));
        assertFenced(() -> coordinator.commitAs("g", b.memberId(), b.memberEpoch(), List.of(new TopicPartition("orders", revoking)), () -> ran.set(false)));
        assertThat(ran).as("nothing ran").isTrue();

        ran.set(false);
        coordinator.commitAs("g", aId, aEpoch, List.of(new TopicPartition("orders", keptOne),
                new TopicPartition("orders", revoking)), () -> ran.set(true));
        assertThat(ran).as("a revoking partition is still the owner's to commit").isTrue();

        beat(a); // a stops listing the revoked ones
        assertFenced(() -> coordinator.commitAs("g", aId, aEpoch, List.of(new TopicPartition("orders", revoking)), () -> ran.set(false)));
        assertThat(ran).isTrue();
    }

    @Test
    void stateSurvivesARestartAndIsSharedByTwoCoordinators() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        GroupCoordinator other = new GroupCoordinator(new GroupStateStore(dir), t -> counts.getOrDefault(t, 0), clock, SKEW);
        HeartbeatAnswer b = other.heartbeat("g", join());
        a = beat(a);
        a = beat(a);
        HeartbeatAnswer b2 = other.heartbeat("g", beat(b, b.assignment()));
        assertThat(parts(b2)).hasSize(3).doesNotContainAnyElementsOf(parts(a));
        GroupDescription d = new GroupCoordinator(new GroupStateStore(dir), t -> 6, clock, SKEW).describe("g").orElseThrow();
        assertThat(d.members()).hasSize(2);
        assertThat(d.state()).isEqualTo(GroupDescription.State.STABLE);
    }

    @Test
    void deleteAndResetRequireAnEmptyGroup() {
        HeartbeatAnswer a = coordinator.heartbeat("g", join());
        assertThatThrownBy(() -> coordinator.delete("g", () -> true)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.GROUP_NOT_EMPTY);
        assertThatThrownBy(() -> coordinator.whileEmpty("g", () -> 1)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.GROUP_NOT_EMPTY);
        coordinator.heartbeat("g", new Heartbeat(a.memberId(), -1, Set.of(), 0, null, null));
        assertThat(coordinator.whileEmpty("g", () -> 1)).isEqualTo(1);
        assertThatThrownBy(() -> coordinator.delete("g", () -> false)).extracting(e -> ((TierlogException) e).type())
                .isEqualTo(ErrorType.UNKNOWN_GROUP);
        coordinator.heartbeat("g", join());
        clock.advanceMillis(SESSION + SKEW.toMillis() + 1);
        coordinator.delete("g", () -> true);
        assertThat(coordinator.describe("g")).isEmpty();
    }

    private static void assertFenced(Runnable r) {
        assertThatThrownBy(r::run).extracting(e -> ((TierlogException) e).type()).isEqualTo(ErrorType.FENCED_MEMBER);
    }
}
