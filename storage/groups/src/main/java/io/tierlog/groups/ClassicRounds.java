package io.tierlog.groups;

import io.tierlog.groups.ClassicGroup.Phase;
import io.tierlog.groups.SessionClock.Now;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The state machine of a classic group whose members assign ({@link ClassicGroup}), as functions of its state and
 * the time: rounds opening and closing, sessions and deadlines running out, the protocol vote, who may commit. Run
 * by {@link ClassicGroupCoordinator} for the members' requests and by {@link GroupCoordinator} on every group it
 * reads, inside the group's locked read-modify-write.
 */
final class ClassicRounds {
    private ClassicRounds() {
    }

    /** Kafka's names of the group states. */
    static String stateName(Phase phase) {
        return switch (phase) {
            case EMPTY -> "Empty";
            case PREPARING_REBALANCE -> "PreparingRebalance";
            case COMPLETING_REBALANCE -> "CompletingRebalance";
            case STABLE -> "Stable";
        };
    }

    /**
     * Brings the group up to {@code now}: ids handed out and never used lapse, members whose session ran out leave
     * (those waiting in a join or a sync are timed by the round instead), a round past its deadline closes, and a
     * leader's SyncGroup that did not come in time drops the members that did not sync and opens a round.
     */
    static void advance(ClassicGroup g, SessionClock clock, Now now) {
        g.pendingIds.values().removeIf(until -> until < now.wallMs());
        boolean lost = g.members.values().removeIf(m -> {
            boolean waiting = (g.phase == Phase.PREPARING_REBALANCE && m.joined)
                    || (g.phase == Phase.COMPLETING_REBALANCE && m.synced);
            return !waiting && clock.sessionLeftMs(m.lastHeartbeatMs, m.heardBy, m.heardAtMonotonicMs,
                    m.sessionTimeoutMs, now) < 0;
        });
        if (g.phase == Phase.COMPLETING_REBALANCE && now.wallMs() >= g.deadlineMs) {
            g.members.values().removeIf(m -> !m.synced);
            // The rest waited in their SyncGroup, unable to heartbeat: their sessions run again from now.
            g.members.values().forEach(m -> heard(m, clock, now));
            lost = true;
        }
        if (lost && g.phase != Phase.PREPARING_REBALANCE && g.phase != Phase.EMPTY) {
            prepare(g, now);
        }
        tryClose(g, clock, now);
    }

    /**
     * Refuses a commit unless it comes from a member of the current generation (a group with no members takes any
     * commit, as Kafka's does from clients that only store offsets in it).
     *
     * @throws TierlogException {@code unknown-member}, {@code fenced-instance}, or {@code fenced-member} (another
     *                          generation, or the generation's assignment not handed out yet)
     */
    static void requireMayCommit(ClassicGroup g, String memberId, String instanceId, int generation) {
        if (g.members.isEmpty() && (memberId == null || generation < 0)) {
            return;
        }
        if (memberId == null) {
            throw new TierlogException(ErrorType.FENCED_MEMBER, "the group has members: a commit must name "
                    + "memberId and its generation", Map.of());
        }
        ClassicError refused = check(g, memberId, instanceId, generation);
        if (refused == ClassicError.NONE && g.phase == Phase.COMPLETING_REBALANCE) {
            refused = ClassicError.REBALANCE_IN_PROGRESS;
        }
        switch (refused) {
            case NONE -> {
            }
            case UNKNOWN_MEMBER_ID -> throw new TierlogException(ErrorType.UNKNOWN_MEMBER, "member " + memberId
                    + " is not in the group (unknown, left or expired)", Map.of("memberId", memberId));
            case FENCED_INSTANCE_ID -> throw new TierlogException(ErrorType.FENCED_INSTANCE, "instance id "
                    + instanceId + " was taken over by another member", Map.of("memberId", memberId));
            default -> throw new TierlogException(ErrorType.FENCED_MEMBER, "member " + memberId + " may not commit "
                    + "at generation " + generation + " (group at generation " + g.generation + ", "
                    + stateName(g.phase) + ")", Map.of("memberId", memberId));
        }
    }

    static ClassicError check(ClassicGroup g, String memberId, String instanceId, int generation) {
        ClassicGroup.Member m = g.members.get(memberId);
        if (m == null) {
            return instanceId != null && instanceHolder(g, instanceId) != null ? ClassicError.FENCED_INSTANCE_ID
                    : ClassicError.UNKNOWN_MEMBER_ID;
        }
        if (instanceId != null && !instanceId.equals(m.instanceId)) {
            return ClassicError.FENCED_INSTANCE_ID;
        }
        return generation == g.generation ? ClassicError.NONE : ClassicError.ILLEGAL_GENERATION;
    }

    /** Opens a round: every member must join it by the longest rebalance timeout among them. */
    static void prepare(ClassicGroup g, Now now) {
        g.phase = Phase.PREPARING_REBALANCE;
        int longest = 0;
        for (ClassicGroup.Member m : g.members.values()) {
            m.joined = false;
            m.synced = false;
            longest = Math.max(longest, m.rebalanceTimeoutMs);
        }
        g.deadlineMs = now.wallMs() + longest;
        g.initialDelayUntilMs = 0;
    }

    /** Closes the open round if every member joined (and an empty group's initial wait is over) or time is up. */
    static void tryClose(ClassicGroup g, SessionClock clock, Now now) {
        if (g.phase != Phase.PREPARING_REBALANCE) {
            return;
        }
        boolean everyone = g.members.values().stream().allMatch(m -> m.joined);
        boolean due = now.wallMs() >= g.deadlineMs;
        if (!due && !(everyone && now.wallMs() >= g.initialDelayUntilMs)) {
            return;
        }
        g.members.values().removeIf(m -> !m.joined);
        g.generation++;
        if (g.members.isEmpty()) {
            g.phase = Phase.EMPTY;
            g.protocolType = null;
            g.protocolName = null;
            g.leader = null;
            return;
        }
        g.protocolName = chooseProtocol(g);
        if (g.leader == null || !g.members.containsKey(g.leader)) {
            g.leader = g.members.values().stream().min(Comparator.comparingLong(m -> m.joinedAt)).orElseThrow()
                    .memberId;
        }
        g.phase = Phase.COMPLETING_REBALANCE;
        int longest = g.members.values().stream().mapToInt(m -> m.rebalanceTimeoutMs).max().orElse(0);
        g.deadlineMs = now.wallMs() + longest;
        for (ClassicGroup.Member m : g.members.values()) {
            m.generation = g.generation;
            m.joined = false;
            m.synced = false;
            m.assignment = new byte[0];
            heard(m, clock, now); // its session runs again from the round's end
        }
    }

    /** Kafka's vote: each member names its first choice among the protocols every member supports; most votes win. */
    private static String chooseProtocol(ClassicGroup g) {
        Set<String> common = null;
        for (ClassicGroup.Member m : g.members.values()) {
            Set<String> names = new LinkedHashSet<>();
            m.protocols.forEach(p -> names.add(p.name));
            if (common == null) {
                common = names;
            } else {
                common.retainAll(names);
            }
        }
        Map<String, Integer> votes = new HashMap<>();
        for (ClassicGroup.Member m : g.members.values()) {
            for (ClassicGroup.Protocol p : m.protocols) {
                if (common.contains(p.name)) {
                    votes.merge(p.name, 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        for (String name : common) {
            if (best == null || votes.getOrDefault(name, 0) > votes.getOrDefault(best, 0)) {
                best = name;
            }
        }
        return best;
    }

    static void heard(ClassicGroup.Member m, SessionClock clock, Now now) {
        m.lastHeartbeatMs = now.wallMs();
        m.heardBy = clock.instanceId;
        m.heardAtMonotonicMs = now.monotonicMs();
    }

    static ClassicGroup.Member instanceHolder(ClassicGroup g, String instanceId) {
        for (ClassicGroup.Member m : g.members.values()) {
            if (instanceId.equals(m.instanceId)) {
                return m;
            }
        }
        return null;
    }
}
