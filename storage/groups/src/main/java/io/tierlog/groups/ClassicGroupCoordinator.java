package io.tierlog.groups;

import io.tierlog.groups.ClassicGroup.Phase;
import io.tierlog.groups.SessionClock.Now;
import io.tierlog.log.Names;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Groups whose members assign among themselves: Kafka's classic group protocol as Kafka's broker runs it, for the
 * clients whose assignment the service cannot compute (Kafka Streams, Kafka Connect, any custom assignor).
 *
 * <p><b>Rounds.</b> A join, a leave or an expired session opens a round; every member must join it (their
 * heartbeats answer REBALANCE_IN_PROGRESS until they do). It closes when every member has joined, or at its
 * deadline (the longest rebalance timeout of the members) without those that did not. Closing makes a generation: a
 * protocol every member supports (by the members' first choices), a leader (the old one if it joined again, else
 * the first to join), and an answer to each waiting join; the leader's lists every member with its metadata. The
 * leader's SyncGroup carries each member's assignment; the other members' SyncGroups wait for it and are answered
 * with their own. A group that was empty waits {@code initialRebalanceDelay} more for further members before its
 * first round closes (Kafka's {@code group.initial.rebalance.delay.ms}).
 *
 * <p><b>Stateless per call</b>, as {@link GroupCoordinator}: each call is one locked read-modify-write of the group's
 * state file, shared with it (a group is either classic or coordinator-assigned while it has members). Waiting is
 * the caller's: a join or sync that must wait is answered {@code pending}, and the caller asks again
 * ({@link #awaitJoin}, {@link #awaitSync}) until it is answered; any instance on the volume may close a round.
 * Deadlines and sessions are checked on every call ({@link #advance}).
 *
 * <p><b>Static members</b> (KIP-345): a process joining under the {@code group.instance.id} of a member takes its
 * place under a new member id (the old id is FENCED_INSTANCE_ID from then on). In a stable group, if it is not the
 * leader and its protocols are unchanged, nothing moves: it is answered at once and its SyncGroup gets the old
 * assignment; otherwise a round opens.
 *
 * <p>Thread-safe.
 */
public final class ClassicGroupCoordinator {
    /** Members per group at most (Kafka's {@code group.max.size} is unbounded; each call reads the whole state). */
    public static final int MAX_MEMBERS = 1000;
    /** Protocol metadata per member at most, all protocols together. */
    public static final int MAX_PROTOCOL_BYTES = 1 << 20;
    private static final Pattern INSTANCE_ID = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    /** In every member id this coordinator hands out (see {@link #handsOut}). */
    private static final String ROUNDS_MARK = "-rounds-";

    private final GroupCoordinator shared;
    private final GroupStateStore store;
    private final SessionClock clock;
    private final long initialDelayMs;

    /**
     * @param shared                the coordinator of the same volume: its state files and clocks are shared
     * @param initialRebalanceDelay how long the first round of an empty group waits for more members
     */
    public ClassicGroupCoordinator(GroupCoordinator shared, Duration initialRebalanceDelay) {
        this.shared = shared;
        this.store = shared.store();
        this.clock = shared.sessions();
        this.initialDelayMs = initialRebalanceDelay.toMillis();
    }

    /** One protocol (assignor) a member supports, with its metadata for it (opaque to the service). */
    public record Protocol(String name, byte[] metadata) {
    }

    /**
     * A JoinGroup.
     *
     * @param memberId         null for a member that has none yet
     * @param memberIdRequired whether a dynamic member without id is first given one (KIP-394, JoinGroup v4+)
     */
    public record Join(String memberId, String instanceId, String clientId, String clientHost, String protocolType,
                       List<Protocol> protocols, int sessionTimeoutMs, int rebalanceTimeoutMs,
                       boolean memberIdRequired) {
    }

    /** A member as the leader is told of it: its metadata for the chosen protocol. */
    public record Joined(String memberId, String instanceId, byte[] metadata) {
    }

    /**
     * A JoinGroup's answer; when {@code pending}, none yet: ask {@link #awaitJoin} with {@code memberId} and
     * {@code generation} (the generation its round will follow).
     */
    public record JoinAnswer(ClassicError error, String memberId, int generation, String protocolType,
                             String protocolName, String leader, List<Joined> members, boolean pending,
                             boolean served) {
        static JoinAnswer error(ClassicError error, String memberId) {
            return new JoinAnswer(error, memberId, -1, null, null, null, List.of(), false, false);
        }

        static JoinAnswer waiting(String memberId, int generation) {
            return new JoinAnswer(ClassicError.NONE, memberId, generation, null, null, null, List.of(), true, false);
        }

        /** Not this coordinator's: the service assigns the group, so the join is {@link GroupCoordinator}'s. */
        static JoinAnswer served(String memberId) {
            return new JoinAnswer(ClassicError.NONE, memberId, -1, null, null, null, List.of(), false, true);
        }
    }

    /** A SyncGroup's answer; when {@code pending}, none yet: ask {@link #awaitSync}. */
    public record SyncAnswer(ClassicError error, String protocolType, String protocolName, byte[] assignment,
                             boolean pending) {
        static SyncAnswer error(ClassicError error) {
            return new SyncAnswer(error, null, null, new byte[0], false);
        }
    }

    /** A member as DescribeGroups shows it. */
    public record MemberInfo(String memberId, String instanceId, String clientId, String clientHost, byte[] metadata,
                             byte[] assignment, long lastHeartbeatMs) {
    }

    /**
     * A classic group as DescribeGroups shows it.
     *
     * @param state Kafka's name: Empty, PreparingRebalance, CompletingRebalance or Stable
     */
    public record Description(String state, int generation, String protocolType, String protocolName, String leader,
                              List<MemberInfo> members) {
    }

    /** Whether the group is classic now: it has classic members, or ids handed out for joining. */
    public boolean active(String group) {
        return onClassic(group, () -> false, g -> true);
    }

    public JoinAnswer join(String group, Join join) {
        Names.requireValidGroup(group);
        if (join.sessionTimeoutMs() < GroupCoordinator.MIN_SESSION_TIMEOUT_MS
                || join.sessionTimeoutMs() > GroupCoordinator.MAX_SESSION_TIMEOUT_MS) {
            return JoinAnswer.error(ClassicError.INVALID_SESSION_TIMEOUT, join.memberId());
        }
        if (join.protocolType() == null || join.protocolType().isEmpty() || join.protocols().isEmpty()
                || (join.instanceId() != null && !INSTANCE_ID.matcher(join.instanceId()).matches())
                || join.rebalanceTimeoutMs() <= 0 || join.protocols().stream().mapToLong(p -> p.metadata().length).sum()
                > MAX_PROTOCOL_BYTES) {
            return JoinAnswer.error(join.protocols().isEmpty() ? ClassicError.INCONSISTENT_GROUP_PROTOCOL
                    : ClassicError.INVALID_REQUEST, join.memberId());
        }
        return store.update(group, s -> {
            Now now = clock.now();
            if (shared.expireServed(s, now)) {
                // Members the service assigns (HTTP, KIP-848, classic with a standard assignor): a consumer joins
                // them there whatever its assignor, as Kafka serves a classic member of a consumer group.
                return GroupCoordinator.CONSUMER_PROTOCOL_TYPE.equals(join.protocolType())
                        ? JoinAnswer.served(join.memberId())
                        : JoinAnswer.error(ClassicError.INCONSISTENT_GROUP_PROTOCOL, join.memberId());
            }
            boolean fresh = s.classic == null;
            if (fresh) {
                s.classic = new ClassicGroup();
            }
            ClassicGroup g = s.classic;
            ClassicRounds.advance(g, clock, now);
            JoinAnswer answer = join(g, join, now);
            if (fresh && !g.active()) {
                s.classic = null; // a refused first join leaves no state behind
            }
            return answer;
        });
    }

    private JoinAnswer join(ClassicGroup g, Join join, Now now) {
        ClassicGroup.Member m = join.memberId() == null ? null : g.members.get(join.memberId());
        ClassicGroup.Member holder = join.instanceId() == null ? null
                : ClassicRounds.instanceHolder(g, join.instanceId());
        if (!g.members.isEmpty() && !join.protocolType().equals(g.protocolType)) {
            return JoinAnswer.error(ClassicError.INCONSISTENT_GROUP_PROTOCOL, join.memberId());
        }
        if (!sharesAProtocol(g, join, m == null ? holder : m)) {
            return JoinAnswer.error(ClassicError.INCONSISTENT_GROUP_PROTOCOL, join.memberId());
        }
        if (m != null) {
            if (join.instanceId() != null && !join.instanceId().equals(m.instanceId)) {
                return JoinAnswer.error(ClassicError.FENCED_INSTANCE_ID, join.memberId());
            }
            return rejoin(g, m, join, now);
        }
        if (join.memberId() != null) {
            if (holder != null) {
                // A process replaced under its instance id, joining under its old member id.
                return JoinAnswer.error(ClassicError.FENCED_INSTANCE_ID, join.memberId());
            }
            if (g.pendingIds.remove(join.memberId()) == null) {
                return JoinAnswer.error(ClassicError.UNKNOWN_MEMBER_ID, join.memberId());
            }
            return newMember(g, join.memberId(), join, now);
        }
        if (holder != null) {
            return takeOver(g, holder, join, now);
        }
        if (join.memberIdRequired() && join.instanceId() == null) {
            String id = newMemberId(join.clientId());
            g.pendingIds.put(id, now.wallMs() + join.sessionTimeoutMs());
            return JoinAnswer.error(ClassicError.MEMBER_ID_REQUIRED, id);
        }
        return newMember(g, newMemberId(join.clientId()), join, now);
    }

    /** A known member joining again: in the open round, or (stable, nothing changed) answered with its generation. */
    private JoinAnswer rejoin(ClassicGroup g, ClassicGroup.Member m, Join join, Now now) {
        boolean changed = !sameProtocols(m, join.protocols());
        describeJoin(m, join, now);
        if (!changed && !m.memberId.equals(g.leader) && m.generation == g.generation
                && (g.phase == Phase.STABLE || g.phase == Phase.COMPLETING_REBALANCE)) {
            return answer(g, m);
        }
        if (g.phase != Phase.PREPARING_REBALANCE) {
            ClassicRounds.prepare(g, now);
        }
        return enter(g, m, now);
    }

    private JoinAnswer newMember(ClassicGroup g, String memberId, Join join, Now now) {
        if (g.members.size() >= MAX_MEMBERS) {
            return JoinAnswer.error(ClassicError.GROUP_MAX_SIZE_REACHED, memberId);
        }
        ClassicGroup.Member m = new ClassicGroup.Member();
        m.memberId = memberId;
        m.instanceId = join.instanceId();
        describeJoin(m, join, now);
        boolean wasEmpty = g.members.isEmpty();
        g.members.put(memberId, m);
        if (wasEmpty) {
            g.protocolType = join.protocolType();
            ClassicRounds.prepare(g, now);
            g.initialDelayUntilMs = now.wallMs() + initialDelayMs;
        } else if (g.phase != Phase.PREPARING_REBALANCE) {
            ClassicRounds.prepare(g, now);
        } else if (g.initialDelayUntilMs > now.wallMs()) {
            // Kafka's delayed initial join: each newcomer extends the wait, up to the round's deadline.
            g.initialDelayUntilMs = Math.min(g.deadlineMs, now.wallMs() + initialDelayMs);
        }
        return enter(g, m, now);
    }

    /**
     * A new process under a static member's instance id takes its place (KIP-345). The old member id is gone, so
     * nothing the old process sends passes for the new one.
     */
    private JoinAnswer takeOver(ClassicGroup g, ClassicGroup.Member holder, Join join, Now now) {
        boolean changed = !sameProtocols(holder, join.protocols());
        g.members.remove(holder.memberId);
        String old = holder.memberId;
        holder.memberId = newMemberId(join.clientId());
        g.members.put(holder.memberId, holder);
        boolean wasLeader = old.equals(g.leader);
        if (wasLeader) {
            g.leader = holder.memberId;
        }
        describeJoin(holder, join, now);
        if (!changed && !wasLeader && g.phase == Phase.STABLE && holder.generation == g.generation) {
            return answer(g, holder);
        }
        if (g.phase != Phase.PREPARING_REBALANCE) {
            ClassicRounds.prepare(g, now);
        }
        return enter(g, holder, now);
    }

    /** The member joins the open round, which may close with it. */
    private JoinAnswer enter(ClassicGroup g, ClassicGroup.Member m, Now now) {
        int before = g.generation;
        m.joined = true;
        m.joinedAt = ++g.joinCount;
        ClassicRounds.tryClose(g, clock, now);
        if (g.generation != before && m.generation == g.generation) {
            return answer(g, m);
        }
        return JoinAnswer.waiting(m.memberId, before);
    }

    /**
     * Asks again for a waiting join's answer (also closes a round whose deadline passed).
     *
     * @param afterGeneration the {@code generation} of the pending answer
     */
    public JoinAnswer awaitJoin(String group, String memberId, int afterGeneration) {
        return onClassic(group, () -> JoinAnswer.error(ClassicError.UNKNOWN_MEMBER_ID, memberId), g -> {
            ClassicGroup.Member m = g.members.get(memberId);
            if (m == null) {
                return JoinAnswer.error(ClassicError.UNKNOWN_MEMBER_ID, memberId);
            }
            if (m.generation > afterGeneration && m.generation == g.generation) {
                return answer(g, m);
            }
            if (g.phase == Phase.PREPARING_REBALANCE && m.joined) {
                return JoinAnswer.waiting(memberId, afterGeneration);
            }
            return JoinAnswer.error(ClassicError.REBALANCE_IN_PROGRESS, memberId);
        });
    }

    /**
     * A SyncGroup (UNKNOWN_MEMBER_ID when the group is not classic): the leader's carries every member's
     * assignment ({@code assignments}, by member id; a member it leaves out gets an empty one); a follower's waits
     * for it.
     */
    public SyncAnswer sync(String group, String memberId, String instanceId, int generation, String protocolType,
                           String protocolName, Map<String, byte[]> assignments) {
        return onClassic(group, () -> SyncAnswer.error(ClassicError.UNKNOWN_MEMBER_ID), g -> {
            ClassicError refused = ClassicRounds.check(g, memberId, instanceId, generation);
            if (refused != ClassicError.NONE) {
                return SyncAnswer.error(refused);
            }
            if ((protocolType != null && !protocolType.equals(g.protocolType))
                    || (protocolName != null && !protocolName.equals(g.protocolName))) {
                return SyncAnswer.error(ClassicError.INCONSISTENT_GROUP_PROTOCOL);
            }
            if (g.phase == Phase.PREPARING_REBALANCE) {
                return SyncAnswer.error(ClassicError.REBALANCE_IN_PROGRESS);
            }
            ClassicGroup.Member m = g.members.get(memberId);
            heard(m, clock.now());
            m.synced = true;
            if (g.phase == Phase.COMPLETING_REBALANCE && memberId.equals(g.leader)) {
                for (ClassicGroup.Member each : g.members.values()) {
                    byte[] a = assignments.get(each.memberId);
                    each.assignment = a == null ? new byte[0] : a;
                }
                g.phase = Phase.STABLE;
            }
            return synced(g, m);
        });
    }

    /** Asks again for a waiting follower's assignment. */
    public SyncAnswer awaitSync(String group, String memberId, int generation) {
        return onClassic(group, () -> SyncAnswer.error(ClassicError.UNKNOWN_MEMBER_ID), g -> {
            ClassicGroup.Member m = g.members.get(memberId);
            if (m == null) {
                return SyncAnswer.error(ClassicError.UNKNOWN_MEMBER_ID);
            }
            if (g.generation != generation || g.phase == Phase.PREPARING_REBALANCE) {
                return SyncAnswer.error(ClassicError.REBALANCE_IN_PROGRESS);
            }
            return synced(g, m);
        });
    }

    private static SyncAnswer synced(ClassicGroup g, ClassicGroup.Member m) {
        if (g.phase == Phase.STABLE) {
            return new SyncAnswer(ClassicError.NONE, g.protocolType, g.protocolName, m.assignment, false);
        }
        return new SyncAnswer(ClassicError.NONE, g.protocolType, g.protocolName, new byte[0], true);
    }

    /**
     * A Heartbeat: NONE, or REBALANCE_IN_PROGRESS while a round is open (the member must join it); UNKNOWN_MEMBER_ID
     * when the group is not classic.
     */
    public ClassicError heartbeat(String group, String memberId, String instanceId, int generation) {
        return onClassic(group, () -> ClassicError.UNKNOWN_MEMBER_ID, g -> {
            ClassicError refused = ClassicRounds.check(g, memberId, instanceId, generation);
            if (refused != ClassicError.NONE) {
                return refused;
            }
            heard(g.members.get(memberId), clock.now());
            return g.phase == Phase.PREPARING_REBALANCE ? ClassicError.REBALANCE_IN_PROGRESS : ClassicError.NONE;
        });
    }

    /**
     * A LeaveGroup of one member, named by its member id or its instance id or both; a round opens for the rest.
     * Null when the group is not classic.
     */
    public ClassicError leave(String group, String memberId, String instanceId) {
        return onClassic(group, () -> null, g -> {
            ClassicGroup.Member m = instanceId != null ? ClassicRounds.instanceHolder(g, instanceId)
                    : memberId == null ? null : g.members.get(memberId);
            if (m == null) {
                return ClassicError.UNKNOWN_MEMBER_ID;
            }
            if (memberId != null && !memberId.equals(m.memberId)) {
                return ClassicError.FENCED_INSTANCE_ID;
            }
            g.members.remove(m.memberId);
            Now now = clock.now();
            if (g.phase == Phase.PREPARING_REBALANCE) {
                ClassicRounds.tryClose(g, clock, now);
            } else {
                ClassicRounds.prepare(g, now);
            }
            return ClassicError.NONE;
        });
    }

    /** The group as DescribeGroups shows it, or empty when it is not a classic group (now). */
    public Optional<Description> describe(String group) {
        return onClassic(group, Optional::empty, g -> {
            List<MemberInfo> members = new ArrayList<>();
            for (ClassicGroup.Member m : g.members.values()) {
                members.add(new MemberInfo(m.memberId, m.instanceId, m.clientId, m.clientHost,
                        g.protocolName == null ? new byte[0] : m.metadata(g.protocolName), m.assignment,
                        m.lastHeartbeatMs));
            }
            return Optional.of(new Description(ClassicRounds.stateName(g.phase), g.generation, g.protocolType,
                    g.protocolName, g.leader, members));
        });
    }

    private static boolean sharesAProtocol(ClassicGroup g, Join join, ClassicGroup.Member self) {
        for (Protocol p : join.protocols()) {
            boolean everyone = g.members.values().stream().allMatch(m -> m == self || m.supports(p.name()));
            if (everyone) {
                return true;
            }
        }
        return false;
    }

    private static boolean sameProtocols(ClassicGroup.Member m, List<Protocol> protocols) {
        if (m.protocols.size() != protocols.size()) {
            return false;
        }
        for (int i = 0; i < protocols.size(); i++) {
            if (!m.protocols.get(i).sameAs(new ClassicGroup.Protocol(protocols.get(i).name(),
                    protocols.get(i).metadata()))) {
                return false;
            }
        }
        return true;
    }

    private void describeJoin(ClassicGroup.Member m, Join join, Now now) {
        m.clientId = join.clientId();
        m.clientHost = join.clientHost();
        m.sessionTimeoutMs = join.sessionTimeoutMs();
        m.rebalanceTimeoutMs = join.rebalanceTimeoutMs();
        m.protocols = new ArrayList<>();
        join.protocols().forEach(p -> m.protocols.add(new ClassicGroup.Protocol(p.name(), p.metadata())));
        heard(m, now);
    }

    private JoinAnswer answer(ClassicGroup g, ClassicGroup.Member m) {
        List<Joined> members = new ArrayList<>();
        if (m.memberId.equals(g.leader)) {
            for (ClassicGroup.Member each : g.members.values()) {
                if (each.generation == g.generation) {
                    members.add(new Joined(each.memberId, each.instanceId, each.metadata(g.protocolName)));
                }
            }
        }
        return new JoinAnswer(ClassicError.NONE, m.memberId, g.generation, g.protocolType, g.protocolName, g.leader,
                members, false, false);
    }

    private void heard(ClassicGroup.Member m, Now now) {
        ClassicRounds.heard(m, clock, now);
    }

    /** Kafka's form of member ids (the client id, a dash, a UUID), marked as this coordinator's. */
    private static String newMemberId(String clientId) {
        return (clientId == null ? "" : clientId) + ROUNDS_MARK + UUID.randomUUID();
    }

    /**
     * Whether {@code memberId} is one this coordinator hands out: requests naming it are for the classic rounds, and
     * others (the service-assigned members' ids, which never carry the mark) need no look at this state.
     */
    public static boolean handsOut(String memberId) {
        return memberId != null && memberId.contains(ROUNDS_MARK);
    }

    /**
     * Runs {@code call} on the group's classic state brought up to now, or answers {@code none} if the group is not
     * classic (no classic members, no ids handed out).
     */
    private <T> T onClassic(String group, Supplier<T> none, Function<ClassicGroup, T> call) {
        Names.requireValidGroup(group);
        if (!store.exists(group)) {
            return none.get();
        }
        return store.update(group, s -> {
            if (s.classic == null) {
                return none.get();
            }
            ClassicRounds.advance(s.classic, clock, clock.now());
            return s.classic.active() ? call.apply(s.classic) : none.get();
        });
    }
}
