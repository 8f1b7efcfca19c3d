package io.tierlog.groups;

import io.tierlog.groups.ClassicGroupCoordinator.Join;
import io.tierlog.groups.ClassicGroupCoordinator.JoinAnswer;
import io.tierlog.groups.ClassicGroupCoordinator.Protocol;
import io.tierlog.groups.ClassicGroupCoordinator.SyncAnswer;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's classic protocol with the members' own assignor: rounds every member must join, a leader that assigns,
 * followers that wait for its SyncGroup, deadlines, sessions, static members, commits checked against the
 * generation, and the line between these groups and the ones the service assigns. Real state files, a ManualClock;
 * a second coordinator on the same files stands for another service instance.
 */
class ClassicGroupCoordinatorTest {
    static final int SESSION = 10_000;
    static final int REBALANCE = 30_000;

    @TempDir
    Path dir;
    final ManualClock clock = new ManualClock();
    GroupCoordinator shared;
    ClassicGroupCoordinator classic;

    @BeforeEach
    void setUp() {
        shared = new GroupCoordinator(new GroupStateStore(dir), t -> 4, clock, Duration.ofSeconds(1));
        classic = new ClassicGroupCoordinator(shared, Duration.ZERO);
    }

    private static Join join(String memberId, String instanceId, String... protocols) {
        List<Protocol> ps = java.util.Arrays.stream(protocols)
                .map(p -> new Protocol(p, ("meta-" + p + "-" + instanceId).getBytes(StandardCharsets.UTF_8))).toList();
        return new Join(memberId, instanceId, "client", "/127.0.0.1", "consumer", ps, SESSION, REBALANCE, true);
    }

    /** A dynamic member's two-step join (KIP-394); answers its first join. */
    private JoinAnswer joinNew(ClassicGroupCoordinator c, String group, String... protocols) {
        JoinAnswer first = c.join(group, join(null, null, protocols));
        assertThat(first.error()).isEqualTo(ClassicError.MEMBER_ID_REQUIRED);
        return c.join(group, join(first.memberId(), null, protocols));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Leader a and follower b at one generation, stable, each with its assignment ("for-a", "for-b"). */
    private String[] stableGroupOfTwo() {
        JoinAnswer a = joinNew(classic, "g", "stream");
        assertThat(a.pending()).isFalse();
        assertThat(a.leader()).isEqualTo(a.memberId());
        assertThat(ClassicGroupCoordinator.handsOut(a.memberId())).as("requests naming it are routed here").isTrue();
        assertThat(ClassicGroupCoordinator.handsOut("tierlog-" + java.util.UUID.randomUUID())).isFalse();
        assertThat(ClassicGroupCoordinator.handsOut(java.util.UUID.randomUUID().toString())).isFalse();
        JoinAnswer b = joinNew(classic, "g", "stream");
        assertThat(b.pending()).as("a round is open until a joins again").isTrue();
        assertThat(classic.heartbeat("g", a.memberId(), null, a.generation()))
                .isEqualTo(ClassicError.REBALANCE_IN_PROGRESS);
        JoinAnswer a2 = classic.join("g", join(a.memberId(), null, "stream"));
        assertThat(a2.pending()).isFalse();
        assertThat(a2.generation()).isEqualTo(a.generation() + 1);
        assertThat(a2.leader()).isEqualTo(a.memberId());
        assertThat(a2.members()).extracting(ClassicGroupCoordinator.Joined::memberId)
                .containsExactlyInAnyOrder(a.memberId(), b.memberId());
        JoinAnswer b2 = classic.awaitJoin("g", b.memberId(), b.generation());
        assertThat(b2.pending()).isFalse();
        assertThat(b2.generation()).isEqualTo(a2.generation());
        assertThat(b2.members()).as("only the leader is told the members").isEmpty();
        SyncAnswer bWaits = classic.sync("g", b.memberId(), null, b2.generation(), "consumer", "stream", Map.of());
        assertThat(bWaits.pending()).isTrue();
        SyncAnswer aSynced = classic.sync("g", a.memberId(), null, a2.generation(), "consumer", "stream",
                Map.of(a.memberId(), bytes("for-a"), b.memberId(), bytes("for-b")));
        assertThat(aSynced.assignment()).isEqualTo(bytes("for-a"));
        assertThat(classic.awaitSync("g", b.memberId(), b2.generation()).assignment()).isEqualTo(bytes("for-b"));
        return new String[]{a.memberId(), b.memberId(), Integer.toString(a2.generation())};
    }

    @Test
    void theLeaderAssignsAndEachFollowerGetsWhatTheLeaderGaveIt() {
        String[] ab = stableGroupOfTwo();
        int generation = Integer.parseInt(ab[2]);
        assertThat(classic.heartbeat("g", ab[0], null, generation)).isEqualTo(ClassicError.NONE);
        assertThat(classic.heartbeat("g", ab[1], null, generation)).isEqualTo(ClassicError.NONE);
        assertThat(classic.heartbeat("g", ab[1], null, generation - 1)).isEqualTo(ClassicError.ILLEGAL_GENERATION);
        ClassicGroupCoordinator.Description d = classic.describe("g").orElseThrow();
        assertThat(d.state()).isEqualTo("Stable");
        assertThat(d.protocolName()).isEqualTo("stream");
        assertThat(d.members()).extracting(m -> new String(m.assignment(), StandardCharsets.UTF_8))
                .containsExactlyInAnyOrder("for-a", "for-b");
    }

    @Test
    void theProtocolIsOneEveryMemberSupportsAndAMemberWithNoneInCommonIsRefused() {
        JoinAnswer a = joinNew(classic, "g", "x", "y");
        JoinAnswer b = classic.join("g", join(null, "b", "z", "y"));
        assertThat(b.pending()).isTrue();
        assertThat(classic.join("g", join(null, "c", "w")).error()).isEqualTo(ClassicError.INCONSISTENT_GROUP_PROTOCOL);
        Join connect = new Join(null, "d", "client", "/h", "connect", List.of(new Protocol("y", new byte[0])),
                SESSION, REBALANCE, true);
        assertThat(classic.join("g", connect).error()).isEqualTo(ClassicError.INCONSISTENT_GROUP_PROTOCOL);
        JoinAnswer a2 = classic.join("g", join(a.memberId(), null, "x", "y"));
        assertThat(a2.protocolName()).isEqualTo("y");
        assertThat(a2.members()).filteredOn(m -> "b".equals(m.instanceId())).singleElement()
                .satisfies(m -> assertThat(new String(m.metadata(), StandardCharsets.UTF_8)).isEqualTo("meta-y-b"));
    }

    @Test
    void aMemberThatDoesNotJoinTheRoundByItsDeadlineIsDroppedAndTheRoundClosesWithoutIt() {
        String[] ab = stableGroupOfTwo();
        JoinAnswer c = joinNew(classic, "g", "stream");
        assertThat(c.pending()).isTrue();
        assertThat(classic.join("g", join(ab[0], null, "stream")).pending()).isTrue();
        // b is alive (it heartbeats) but never joins, as a consumer stuck past its max.poll.interval.ms.
        int generation = Integer.parseInt(ab[2]);
        for (int waited = 0; waited < REBALANCE - 5_000; waited += 5_000) {
            clock.advance(Duration.ofMillis(5_000));
            assertThat(classic.heartbeat("g", ab[1], null, generation)).isEqualTo(ClassicError.REBALANCE_IN_PROGRESS);
        }
        clock.advance(Duration.ofMillis(4_999));
        assertThat(classic.awaitJoin("g", c.memberId(), c.generation()).pending()).isTrue();
        clock.advance(Duration.ofMillis(1));
        JoinAnswer closed = classic.awaitJoin("g", c.memberId(), c.generation());
        assertThat(closed.pending()).isFalse();
        assertThat(closed.leader()).isEqualTo(ab[0]);
        JoinAnswer leader = classic.awaitJoin("g", ab[0], c.generation());
        assertThat(leader.members()).extracting(ClassicGroupCoordinator.Joined::memberId)
                .containsExactlyInAnyOrder(ab[0], c.memberId());
        assertThat(classic.heartbeat("g", ab[1], null, closed.generation())).isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aMemberWhoseSessionEndsOpensARoundForTheRest() {
        String[] ab = stableGroupOfTwo();
        int generation = Integer.parseInt(ab[2]);
        clock.advance(Duration.ofMillis(SESSION / 2));
        assertThat(classic.heartbeat("g", ab[0], null, generation)).isEqualTo(ClassicError.NONE);
        clock.advance(Duration.ofMillis(SESSION / 2 + 1));
        assertThat(classic.heartbeat("g", ab[0], null, generation)).as("b's session ended")
                .isEqualTo(ClassicError.REBALANCE_IN_PROGRESS);
        JoinAnswer alone = classic.join("g", join(ab[0], null, "stream"));
        assertThat(alone.pending()).isFalse();
        assertThat(alone.members()).extracting(ClassicGroupCoordinator.Joined::memberId).containsExactly(ab[0]);
    }

    @Test
    void aLeaderThatNeverSyncsIsDroppedAtTheDeadlineAndTheFollowersJoinAgain() {
        JoinAnswer a = joinNew(classic, "g", "stream");
        JoinAnswer b = joinNew(classic, "g", "stream");
        JoinAnswer a2 = classic.join("g", join(a.memberId(), null, "stream"));
        JoinAnswer b2 = classic.awaitJoin("g", b.memberId(), b.generation());
        assertThat(classic.sync("g", b.memberId(), null, b2.generation(), null, null, Map.of()).pending()).isTrue();
        clock.advance(Duration.ofMillis(REBALANCE));
        assertThat(classic.awaitSync("g", b.memberId(), b2.generation()).error())
                .isEqualTo(ClassicError.REBALANCE_IN_PROGRESS);
        assertThat(classic.heartbeat("g", a.memberId(), null, a2.generation())).isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
        JoinAnswer b3 = classic.join("g", join(b.memberId(), null, "stream"));
        assertThat(b3.leader()).isEqualTo(b.memberId());
    }

    @Test
    void aStaticMemberRestartedUnderItsInstanceIdTakesItsPlaceWithoutARoundAndTheOldProcessIsFenced() {
        JoinAnswer a = classic.join("g", join(null, "ia", "stream"));
        JoinAnswer b = classic.join("g", join(null, "ib", "stream"));
        JoinAnswer a2 = classic.join("g", join(a.memberId(), "ia", "stream"));
        JoinAnswer b2 = classic.awaitJoin("g", b.memberId(), b.generation());
        classic.sync("g", a.memberId(), "ia", a2.generation(), null, null,
                Map.of(a.memberId(), bytes("for-a"), b.memberId(), bytes("for-b")));
        classic.awaitSync("g", b.memberId(), b2.generation());

        JoinAnswer restarted = classic.join("g", join(null, "ib", "stream"));
        assertThat(restarted.pending()).as("nothing moves").isFalse();
        assertThat(restarted.generation()).isEqualTo(b2.generation());
        assertThat(restarted.memberId()).isNotEqualTo(b.memberId());
        assertThat(classic.sync("g", restarted.memberId(), "ib", restarted.generation(), null, null, Map.of())
                .assignment()).isEqualTo(bytes("for-b"));
        assertThat(classic.heartbeat("g", b.memberId(), "ib", b2.generation())).isEqualTo(ClassicError.FENCED_INSTANCE_ID);
        assertThat(classic.heartbeat("g", a.memberId(), "ia", a2.generation())).as("the leader saw nothing")
                .isEqualTo(ClassicError.NONE);
        assertThat(classic.join("g", join(b.memberId(), "ib", "stream")).error())
                .isEqualTo(ClassicError.FENCED_INSTANCE_ID);
    }

    @Test
    void commitsAreCheckedAgainstTheGeneration() {
        String[] ab = stableGroupOfTwo();
        int generation = Integer.parseInt(ab[2]);
        AtomicInteger commits = new AtomicInteger();
        List<TopicPartition> any = List.of(new TopicPartition("orders", 0));
        shared.commitHeld("g", ab[1], generation, any, commits::incrementAndGet);
        assertThat(commits).hasValue(1);
        assertThatThrownBy(() -> shared.commitHeld("g", ab[1], generation - 1, any, commits::incrementAndGet))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.FENCED_MEMBER));
        assertThatThrownBy(() -> shared.commitHeld("g", "stranger", generation, any, commits::incrementAndGet))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.UNKNOWN_MEMBER));
        assertThatThrownBy(() -> shared.commitAs("g", null, null, any, commits::incrementAndGet))
                .as("a commit naming no member while the group has members")
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.FENCED_MEMBER));
        assertThat(commits).hasValue(1);
    }

    @Test
    void aConsumerGroupWhoseMembersAssignBecomesTheServicesWhenItAssignsAndTheMembersRejoinThere() {
        String[] ab = stableGroupOfTwo();
        int generation = Integer.parseInt(ab[2]);
        Heartbeat http = new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "http", null);
        HeartbeatAnswer first = shared.heartbeat("g", http);
        assertThat(classic.active("g")).as("no longer a classic group").isFalse();
        assertThat(classic.heartbeat("g", ab[0], null, generation)).as("a learns it at its next heartbeat")
                .isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
        assertThat(classic.join("g", join(null, null, "stream")).served())
                .as("and joins again, served whatever its assignor").isTrue();
        assertThat(first.assignment()).as("nobody else is a member yet").isNotEmpty();
    }

    @Test
    void aGroupOfAnotherProtocolTypeStaysItsMembersAndTheyDoNotJoinOneTheServiceAssigns() {
        Join connect = new Join(null, "w1", "client", "/h", "connect", List.of(new Protocol("sessioned",
                new byte[0])), SESSION, REBALANCE, true);
        JoinAnswer w1 = classic.join("g", connect);
        assertThat(w1.error()).isEqualTo(ClassicError.NONE);
        Heartbeat http = new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "http", null);
        assertThatThrownBy(() -> shared.heartbeat("g", http))
                .isInstanceOfSatisfying(TierlogException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.GROUP_PROTOCOL_MISMATCH));
        assertThatThrownBy(() -> shared.delete("g", () -> true))
                .isInstanceOfSatisfying(TierlogException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.GROUP_NOT_EMPTY));
        assertThat(classic.active("g")).isTrue();

        shared.heartbeat("served", http);
        assertThat(classic.join("served", connect).error()).isEqualTo(ClassicError.INCONSISTENT_GROUP_PROTOCOL);

        assertThat(classic.leave("g", w1.memberId(), null)).isEqualTo(ClassicError.NONE);
        assertThat(classic.active("g")).isFalse();
        assertThat(shared.heartbeat("g", http).assignment()).as("empty again: the service may assign").isNotEmpty();
    }

    @Test
    void anotherInstanceOnTheVolumeClosesTheRoundAndAnswersTheWaitingMembers() {
        ClassicGroupCoordinator other = new ClassicGroupCoordinator(
                new GroupCoordinator(new GroupStateStore(dir), t -> 4, clock, Duration.ofSeconds(1)), Duration.ZERO);
        JoinAnswer a = joinNew(classic, "g", "stream");
        JoinAnswer b = joinNew(other, "g", "stream");
        JoinAnswer a2 = other.join("g", join(a.memberId(), null, "stream"));
        assertThat(a2.members()).hasSize(2);
        JoinAnswer b2 = classic.awaitJoin("g", b.memberId(), b.generation());
        assertThat(b2.generation()).isEqualTo(a2.generation());
        other.sync("g", a.memberId(), null, a2.generation(), null, null, Map.of(b.memberId(), bytes("for-b")));
        assertThat(classic.sync("g", b.memberId(), null, b2.generation(), null, null, Map.of()).assignment())
                .isEqualTo(bytes("for-b"));
    }

    @Test
    void theFirstRoundOfAnEmptyGroupWaitsTheInitialDelayForMoreMembers() {
        ClassicGroupCoordinator delayed = new ClassicGroupCoordinator(shared, Duration.ofSeconds(3));
        JoinAnswer a = joinNew(delayed, "g", "stream");
        assertThat(a.pending()).isTrue();
        clock.advance(Duration.ofSeconds(2));
        JoinAnswer b = joinNew(delayed, "g", "stream");
        assertThat(b.pending()).isTrue();
        clock.advance(Duration.ofSeconds(2));
        assertThat(delayed.awaitJoin("g", a.memberId(), a.generation()).pending()).as("b's join extended the wait")
                .isTrue();
        clock.advance(Duration.ofSeconds(1));
        JoinAnswer a2 = delayed.awaitJoin("g", a.memberId(), a.generation());
        assertThat(a2.pending()).isFalse();
        assertThat(a2.members()).hasSize(2);
    }

    @Test
    void anIdHandedOutButNeverUsedLapsesAndUnknownIdsAreRefused() {
        JoinAnswer first = classic.join("g", join(null, null, "stream"));
        assertThat(first.error()).isEqualTo(ClassicError.MEMBER_ID_REQUIRED);
        assertThat(classic.join("g", join("made-up", null, "stream")).error()).isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
        clock.advance(Duration.ofMillis(SESSION + 1));
        assertThat(classic.join("g", join(first.memberId(), null, "stream")).error())
                .isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
    }

    @Test
    void limitsAreRefusedAndChangeNothing() {
        Join huge = new Join(null, "big", "client", "/h", "consumer",
                List.of(new Protocol("stream", new byte[ClassicGroupCoordinator.MAX_PROTOCOL_BYTES + 1])),
                SESSION, REBALANCE, true);
        assertThat(classic.join("g", huge).error()).isEqualTo(ClassicError.INVALID_REQUEST);
        Join tooShort = new Join(null, "short", "client", "/h", "consumer", List.of(new Protocol("stream",
                new byte[0])), (int) GroupCoordinator.MIN_SESSION_TIMEOUT_MS - 1, REBALANCE, true);
        assertThat(classic.join("g", tooShort).error()).isEqualTo(ClassicError.INVALID_SESSION_TIMEOUT);
        Join badInstance = new Join(null, "no spaces allowed", "client", "/h", "consumer",
                List.of(new Protocol("stream", new byte[0])), SESSION, REBALANCE, true);
        assertThat(classic.join("g", badInstance).error()).isEqualTo(ClassicError.INVALID_REQUEST);
        assertThat(classic.active("g")).as("nothing was stored").isFalse();
        assertThat(classic.describe("g")).isEmpty();
        assertThat(shared.groups()).as("no state file").doesNotContain("g");
    }

    @Test
    void aStaticMemberIsRemovedByItsInstanceIdAlone() {
        JoinAnswer a = classic.join("g", join(null, "ia", "stream"));
        JoinAnswer b = classic.join("g", join(null, "ib", "stream"));
        classic.join("g", join(a.memberId(), "ia", "stream"));
        JoinAnswer b2 = classic.awaitJoin("g", b.memberId(), b.generation());
        assertThat(classic.leave("g", null, "ib")).as("Admin's removeMembersFromConsumerGroup")
                .isEqualTo(ClassicError.NONE);
        assertThat(classic.heartbeat("g", b.memberId(), "ib", b2.generation())).isEqualTo(ClassicError.UNKNOWN_MEMBER_ID);
        assertThat(classic.heartbeat("g", a.memberId(), "ia", b2.generation()))
                .as("a round for the one left").isEqualTo(ClassicError.REBALANCE_IN_PROGRESS);
        assertThat(classic.leave("g", "someone-else", "ia")).isEqualTo(ClassicError.FENCED_INSTANCE_ID);
    }

    @Test
    void aGroupWhoseServiceAssignedMembersAllDiedTakesClassicMembersWithoutAnyOtherCall() {
        shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "http", null));
        assertThat(classic.join("g", join(null, "x", "stream")).served()).as("while the member lives").isTrue();
        clock.advance(Duration.ofMillis(SESSION).plusSeconds(2)); // past its session and the clock-skew margin
        JoinAnswer joined = classic.join("g", join(null, "x", "stream"));
        assertThat(joined.error()).isEqualTo(ClassicError.NONE);
        assertThat(joined.leader()).isEqualTo(joined.memberId());
    }

    /**
     * Kafka's downgrade: the members a group took over that assign themselves are handed back to their own rounds when
     * the last member the service assigned for leaves (at once) or expires (at the next request of one of them).
     */
    @Test
    void aTakenOverGroupGoesBackToItsMembersRoundsWhenTheLastServiceAssignedMemberLeavesOrExpires() {
        for (boolean leaves : new boolean[]{true, false}) {
            String g = leaves ? "leaves" : "expires";
            HeartbeatAnswer kip848 = shared.heartbeat(g, new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(),
                    "kip848", null));
            assertThat(classic.join(g, join(null, null, "stream")).served()).isTrue();
            HeartbeatAnswer x = shared.heartbeat(g, new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "x",
                    null).assigningItself(), JoinRules.CLIENT_IDS);
            if (leaves) {
                shared.heartbeat(g, new Heartbeat(kip848.memberId(), Heartbeat.LEAVE, Set.of(), 0, null, "kip848",
                        null));
            } else {
                // Only x heartbeats on: the KIP-848 member's session ends.
                for (int i = 0; i < 12; i++) {
                    clock.advance(Duration.ofSeconds(1));
                    x = shared.heartbeat(g, new Heartbeat(x.memberId(), x.memberEpoch(), null, 0, null, "x", null),
                            JoinRules.CLIENT_IDS);
                    if (x.memberEpoch() == Heartbeat.LEAVE) {
                        break;
                    }
                }
                assertThat(x.memberEpoch()).as("x is told, answered rather than refused").isEqualTo(Heartbeat.LEAVE);
            }
            assertThat(shared.describe(g).orElseThrow().members()).as(g).isEmpty();
            JoinAnswer rejoined = joinNew(classic, g, "stream");
            assertThat(rejoined.served()).as(g + ": x's join starts its own rounds").isFalse();
            assertThat(rejoined.leader()).isEqualTo(rejoined.memberId());
            assertThat(classic.active(g)).isTrue();
        }
    }

    /**
     * A KIP-848 consumer joining (under the id it chose) a group where only members that assign themselves are left
     * (the HTTP member's expiry found by a describe, which hands nothing back) is served, and hands nobody back.
     */
    @Test
    void aConsumerJoiningWhenOnlyMembersThatAssignThemselvesAreLeftIsServed() {
        shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "http", null));
        HeartbeatAnswer x = shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "x",
                null).assigningItself(), JoinRules.CLIENT_IDS);
        clock.advance(Duration.ofMillis(SESSION / 2));
        x = shared.heartbeat("g", new Heartbeat(x.memberId(), x.memberEpoch(), null, 0, null, "x", null),
                JoinRules.CLIENT_IDS);
        clock.advance(Duration.ofMillis(SESSION / 2).plusSeconds(2)); // the HTTP member's session and the skew margin
        assertThat(shared.describe("g").orElseThrow().members()).as("only x is left").hasSize(1);
        HeartbeatAnswer kip848 = shared.heartbeat("g", new Heartbeat("kip848-id", 0, Set.of("orders"), SESSION,
                List.of(), "kip848", null), JoinRules.CLIENT_IDS);
        assertThat(kip848.memberEpoch()).isPositive();
        assertThat(shared.describe("g").orElseThrow().members()).as("x stays, served").hasSize(2);
    }

    @Test
    void aGroupKeepsBeingTheServicesWhileAMemberItAssignsForIsLeft() {
        HeartbeatAnswer kip848 = shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(),
                "kip848", null));
        shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "x", null)
                .assigningItself(), JoinRules.CLIENT_IDS);
        shared.heartbeat("g", new Heartbeat(null, 0, Set.of("orders"), SESSION, List.of(), "range", null),
                JoinRules.CLIENT_IDS);
        shared.heartbeat("g", new Heartbeat(kip848.memberId(), Heartbeat.LEAVE, Set.of(), 0, null, "kip848", null));
        assertThat(shared.describe("g").orElseThrow().members()).as("a classic member the service assigns for stays")
                .hasSize(2);
    }
}
