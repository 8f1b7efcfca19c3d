package io.tierlog.groups;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The durable state of a group whose members assign among themselves, Kafka's classic protocol as its broker runs
 * it: rounds of JoinGroup that every member must enter, a generation per completed round, a leader that computes
 * the assignment and hands it over in SyncGroup. Stored inside the group's {@link GroupState}, so one locked
 * read-modify-write covers both kinds of membership. Mutable, not thread-safe, lives inside one such write.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
final class ClassicGroup {
    enum Phase {
        /** No members. */
        EMPTY,
        /** A round is open: members (re)join until every one has or the round's deadline passes. */
        PREPARING_REBALANCE,
        /** The round closed into a generation: the leader's SyncGroup with the assignment is awaited. */
        COMPLETING_REBALANCE,
        /** Every member has its assignment of the current generation. */
        STABLE
    }

    public Phase phase = Phase.EMPTY;
    /** Grows with every round that closes, also one that closes empty. */
    public int generation;
    /** The members' protocol type ({@code consumer}, {@code connect}, ...): fixed while the group has members. */
    public String protocolType;
    /** The protocol (assignor) of the current generation, chosen among those every member supports. */
    public String protocolName;
    public String leader;
    /** Wall-clock ms: an open round closes at the latest then; the leader's SyncGroup is due by then. */
    public long deadlineMs;
    /** Wall-clock ms before which a round of a group that was empty does not close (more members may come). */
    public long initialDelayUntilMs;
    /** Member ids handed out with MEMBER_ID_REQUIRED (KIP-394), by when they must join with it (wall ms). */
    public TreeMap<String, Long> pendingIds = new TreeMap<>();
    public TreeMap<String, Member> members = new TreeMap<>();
    /** Counts joins, so the earliest member of a round can be told (the leader when the old one is gone). */
    public long joinCount;

    boolean active() {
        return !members.isEmpty() || !pendingIds.isEmpty();
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class Member {
        public String memberId;
        /** A static member's {@code group.instance.id}, unique in the group; null for a dynamic member. */
        public String instanceId;
        public String clientId;
        public String clientHost;
        public int sessionTimeoutMs;
        public int rebalanceTimeoutMs;
        /** The protocols it supports, in its order of preference, with its metadata for each. */
        public List<Protocol> protocols = new ArrayList<>();
        /** Whether it has joined the open round. */
        public boolean joined;
        /** When it joined (the group's {@link #joinCount}): the first joined member leads a round without leader. */
        public long joinedAt;
        /** The generation it is part of; -1 before its first round closed. */
        public int generation = -1;
        /** Whether it sent SyncGroup for its generation. */
        public boolean synced;
        /** Its assignment of {@link #generation}, as the leader sent it (opaque to the service). */
        public byte[] assignment = new byte[0];
        /** Wall-clock ms of the receiving instance when it was last heard (for people and other instances). */
        public long lastHeartbeatMs;
        /** The coordinator instance that heard it last ({@link SessionClock#instanceId}). */
        public String heardBy;
        /** That instance's monotonic ms when it did: meaningful to {@link #heardBy} only. */
        public long heardAtMonotonicMs;

        byte[] metadata(String protocol) {
            for (Protocol p : protocols) {
                if (p.name.equals(protocol)) {
                    return p.metadata;
                }
            }
            return new byte[0];
        }

        boolean supports(String protocol) {
            return protocols.stream().anyMatch(p -> p.name.equals(protocol));
        }
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class Protocol {
        public String name;
        public byte[] metadata = new byte[0];

        Protocol() {
        }

        Protocol(String name, byte[] metadata) {
            this.name = name;
            this.metadata = metadata;
        }

        boolean sameAs(Protocol o) {
            return name.equals(o.name) && java.util.Arrays.equals(metadata, o.metadata);
        }
    }
}
