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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.tierlog.groups.GroupCoordinatorTest.parts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Static members (Kafka's {@code group.instance.id}): a new process under an instance id takes its predecessor's
 * partitions without moving any, the predecessor is fenced, and a member that left for a while (epoch -2) keeps its
 * partitions until its session ends. Real state files, a ManualClock.
 */
class StaticMembershipTest {
    static final long SESSION = 10_000;
    static final Duration SKEW = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    GroupCoordinator coordinator;

    @BeforeEach
    void setUp() {
        coordinator = coordinatorOnTheVolume();
    }

    /** Another coordinator (another service instance) on the same state files. */
    private GroupCoordinator coordinatorOnTheVolume() {
        return new GroupCoordinator(new GroupStateStore(dir), t -> 6, clock, SKEW);
    }

    private static Heartbeat join(String memberId, String instanceId) {
        return new Heartbeat(memberId, 0, Set.of("orders"), SESSION, List.of(), "c", instanceId);
    }

    private static Heartbeat beat(HeartbeatAnswer last, String instanceId) {
        return new Heartbeat(last.memberId(), last.memberEpoch(), null, 0, last.assignment(), "c", instanceId);
    }

    /** Two static members, "a" and "b", 3 partitions each, reconciled. */
    private HeartbeatAnswer[] stableGroupOfTwo(JoinRules rules) {
        HeartbeatAnswer a = coordinator.heartbeat("g", join("a-1", "a"), rules);
        HeartbeatAnswer b = coordinator.heartbeat("g", join("b-1", "b"), rules);
        for (int i = 0; i < 3; i++) {
            a = coordinator.heartbeat("g", beat(a, "a"), rules);
            b = coordinator.heartbeat("g", beat(b, "b"), rules);
        }
        assertThat(parts(a)).hasSize(3);
        assertThat(parts(b)).hasSize(3).doesNotContainAnyElementsOf(parts(a));
        return new HeartbeatAnswer[]{a, b};
    }

    private long groupEpoch() {
        return coordinator.describe("g").orElseThrow().groupEpoch();
    }

    private static ErrorType typeOf(Throwable e) {
        return ((TierlogException) e).type();
    }

    @Test
    void aRestartedClassicMemberTakesOverItsPartitionsAndNothingElseMoves() {
        HeartbeatAnswer[] ab = stableGroupOfTwo(JoinRules.CLIENT_IDS_TAKE_OVER);
        long epochBefore = groupEpoch();

        // The restarted process never said the old one stopped: it joins under a new member id, on another instance.
        GroupCoordinator other = coordinatorOnTheVolume();
        HeartbeatAnswer a2 = other.heartbeat("g", join("a-2", "a"), JoinRules.CLIENT_IDS_TAKE_OVER);
        assertThat(a2.memberId()).isEqualTo("a-2");
        assertThat(parts(a2)).isEqualTo(parts(ab[0]));
        assertThat(a2.memberEpoch()).isGreaterThan(ab[0].memberEpoch());
        assertThat(groupEpoch()).as("no new target").isEqualTo(epochBefore);

        HeartbeatAnswer b = coordinator.heartbeat("g", beat(ab[1], "b"), JoinRules.CLIENT_IDS_TAKE_OVER);
        assertThat(b.memberEpoch()).as("b saw no rebalance").isEqualTo(ab[1].memberEpoch());
        assertThat(parts(b)).isEqualTo(parts(ab[1]));
        assertThat(coordinator.describe("g").orElseThrow().members())
                .extracting(GroupDescription.MemberDescription::memberId).containsExactlyInAnyOrder("a-2", "b-1");
    }

    @Test
    void theReplacedProcessIsFencedAndCannotCommit() {
        HeartbeatAnswer[] ab = stableGroupOfTwo(JoinRules.CLIENT_IDS_TAKE_OVER);
        coordinator.heartbeat("g", join("a-2", "a"), JoinRules.CLIENT_IDS_TAKE_OVER);

        assertThatThrownBy(() -> coordinator.heartbeat("g", beat(ab[0], "a"), JoinRules.CLIENT_IDS_TAKE_OVER))
                .extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.FENCED_INSTANCE);
        List<TopicPartition> itsOwn = ab[0].assignment().get(0).partitions().stream()
                .map(p -> new TopicPartition("orders", p)).toList();
        AtomicBoolean committed = new AtomicBoolean();
        assertThatThrownBy(() -> coordinator.commitHeld("g", "a-1", "a", ab[0].memberEpoch(), itsOwn,
                () -> committed.set(true))).extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.FENCED_INSTANCE);
        assertThat(committed).isFalse();
        // Its rejoin under its old id, as a stale classic member would, may not take the instance back from a live
        // holder unless it is a fresh join (the listener asks CLIENT_IDS for that case).
        assertThatThrownBy(() -> coordinator.heartbeat("g", join("a-1", "a"), JoinRules.CLIENT_IDS))
                .extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.UNRELEASED_INSTANCE);
        assertThat(coordinator.describe("g").orElseThrow().members())
                .extracting(GroupDescription.MemberDescription::memberId).containsExactlyInAnyOrder("a-2", "b-1");
    }

    @Test
    void aConsumerProtocolJoinWaitsForTheHolderToLeaveThenTakesItsPartitions() {
        HeartbeatAnswer[] ab = stableGroupOfTwo(JoinRules.CLIENT_IDS);
        assertThatThrownBy(() -> coordinator.heartbeat("g", join("a-2", "a"), JoinRules.CLIENT_IDS))
                .extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.UNRELEASED_INSTANCE);

        HeartbeatAnswer left = coordinator.heartbeat("g", new Heartbeat("a-1", Heartbeat.STATIC_LEAVE, null, 0,
                null, "c", "a"), JoinRules.CLIENT_IDS);
        assertThat(left.memberEpoch()).isEqualTo(Heartbeat.STATIC_LEAVE);
        assertThat(coordinator.describe("g").orElseThrow().members()).filteredOn(m -> "a".equals(m.instanceId()))
                .singleElement().satisfies(m -> assertThat(m.memberEpoch()).isEqualTo(Heartbeat.STATIC_LEAVE));
        clock.advanceMillis(SESSION / 2);
        HeartbeatAnswer b = coordinator.heartbeat("g", beat(ab[1], "b"), JoinRules.CLIENT_IDS);
        assertThat(parts(b)).as("a's partitions wait for it").isEqualTo(parts(ab[1]));

        HeartbeatAnswer a2 = coordinator.heartbeat("g", join("a-2", "a"), JoinRules.CLIENT_IDS);
        assertThat(parts(a2)).isEqualTo(parts(ab[0]));
        b = coordinator.heartbeat("g", beat(b, "b"), JoinRules.CLIENT_IDS);
        assertThat(b.memberEpoch()).isEqualTo(ab[1].memberEpoch());
    }

    @Test
    void aMemberThatLeftForAWhileGivesUpItsPartitionsWhenItsSessionEnds() {
        HeartbeatAnswer[] ab = stableGroupOfTwo(JoinRules.CLIENT_IDS);
        clock.advanceMillis(SESSION / 2);
        coordinator.heartbeat("g", new Heartbeat("a-1", Heartbeat.STATIC_LEAVE, null, 0, null, "c", "a"),
                JoinRules.CLIENT_IDS);
        assertThatThrownBy(() -> coordinator.heartbeat("g", beat(ab[0], "a"), JoinRules.CLIENT_IDS))
                .as("it left: a heartbeat of its old life is refused")
                .extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.FENCED_MEMBER);

        // b keeps heartbeating; the session of a counts from its leave.
        HeartbeatAnswer b = ab[1];
        for (long waited = 0; waited < SESSION; waited += SESSION / 5) {
            clock.advanceMillis(SESSION / 5);
            b = coordinator.heartbeat("g", beat(b, "b"), JoinRules.CLIENT_IDS);
            assertThat(parts(b)).hasSize(3);
        }
        clock.advance(SKEW.plusMillis(1));
        b = coordinator.heartbeat("g", beat(b, "b"), JoinRules.CLIENT_IDS);
        b = coordinator.heartbeat("g", beat(b, "b"), JoinRules.CLIENT_IDS);
        assertThat(parts(b)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThatThrownBy(() -> coordinator.heartbeat("g", beat(ab[0], "a"), JoinRules.CLIENT_IDS))
                .extracting(StaticMembershipTest::typeOf).isEqualTo(ErrorType.UNKNOWN_MEMBER);
    }

    @Test
    void aStaticMemberIsRemovedByItsInstanceIdAlone() {
        HeartbeatAnswer[] ab = stableGroupOfTwo(JoinRules.CLIENT_IDS_TAKE_OVER);
        long epochBefore = groupEpoch();
        // Admin's removeMembersFromConsumerGroup names the instance id only.
        coordinator.heartbeat("g", new Heartbeat(null, Heartbeat.LEAVE, null, 0, null, null, "a"),
                JoinRules.CLIENT_IDS_TAKE_OVER);
        assertThat(groupEpoch()).isGreaterThan(epochBefore);
        HeartbeatAnswer b = coordinator.heartbeat("g", beat(ab[1], "b"), JoinRules.CLIENT_IDS_TAKE_OVER);
        assertThat(parts(b)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThatThrownBy(() -> coordinator.heartbeat("g", new Heartbeat(null, Heartbeat.LEAVE, null, 0, null, null,
                "a"), JoinRules.CLIENT_IDS_TAKE_OVER)).extracting(StaticMembershipTest::typeOf)
                .isEqualTo(ErrorType.UNKNOWN_MEMBER);
    }

    @Test
    void badStaticRequestsAreRefusedAndChangeNothing() {
        stableGroupOfTwo(JoinRules.CLIENT_IDS);
        var before = coordinator.describe("g").orElseThrow();
        Map<Heartbeat, String> bad = Map.of(
                new Heartbeat("a-1", Heartbeat.STATIC_LEAVE, null, 0, null, "c", null), "instanceId",
                join("c-1", "has space"), "instanceId",
                join("c-1", "x".repeat(250)), "instanceId",
                new Heartbeat("a-1", -3, null, 0, null, "c", "a"), "memberEpoch");
        bad.forEach((hb, field) -> assertThatThrownBy(() -> coordinator.heartbeat("g", hb, JoinRules.CLIENT_IDS))
                .isInstanceOfSatisfying(TierlogException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
                    assertThat(e.extra()).containsEntry("field", field);
                }));
        assertThat(coordinator.describe("g").orElseThrow()).isEqualTo(before);
    }
}
