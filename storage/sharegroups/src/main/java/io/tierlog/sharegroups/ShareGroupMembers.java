package io.tierlog.sharegroups;

import io.tierlog.log.io.LockedStateFile;
import io.tierlog.groups.GroupConfigs;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.groups.SessionClock;
import io.tierlog.groups.SessionClock.Now;
import io.tierlog.groups.TopicPartitions;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.sharegroups.ShareMembersState.AssignedTopic;
import io.tierlog.sharegroups.ShareMembersState.Member;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * The members of share groups as Kafka's share consumers see them (KIP-932's ShareGroupHeartbeat and
 * ShareGroupDescribe): members join under an id they chose, heartbeat with their member epoch, leave, or expire after
 * a session without heartbeats.
 *
 * <p><b>Assignment:</b> every member is assigned every partition of each topic it subscribes to that exists. Records
 * are leased one by one ({@link ShareGroups}), so members need not split partitions. A member's epoch moves to a new
 * group epoch when it joins or when its subscription or assignment changes (a topic created, grown, or re-created), so
 * the client knows to take the new assignment; the group epoch also moves when a member leaves or expires.
 *
 * <p><b>Shared and durable:</b> each group's members are one JSON file ({@link ShareGroupFiles#members}), read fresh
 * and changed under its exclusive file lock by every call, and replaced atomically and fsynced before the call returns:
 * every instance on the hot volume sees the same members, and an answer survives a crash of the process or the
 * machine. Sessions are measured as consumer groups' are ({@link SessionClock}, ADR 0018): on the monotonic clock of
 * the instance that heard the last heartbeat, on the wall clock plus the allowed skew elsewhere.
 *
 * <p>Thread-safe.
 */
public final class ShareGroupMembers {
    /** Kafka's {@code group.share.session.timeout.ms} default. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(45);
    /** Kafka's {@code group.share.heartbeat.interval.ms} default. */
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(5);
    /** The member epoch of a join; the memberId names the member, chosen by the client. */
    public static final int JOIN = 0;
    /** The member epoch of a leave. */
    public static final int LEAVE = -1;

    private final ShareGroupFiles files;
    private final Function<String, Optional<TopicMetadata>> topics;
    private final SessionClock sessions;
    private final long sessionTimeoutMs;
    private final long heartbeatIntervalMs;

    /** What a heartbeat answers: the member's epoch now and its whole assignment. */
    public record Answer(String memberId, int memberEpoch, long heartbeatIntervalMs, List<TopicPartitions> assignment) {
        public Answer {
            assignment = List.copyOf(assignment);
        }
    }

    /**
     * As {@link #ShareGroupMembers(Path, Function, Clock, Duration, Duration, Duration, LongSupplier)} with the
     * monotonic time {@link GroupCoordinator#monotonicOf(Clock)} gives for {@code clock}.
     */
    public ShareGroupMembers(Path dataDir, Function<String, Optional<TopicMetadata>> topics, Clock clock,
                             Duration sessionTimeout, Duration heartbeatInterval, Duration maxClockSkew) {
        this(dataDir, topics, clock, sessionTimeout, heartbeatInterval, maxClockSkew, GroupCoordinator.monotonicOf(clock));
    }

    /**
     * @param topics            a topic by name; empty when it does not exist or may not be subscribed to (internal)
     * @param clock             wall clock: {@code lastHeartbeatMs}, and expiry of members another instance heard
     * @param sessionTimeout    how long a member may go without a heartbeat before it is removed
     * @param heartbeatInterval how often members are asked to heartbeat; below the session timeout
     * @param maxClockSkew      how far apart the clocks of the instances sharing the volume may be
     * @param monotonicMs       this process's monotonic time in ms: expiry of members this instance heard
     */
    public ShareGroupMembers(Path dataDir, Function<String, Optional<TopicMetadata>> topics, Clock clock,
                             Duration sessionTimeout, Duration heartbeatInterval, Duration maxClockSkew,
                             LongSupplier monotonicMs) {
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()
                || heartbeatInterval.compareTo(sessionTimeout) >= 0) {
            throw new IllegalArgumentException("the share heartbeat interval (" + heartbeatInterval
                    + ") must be positive and below the session timeout (" + sessionTimeout + ")");
        }
        this.files = new ShareGroupFiles(dataDir);
        this.topics = topics;
        this.sessions = new SessionClock(clock, maxClockSkew, monotonicMs);
        this.sessionTimeoutMs = sessionTimeout.toMillis();
        this.heartbeatIntervalMs = heartbeatInterval.toMillis();
    }

    /**
     * Joins ({@code memberEpoch} 0: a new member, or a known one starting over), heartbeats (the member's current
     * epoch, or the one before it when the answer that moved it was lost) or leaves (-1), and answers with the member's
     * epoch and whole assignment. Nothing is stored when it throws.
     *
     * @param subscribedTopics the topics the member subscribes to; null: unchanged (required to join)
     * @param rackId           null: unchanged
     * @throws TierlogException {@code unknown-member} (not in the group: never joined, left or expired),
     *                          {@code fenced-member} (another epoch), {@code invalid-group} or {@code bad-request}
     */
    public Answer heartbeat(String group, String memberId, int memberEpoch, List<String> subscribedTopics,
                            String clientId, String rackId) {
        Names.requireValidGroup(group);
        validate(memberId, memberEpoch, subscribedTopics);
        return files.members(group).update(file -> {
            byte[] before = file.read();
            ShareMembersState s = before == null ? new ShareMembersState()
                    : ShareGroupFiles.read(before, ShareMembersState.class);
            Now now = sessions.now();
            expire(s, now);
            Answer answer = memberEpoch == LEAVE ? leave(s, memberId)
                    : heartbeat(s, memberId, memberEpoch, subscribedTopics, clientId, rackId, now);
            byte[] after = ShareGroupFiles.write(s);
            if (!Arrays.equals(before, after)) {
                file.write(after);
            }
            return answer;
        });
    }

    private static Answer leave(ShareMembersState s, String memberId) {
        requireMember(s, memberId);
        s.members.remove(memberId);
        s.groupEpoch++;
        return new Answer(memberId, LEAVE, 0, List.of());
    }

    private Answer heartbeat(ShareMembersState s, String memberId, int memberEpoch, List<String> subscribedTopics,
                             String clientId, String rackId, Now now) {
        Member m;
        if (memberEpoch == JOIN) {
            // Kafka's clients choose their member id; a known id joining again (after a fence) starts over.
            m = s.members.computeIfAbsent(memberId, id -> {
                Member fresh = new Member();
                fresh.memberId = id;
                return fresh;
            });
        } else {
            m = requireMember(s, memberId);
            if (memberEpoch != m.memberEpoch && memberEpoch != m.previousMemberEpoch) {
                throw new TierlogException(ErrorType.FENCED_MEMBER, "member " + memberId + " is at epoch "
                        + m.memberEpoch + ", not " + memberEpoch + ": join again with epoch 0",
                        Map.of("memberId", memberId, "memberEpoch", m.memberEpoch));
            }
        }
        m.clientId = clientId;
        if (rackId != null) {
            m.rackId = rackId;
        }
        m.lastHeartbeatMs = now.wallMs();
        m.heardBy = sessions.instanceId;
        m.heardAtMonotonicMs = now.monotonicMs();
        GroupConfigs configs = new GroupConfigs(GroupConfigs.SHARE, s.configs);
        m.sessionTimeoutMs = configs.sessionTimeoutMs(sessionTimeoutMs);
        boolean subscriptionChanged = false;
        if (subscribedTopics != null) {
            TreeSet<String> subscribed = new TreeSet<>(subscribedTopics);
            subscriptionChanged = !subscribed.equals(m.subscribedTopics);
            m.subscribedTopics = subscribed;
        }
        TreeMap<String, AssignedTopic> assignment = assignment(m.subscribedTopics);
        if (memberEpoch == JOIN || subscriptionChanged || !assignment.equals(m.assigned)) {
            s.groupEpoch++;
            // After a join only a join (epoch 0) passes for an earlier epoch: the earlier life's epochs are void.
            m.previousMemberEpoch = memberEpoch == JOIN ? JOIN : m.memberEpoch;
            m.memberEpoch = s.groupEpoch;
            m.assigned = assignment;
        }
        return new Answer(m.memberId, m.memberEpoch, configs.heartbeatIntervalMs(sessionTimeoutMs, heartbeatIntervalMs),
                partitions(m.assigned));
    }

    /** Every partition of each subscribed topic that exists now. */
    private TreeMap<String, AssignedTopic> assignment(TreeSet<String> subscribed) {
        TreeMap<String, AssignedTopic> out = new TreeMap<>();
        for (String topic : subscribed) {
            // A name that cannot be a topic is a topic that does not exist, as Kafka treats an unknown one.
            Optional<TopicMetadata> meta = Names.isValid(topic) ? topics.apply(topic) : Optional.empty();
            meta.filter(t -> t.partitions() > 0)
                    .ifPresent(t -> out.put(topic, new AssignedTopic(t.id(), t.partitions())));
        }
        return out;
    }

    /** Removes the members whose session ended, as this instance can tell; a new group epoch if any did. */
    private void expire(ShareMembersState s, Now now) {
        boolean any = false;
        for (Iterator<Member> it = s.members.values().iterator(); it.hasNext(); ) {
            Member m = it.next();
            if (sessions.sessionLeftMs(m.lastHeartbeatMs, m.heardBy, m.heardAtMonotonicMs, m.sessionTimeoutMs, now) < 0) {
                it.remove();
                any = true;
            }
        }
        if (any) {
            s.groupEpoch++;
        }
    }

    /**
     * The group's members (expired ones removed on the way, durably), or empty when it never had a member. A look at
     * a group without members file creates nothing.
     *
     * @throws TierlogException {@code invalid-group}
     */
    public Optional<ShareMembersDescription> describe(String group) {
        Names.requireValidGroup(group);
        LockedStateFile members = files.members(group);
        if (members.readUnlocked() == null) {
            return Optional.empty();
        }
        return members.update(file -> {
            byte[] before = file.read();
            if (before == null) {
                return Optional.empty();
            }
            ShareMembersState s = ShareGroupFiles.read(before, ShareMembersState.class);
            if (s.groupEpoch == 0) {
                return Optional.empty(); // configured, never joined
            }
            expire(s, sessions.now());
            byte[] after = ShareGroupFiles.write(s);
            if (!Arrays.equals(before, after)) {
                file.write(after);
            }
            return Optional.of(describe(group, s));
        });
    }

    /**
     * Runs {@code change} only while the group has no members (expired ones removed first), holding the group's
     * members lock throughout: no share consumer can join until it is done, so a change Kafka allows only on an
     * empty share group (altering or deleting its offsets) never runs under a member's feet. Answers empty, running
     * nothing, when the group has members. Creates no members file for a group that has none. {@code change} must not
     * answer null, nor take this group's members lock itself (a JVM cannot hold one file lock twice).
     *
     * @throws TierlogException {@code invalid-group}
     */
    public <T> Optional<T> whileEmpty(String group, Supplier<T> change) {
        return underLockWhileEmpty(group, (file, hadMembersFile) -> change.get());
    }

    /**
     * Deletes the group while it has no members, as {@link #whileEmpty} runs a change: {@code deleteState} (its
     * share-partitions' state and config) runs under the members lock, and the members file goes under the same
     * lock, so a consumer joining meanwhile waits and then joins a new, empty group. Empty while a member is in;
     * else whether there was anything to delete.
     */
    public Optional<Boolean> deleteWhileEmpty(String group, Supplier<Boolean> deleteState) {
        return underLockWhileEmpty(group, (file, hadMembersFile) -> {
            boolean existed = deleteState.get();
            if (hadMembersFile) {
                file.delete();
            }
            return existed || hadMembersFile;
        });
    }

    /** The members lock held, expired members written out; {@code change} runs only when none is left. */
    private <T> Optional<T> underLockWhileEmpty(String group,
                                                BiFunction<LockedStateFile.Session, Boolean, T> change) {
        Names.requireValidGroup(group);
        return files.members(group).update(file -> {
            byte[] before = file.read();
            if (before != null) {
                ShareMembersState s = ShareGroupFiles.read(before, ShareMembersState.class);
                expire(s, sessions.now());
                byte[] after = ShareGroupFiles.write(s);
                if (!Arrays.equals(before, after)) {
                    file.write(after);
                }
                if (!s.members.isEmpty()) {
                    return Optional.empty();
                }
            }
            return Optional.of(change.apply(file, before != null));
        });
    }

    private static ShareMembersDescription describe(String group, ShareMembersState s) {
        List<ShareMembersDescription.Member> members = new ArrayList<>();
        for (Member m : s.members.values()) {
            members.add(new ShareMembersDescription.Member(m.memberId, m.memberEpoch, m.clientId, m.rackId,
                    List.copyOf(m.subscribedTopics), partitions(m.assigned), m.lastHeartbeatMs));
        }
        return new ShareMembersDescription(group, members.isEmpty() ? ShareMembersDescription.State.EMPTY
                : ShareMembersDescription.State.STABLE, s.groupEpoch, members);
    }

    /**
     * The share groups that share consumers joined, of those {@code wanted} by name, described as {@link #describe}
     * does (expired members removed on the way): a listing, reading each wanted group once under its lock and no
     * other group at all.
     */
    public SortedMap<String, ShareMembersDescription> describeAll(Predicate<String> wanted) {
        SortedMap<String, ShareMembersDescription> out = new TreeMap<>();
        for (String group : files.groupsWithMembers()) {
            if (wanted.test(group)) {
                describe(group).ifPresent(d -> out.put(group, d));
            }
        }
        return out;
    }

    /** The group's own session settings as last stored ({@link GroupConfigs#SHARE} keys); none set for a new group. */
    public GroupConfigs configs(String group) {
        Names.requireValidGroup(group);
        byte[] state = files.members(group).readUnlocked();
        return new GroupConfigs(GroupConfigs.SHARE,
                state == null ? new TreeMap<>() : ShareGroupFiles.read(state, ShareMembersState.class).configs);
    }

    /**
     * Changes the group's session settings ({@link GroupConfigs#with}: {@code changes} maps keys to values, null back
     * to the service's default), stored and fsynced before it returns; members take them at their next heartbeat. A
     * group need not have members to be configured, and one never joined is not listed for it.
     *
     * @return the settings now stored
     * @throws TierlogException {@code invalid-config} naming the key, {@code invalid-group}; nothing stored
     */
    public GroupConfigs alterConfigs(String group, Map<String, String> changes) {
        Names.requireValidGroup(group);
        return files.members(group).update(file -> {
            byte[] before = file.read();
            ShareMembersState s = before == null ? new ShareMembersState()
                    : ShareGroupFiles.read(before, ShareMembersState.class);
            GroupConfigs next = new GroupConfigs(GroupConfigs.SHARE, s.configs).with(changes, sessionTimeoutMs);
            s.configs = next.values();
            byte[] after = ShareGroupFiles.write(s);
            if (!Arrays.equals(before, after)) {
                file.write(after);
            }
            return next;
        });
    }

    private static List<TopicPartitions> partitions(TreeMap<String, AssignedTopic> assigned) {
        List<TopicPartitions> out = new ArrayList<>();
        assigned.forEach((topic, a) -> out.add(new TopicPartitions(topic,
                IntStream.range(0, a.partitions()).boxed().toList())));
        return out;
    }

    private static Member requireMember(ShareMembersState s, String memberId) {
        Member m = s.members.get(memberId);
        if (m == null) {
            throw new TierlogException(ErrorType.UNKNOWN_MEMBER, "member " + memberId
                    + " is not in the share group (unknown, left or expired): join again with epoch 0",
                    Map.of("memberId", memberId));
        }
        return m;
    }

    private static void validate(String memberId, int memberEpoch, List<String> subscribedTopics) {
        if (memberId == null || memberId.isBlank()) {
            throw bad("memberId", "memberId is required (a share consumer chooses its own)");
        }
        if (memberEpoch < LEAVE) {
            throw bad("memberEpoch", "memberEpoch must be -1, 0 or the member's epoch: " + memberEpoch);
        }
        if (memberEpoch == JOIN && (subscribedTopics == null || subscribedTopics.isEmpty())) {
            throw bad("subscribedTopics", "subscribedTopics must be set to join");
        }
        if (subscribedTopics != null && subscribedTopics.stream().anyMatch(t -> t == null)) {
            throw bad("subscribedTopics", "subscribedTopics must not hold null");
        }
    }

    private static TierlogException bad(String field, String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", field));
    }
}
