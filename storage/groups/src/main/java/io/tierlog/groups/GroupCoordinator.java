package io.tierlog.groups;

import io.tierlog.groups.SessionClock.Now;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Consumer-group membership and assignment, protocol-neutral (HTTP heartbeats, and the Kafka listener's group
 * APIs): members, member epochs, the group epoch, the target assignment, each member's current assignment, session
 * expiry and reconciliation, as Kafka's KIP-848 protocol, and static members (KIP-345) whose instance id carries
 * their partitions across restarts.
 *
 * <p><b>Stateless per call:</b> every call is one locked read-modify-write of the group's file in
 * {@link GroupStateStore}; nothing is kept in memory between calls, so any process on the same hot volume
 * answers any member, and a restart or kill -9 loses nothing that was answered.
 *
 * <p><b>One owner per partition:</b> a member <i>holds</i> the partitions it was granted plus those it was asked
 * to give up that its last heartbeat still listed in {@code ownedPartitions}. A partition is granted only when no
 * other member holds it, so it moves only after its owner stopped listing it, left, or expired.
 *
 * <p><b>Expiry and clocks:</b> a member's session runs from the arrival of its last heartbeat. The instance that
 * received it expires the member once {@code sessionTimeoutMs} has passed on its own monotonic clock (one clock,
 * no skew to allow for, immune to wall-clock steps); any other instance only once its wall clock passes
 * {@code lastHeartbeatMs + sessionTimeoutMs + maxClockSkew}, so with clocks apart by at most {@code maxClockSkew}
 * no instance expires a member before a full session timeout has really passed since its heartbeat arrived. A
 * client must stop consuming once {@code sessionTimeoutMs} passed since it <i>sent</i> its last answered heartbeat
 * (measured on its own monotonic clock), which is no later than either. Commits are checked under the same lock
 * ({@link #commitAs}), so a member that was fenced or expired cannot commit (ADR 0018).
 *
 * <p><b>Prompt reassignment:</b> the answer's {@code heartbeatIntervalMs} is the usual third of the session timeout,
 * shortened (a) while the member waits for partitions another member still holds, and (b) when another member has
 * missed its heartbeats and will expire before this member's next one: the member then heartbeats just after that
 * expiry and takes its share of the dead member's partitions at once (ADR 0018).
 *
 * <p>Thread-safe.
 */
public final class GroupCoordinator {
    private static final System.Logger LOG = System.getLogger(GroupCoordinator.class.getName());
    public static final long MIN_SESSION_TIMEOUT_MS = 100;
    public static final long MAX_SESSION_TIMEOUT_MS = 30 * 60_000L;
    /** Heartbeats come a third of the session timeout apart, at most this far apart. */
    public static final long MAX_HEARTBEAT_INTERVAL_MS = 5_000;
    /** The shortest interval an answer asks for: a member never polls in a tight loop. */
    static final long MIN_HEARTBEAT_INTERVAL_MS = 10;
    /** How long after a silent member's expiry the others are asked to heartbeat: scheduling slack. */
    static final long AFTER_EXPIRY_MS = 10;
    /** Kafka's rule for {@code group.instance.id}. */
    private static final Pattern INSTANCE_ID = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    /** Longest subscription by regular expression kept in a member's state (a state file is read on every call). */
    public static final int MAX_TOPIC_REGEX_CHARS = 1024;
    /** Most client tags a streams member may send (Kafka Streams itself allows 5). */
    static final int MAX_CLIENT_TAGS = 32;
    /** Kafka's consumer protocol type: a classic group of consumers, which the service may take over and assign. */
    public static final String CONSUMER_PROTOCOL_TYPE = "consumer";

    private final long streamsInitialDelayMs;
    private final GroupStateStore store;
    private final PartitionCounts partitionCounts;
    private final SessionClock sessions;

    /**
     * As {@link #GroupCoordinator(GroupStateStore, PartitionCounts, Clock, Duration, LongSupplier)} with the
     * monotonic clock {@link #monotonicOf(Clock)} gives for {@code clock}.
     */
    public GroupCoordinator(GroupStateStore store, PartitionCounts partitionCounts, Clock clock,
                            Duration maxClockSkew) {
        this(store, partitionCounts, clock, maxClockSkew, monotonicOf(clock));
    }

    /**
     * @param clock        wall clock: {@code lastHeartbeatMs}, and expiry of members another instance heard
     * @param maxClockSkew how far apart the clocks of the processes sharing the volume may be; added to the session
     *                     timeout before a member another instance heard is expired
     * @param monotonicMs  this process's monotonic time in ms: expiry of members this coordinator heard
     */
    public GroupCoordinator(GroupStateStore store, PartitionCounts partitionCounts, Clock clock,
                            Duration maxClockSkew, LongSupplier monotonicMs) {
        this(store, partitionCounts, clock, maxClockSkew, monotonicMs, Duration.ZERO);
    }

    /**
     * @param streamsInitialRebalanceDelay how long a streams group that was empty waits for more members before its
     *                                     first tasks go out, where the group sets no
     *                                     {@value GroupConfigs#INITIAL_REBALANCE_DELAY_MS}
     */
    public GroupCoordinator(GroupStateStore store, PartitionCounts partitionCounts, Clock clock,
                            Duration maxClockSkew, LongSupplier monotonicMs, Duration streamsInitialRebalanceDelay) {
        this.store = store;
        this.partitionCounts = partitionCounts;
        this.sessions = new SessionClock(clock, maxClockSkew, monotonicMs);
        this.streamsInitialDelayMs = streamsInitialRebalanceDelay.toMillis();
    }

    /**
     * The monotonic time that goes with {@code clock}: {@link System#nanoTime()} for the system clock (which NTP may
     * step), the clock itself for any other (a test's manual clock is its own monotonic time).
     */
    public static LongSupplier monotonicOf(Clock clock) {
        if (clock.equals(Clock.systemUTC()) || clock.equals(Clock.systemDefaultZone())) {
            return () -> System.nanoTime() / 1_000_000;
        }
        return clock::millis;
    }

    /**
     * Joins, heartbeats or leaves, and answers with the member's full current assignment.
     *
     * @throws TierlogException {@code unknown-member} (unknown or expired id), {@code fenced-member} (an epoch
     *                          other than the member's current one), {@code invalid-group}, {@code invalid-topic}
     *                          or {@code bad-request}; the stored state is then unchanged
     */
    public HeartbeatAnswer heartbeat(String group, Heartbeat hb) {
        return heartbeat(group, hb, JoinRules.COORDINATOR_IDS);
    }

    /**
     * As {@link #heartbeat(String, Heartbeat)}, under {@code rules}. With client-chosen ids (Kafka's consumers since
     * KIP-1082) a join (epoch 0) naming an id the group does not know adds the member under that id instead of
     * answering {@code unknown-member}, and a known member's heartbeat may leave its session timeout out
     * ({@code sessionTimeoutMs} 0: unchanged; Kafka's classic Heartbeat carries none).
     *
     * <p><b>Static members</b> (an {@code instanceId}, Kafka's {@code group.instance.id}): a join under an instance id
     * another member holds replaces that member, keeping its assignment and the group's target, so nothing moves
     * and no other member notices (if the holder is live, only under {@link JoinRules#CLIENT_IDS_TAKE_OVER}; else
     * {@code unreleased-instance}). The replaced member id is gone: its requests that name the instance id are
     * {@code fenced-instance}. Epoch -2 leaves for a while: the member keeps its partitions, unserved, until its
     * session (counted from the leave) ends or its instance id joins again.
     */
    public HeartbeatAnswer heartbeat(String group, Heartbeat hb, JoinRules rules) {
        return heartbeat(group, hb, rules, RegexTopics.UNCHANGED);
    }

    /**
     * As {@link #heartbeat(String, Heartbeat, JoinRules)}, for a caller that takes subscriptions by regular
     * expression: a member's stored expression is resolved by {@code regexTopics} on each of its heartbeats, and the
     * topics it matches join those it names (as Kafka's coordinator unites the two).
     */
    public HeartbeatAnswer heartbeat(String group, Heartbeat hb, JoinRules rules, RegexTopics regexTopics) {
        Names.requireValidGroup(group);
        boolean keepSession = rules.clientChosenIds() && hb.sessionTimeoutMs() == 0 && hb.memberId() != null
                && hb.memberEpoch() >= 0;
        validate(keepSession ? hb.withSessionTimeout(MIN_SESSION_TIMEOUT_MS) : hb);
        return store.update(group, s -> {
            requireNotStreams(group, s);
            return beat(group, s, hb, rules, regexTopics, keepSession);
        });
    }

    /**
     * A heartbeat of a streams group's member (Kafka Streams' rebalance protocol, KIP-1071): the membership,
     * sessions, epochs and revoke-before-reassign of {@link #heartbeat(String, Heartbeat, JoinRules)}, with tasks
     * for partitions. The first member of an empty group sets its topology; each heartbeat configures it against the
     * topics as they are now ({@link StreamsTopology#configure}), and the tasks are divided by the group's assignor
     * as partitions are (each subtopology's tasks as one topic's partitions).
     *
     * @throws TierlogException {@code group-protocol-mismatch} when the group has consumer members, and as
     *                          {@link #heartbeat(String, Heartbeat, JoinRules)}; the stored state is then unchanged
     */
    public StreamsHeartbeatAnswer streamsHeartbeat(String group, StreamsHeartbeat hb) {
        return streamsHeartbeat(group, hb, TaskProgress.NONE);
    }

    /**
     * {@link #streamsHeartbeat(String, StreamsHeartbeat)} with what the member reports of its tasks' state: kept with
     * the group (only for the topology's tasks), so warm-up tasks move once caught up ({@link WarmupTasks}).
     */
    public StreamsHeartbeatAnswer streamsHeartbeat(String group, StreamsHeartbeat hb, TaskProgress progress) {
        Names.requireValidGroup(group);
        if (hb.memberId() == null || hb.memberId().isEmpty()) {
            throw bad("memberId", "a streams member names itself: memberId is required");
        }
        if (hb.topology() != null) {
            hb.topology().validated();
        }
        if (hb.processId() != null && hb.processId().length() > StreamsTopology.MAX_STRING_CHARS) {
            throw bad("processId", "processId must be at most " + StreamsTopology.MAX_STRING_CHARS + " characters");
        }
        if (hb.rackId() != null && hb.rackId().length() > StreamsTopology.MAX_STRING_CHARS) {
            throw bad("rackId", "rackId must be at most " + StreamsTopology.MAX_STRING_CHARS + " characters");
        }
        if (hb.userEndpoint() != null && hb.userEndpoint().host().length() > StreamsTopology.MAX_STRING_CHARS) {
            throw bad("userEndpoint", "userEndpoint's host must be at most " + StreamsTopology.MAX_STRING_CHARS
                    + " characters");
        }
        if (hb.clientTags() != null && (hb.clientTags().size() > MAX_CLIENT_TAGS || hb.clientTags().entrySet().stream()
                .anyMatch(e -> e.getKey().length() > StreamsTopology.MAX_STRING_CHARS || e.getValue() == null
                        || e.getValue().length() > StreamsTopology.MAX_STRING_CHARS))) {
            throw bad("clientTags", "clientTags: at most " + MAX_CLIENT_TAGS + " tags, keys and values of at most "
                    + StreamsTopology.MAX_STRING_CHARS + " characters");
        }
        Heartbeat membership = hb.membership(Set.of());
        validate(membership);
        return store.update(group, s -> {
            Now now = now();
            if (expire(s, now)) {
                retarget(s);
            }
            boolean classicMembers = classicNow(s);
            boolean empty = s.members.isEmpty() && !classicMembers;
            if (classicMembers || !empty && s.streamsTopology == null) {
                throw new TierlogException(ErrorType.GROUP_PROTOCOL_MISMATCH, "group " + group
                        + " is a consumer group, not a streams group", Map.of("group", group));
            }
            if (hb.memberEpoch() == 0 && hb.topology() == null && !s.members.containsKey(hb.memberId())) {
                throw bad("topology", "a joining member (memberEpoch 0) must send its topology");
            }
            if (empty && hb.topology() != null) {
                s.streamsTopology = hb.topology();
                s.streamsShutdown = false;
            }
            if (s.streamsTopology == null) {
                throw new TierlogException(ErrorType.UNKNOWN_MEMBER, "streams group " + group
                        + " has no members: join again with memberEpoch 0 and the topology", Map.of("group", group));
            }
            StreamsTopology.Configured configured = s.streamsTopology.configure(partitionCounts);
            s.streamsTasks = new TreeMap<>(configured.taskCounts());
            GroupConfigs streamsConfigs = new GroupConfigs(GroupConfigs.STREAMS, s.configs);
            long wallMs = now().wallMs();
            long delayMs = streamsConfigs.setting(GroupConfigs.INITIAL_REBALANCE_DELAY_MS, streamsInitialDelayMs);
            if (s.members.isEmpty() && hb.memberEpoch() == 0 && delayMs > 0) {
                // A first member: the tasks wait for the others that start with it (Kafka's initial delay).
                s.streamsAssignFromMs = wallMs + delayMs;
            } else if (s.streamsAssignFromMs != 0 && wallMs >= s.streamsAssignFromMs) {
                s.streamsAssignFromMs = 0;
                retarget(s); // the wait is over: the first tasks go out
            }
            if ((streamsConfigs.standbyReplicas() != s.streamsStandbyReplicas
                    || streamsConfigs.setting(GroupConfigs.WARMUP_REPLICAS) != s.streamsWarmupReplicas)
                    && !s.members.isEmpty()) {
                retarget(s); // the group's standby or warm-up config changed
            }
            HeartbeatAnswer answer = beat(group, s, hb.membership(s.streamsTopology.subtopologyIds()),
                    JoinRules.STREAMS_PROTOCOL, RegexTopics.UNCHANGED, false);
            List<StreamsTopology.Status> statuses = new ArrayList<>(configured.statuses());
            List<TopicPartitions> standby = List.of();
            List<TopicPartitions> warmup = List.of();
            if (answer.memberEpoch() >= 0) {
                GroupState.Member m = s.members.get(answer.memberId());
                if (keepProgress(s, m, progress, configured.taskCounts())) {
                    retarget(s); // its first report, or a warm-up caught up: a held task may move now
                }
                String rack = hb.rackId() == null ? m.rack : hb.rackId().isEmpty() ? null : hb.rackId();
                boolean processChanged = hb.processId() != null && !hb.processId().equals(m.processId);
                TreeMap<String, String> tags = hb.clientTags() == null ? m.clientTags : new TreeMap<>(hb.clientTags());
                if (processChanged || !Objects.equals(rack, m.rack) || !tags.equals(m.clientTags)) {
                    // Known only now for a joining member: standbys go by process and place, so place them again.
                    m.processId = hb.processId() == null ? m.processId : hb.processId();
                    m.rack = rack;
                    m.clientTags = tags;
                    retargetStandbys(s);
                }
                List<String> missing = new ArrayList<>(streamsConfigs.list(GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS));
                missing.removeAll(m.clientTags.keySet());
                if (!missing.isEmpty()) {
                    statuses.add(new StreamsTopology.Status(StreamsTopology.Status.MISSING_CLIENT_TAGS, "Missing "
                            + "required client tags for rack-aware standby assignment: " + missing + ". Configure "
                            + "them via 'client.tag.<tagKey>' in your Streams config."));
                }
                reconcileStandbys(m);
                reconcileWarmups(m);
                long interval = answer.heartbeatIntervalMs();
                if (s.streamsAssignFromMs > wallMs) { // back as the wait ends, for the first tasks
                    interval = Math.max(MIN_HEARTBEAT_INTERVAL_MS, Math.min(interval, s.streamsAssignFromMs - wallMs));
                }
                answer = new HeartbeatAnswer(m.memberId, m.memberEpoch, interval, answer.assignment());
                standby = GroupState.toList(m.standby);
                warmup = GroupState.toList(m.warmup);
                if (hb.topology() != null) {
                    m.topologyEpoch = hb.topology().epoch();
                }
                if (hb.userEndpoint() != null) {
                    m.userEndpoint = hb.userEndpoint().host().isEmpty() ? null : hb.userEndpoint();
                }
                if (m.topologyEpoch < s.streamsTopology.epoch()) {
                    statuses.add(new StreamsTopology.Status(StreamsTopology.Status.STALE_TOPOLOGY, "the member's "
                            + "topology epoch " + m.topologyEpoch + " is below the group's " + s.streamsTopology.epoch()));
                }
            }
            s.streamsShutdown |= hb.shutdownApplication();
            if (s.streamsShutdown) {
                statuses.add(new StreamsTopology.Status(StreamsTopology.Status.SHUTDOWN_APPLICATION,
                        "a member of the application asked every member to shut down"));
            }
            List<StreamsTopology.MemberEndpoint> endpoints = endpoints(s);
            int digest = endpoints.hashCode();
            if (digest != s.streamsEndpointDigest) {
                s.streamsEndpointDigest = digest;
                s.streamsEndpointEpoch++;
            }
            return new StreamsHeartbeatAnswer(answer, standby, warmup,
                    streamsConfigs.setting(GroupConfigs.ACCEPTABLE_RECOVERY_LAG),
                    (int) streamsConfigs.setting(GroupConfigs.TASK_OFFSET_INTERVAL_MS), s.streamsTopology, statuses,
                    s.streamsEndpointEpoch,
                    hb.endpointEpoch() == s.streamsEndpointEpoch ? null : endpoints);
        });
    }

    /** Which topic partitions each member with an endpoint serves (its active tasks'), for interactive queries. */
    private static List<StreamsTopology.MemberEndpoint> endpoints(GroupState s) {
        List<StreamsTopology.MemberEndpoint> out = new ArrayList<>();
        for (GroupState.Member m : s.members.values()) {
            if (m.userEndpoint != null) {
                Set<TopicPartition> read = s.streamsTopology.partitionsRead(GroupState.toSet(m.assigned));
                Set<TopicPartition> standby = s.streamsTopology.partitionsRead(GroupState.toSet(m.standby));
                out.add(new StreamsTopology.MemberEndpoint(m.memberId, m.userEndpoint,
                        GroupState.toList(GroupState.toMap(read)), GroupState.toList(GroupState.toMap(standby))));
            }
        }
        return out;
    }

    /**
     * Before a consumer-group heartbeat: a streams group with members refuses it; an empty one becomes a consumer
     * group (as a group's type follows its members in Kafka).
     */
    private void requireNotStreams(String group, GroupState s) {
        if (s.streamsTopology == null) {
            return;
        }
        if (expire(s, now())) {
            retarget(s);
        }
        if (!s.members.isEmpty()) {
            throw new TierlogException(ErrorType.GROUP_PROTOCOL_MISMATCH, "group " + group
                    + " is a streams group (Kafka Streams' rebalance protocol), not a consumer group",
                    Map.of("group", group));
        }
        s.streamsTopology = null;
        s.streamsTasks = new TreeMap<>();
        s.streamsShutdown = false;
    }

    /** One heartbeat against the group's state, under its lock: the membership steps every kind of member shares. */
    private HeartbeatAnswer beat(String group, GroupState s, Heartbeat hb, JoinRules rules, RegexTopics regexTopics,
                                 boolean keepSession) {
        Now now = now();
        requireNotClassic(group, s, now);
        boolean retarget = expire(s, now);
        if (hb.memberEpoch() == Heartbeat.LEAVE) {
            GroupState.Member m = hb.instanceId() == null ? requireMember(s, hb.memberId())
                    : requireInstanceHolder(s, hb.instanceId(), hb.memberId());
            s.members.remove(m.memberId);
            if (!handBackToRounds(group, s)) {
                retarget(s);
            }
            return new HeartbeatAnswer(m.memberId, Heartbeat.LEAVE, 0, List.of());
        }
        GroupState.Member caller = hb.memberId() == null ? null : s.members.get(hb.memberId());
        if (caller != null && caller.assignsItself && hb.memberEpoch() > 0 && handBackToRounds(group, s)) {
            // Answered, not refused: a refusal would undo the hand-back with the rest of this update. Only one
            // of the members handed back is told so; a joining member makes the group the service's again.
            return new HeartbeatAnswer(hb.memberId(), Heartbeat.LEAVE, 0, List.of());
        }
        if (hb.memberEpoch() == Heartbeat.STATIC_LEAVE) {
            GroupState.Member m = requireInstanceHolder(s, hb.instanceId(), hb.memberId());
            m.departed = true;
            heard(m, now); // its session now runs from the leave
            return new HeartbeatAnswer(m.memberId, Heartbeat.STATIC_LEAVE, 0, List.of());
        }
        GroupState.Member m;
        boolean joinUnderId = rules.clientChosenIds() && hb.memberId() != null && hb.memberEpoch() == 0
                && !s.members.containsKey(hb.memberId());
        if (hb.memberId() == null || joinUnderId) {
            if (hb.memberEpoch() != 0) {
                throw bad("memberEpoch", "memberEpoch must be 0 to join (memberId null): " + hb.memberEpoch());
            }
            if (keepSession) {
                throw bad("sessionTimeoutMs", "a joining member needs a sessionTimeoutMs");
            }
            String memberId = joinUnderId ? hb.memberId() : UUID.randomUUID().toString();
            GroupState.Member holder = hb.instanceId() == null ? null : instanceHolder(s, hb.instanceId());
            if (holder != null) {
                if (!holder.departed && !rules.takesOverLiveInstance()) {
                    throw new TierlogException(ErrorType.UNRELEASED_INSTANCE, "instance id " + hb.instanceId()
                            + " is held by live member " + holder.memberId,
                            Map.of("instanceId", hb.instanceId()));
                }
                m = replace(s, holder, memberId);
            } else {
                m = new GroupState.Member();
                m.memberId = memberId;
                m.instanceId = hb.instanceId();
                s.members.put(m.memberId, m);
                retarget = true;
            }
        } else {
            m = hb.instanceId() == null ? requireMember(s, hb.memberId())
                    : requireInstanceHolder(s, hb.instanceId(), hb.memberId());
            if (m.departed) {
                if (hb.memberEpoch() != 0) {
                    throw fenced(m.memberId, "member " + m.memberId + " left the group (epoch -2): join again");
                }
                // The process that left is back under its own id: its partitions waited for it.
                m.departed = false;
                m.memberEpoch++;
            } else if (hb.memberEpoch() == 0 && m.memberEpoch != 0) {
                // A fenced member rejoining under its id, as KIP-848: it dropped everything when fenced, so
                // its holds are released now instead of at its session's end. Its epoch keeps growing, so
                // no request of its earlier life can pass for one of the new.
                m.assigned.clear();
                m.revoking.clear();
                m.memberEpoch++;
            } else if (hb.memberEpoch() != m.memberEpoch) {
                throw new TierlogException(ErrorType.FENCED_MEMBER, "member " + m.memberId + " is at epoch "
                        + m.memberEpoch + ", not " + hb.memberEpoch(),
                        Map.of("memberId", m.memberId, "memberEpoch", m.memberEpoch));
            }
        }
        heard(m, now);
        m.assignsItself |= hb.assignsItself();
        if (rules.groupSetsSession()) {
            GroupConfigs configs = new GroupConfigs(rules.configKeys(), s.configs);
            m.sessionTimeoutMs = configs.sessionTimeoutMs(keepSession ? m.sessionTimeoutMs : hb.sessionTimeoutMs());
            m.heartbeatIntervalMs = configs.heartbeatIntervalMs();
        } else if (!keepSession) {
            m.sessionTimeoutMs = hb.sessionTimeoutMs();
        }
        m.clientId = hb.clientId();
        if (hb.assignor() != null && !hb.assignor().equals(m.assignor)) {
            m.assignor = hb.assignor();
            retarget = true;
        }
        TreeSet<String> topics = subscription(m, hb, regexTopics);
        if (!topics.equals(m.topics)) {
            m.topics = topics;
            retarget = true;
        }
        if (retarget || !currentCounts(s).equals(s.partitionCounts)) {
            retarget(s);
        }
        reconcile(s, m, owned(hb));
        return new HeartbeatAnswer(m.memberId, m.memberEpoch, nextHeartbeatIn(s, m, now),
                GroupState.toList(m.assigned));
    }

    /** The member's subscription after {@code hb}: its named topics, and those its regular expression matches now. */
    private static TreeSet<String> subscription(GroupState.Member m, Heartbeat hb, RegexTopics regexTopics) {
        TreeSet<String> namedBefore = m.namedTopics != null ? m.namedTopics : m.topics;
        boolean hadRegex = m.topicRegex != null;
        TreeSet<String> named = hb.topics() != null ? new TreeSet<>(hb.topics()) : namedBefore;
        if (hb.topicRegex() != null) {
            m.topicRegex = hb.topicRegex().isEmpty() ? null : hb.topicRegex();
        }
        if (m.topicRegex == null) {
            m.namedTopics = null;
            return named;
        }
        m.namedTopics = named;
        TreeSet<String> all = new TreeSet<>(named);
        Set<String> matched = regexTopics.topics(m.topicRegex);
        if (matched != null) {
            matched.forEach(Names::requireValidTopic);
            all.addAll(matched);
        } else if (hadRegex) {
            // This caller cannot resolve it: keep what the expression matched before.
            m.topics.stream().filter(t -> !namedBefore.contains(t)).forEach(all::add);
        }
        return all;
    }

    private void heard(GroupState.Member m, Now now) {
        m.lastHeartbeatMs = now.wallMs();
        m.heardBy = sessions.instanceId;
        m.heardAtMonotonicMs = now.monotonicMs();
    }

    /**
     * {@code holder} under a new member id: its subscription, target, assignment and holds carry over, so the group's
     * target is not recomputed and no partition moves. Its epoch grows, so nothing of the replaced process passes for
     * the new one.
     */
    private static GroupState.Member replace(GroupState s, GroupState.Member holder, String memberId) {
        s.members.remove(holder.memberId);
        holder.memberId = memberId;
        holder.departed = false;
        holder.memberEpoch++;
        s.members.put(memberId, holder);
        return holder;
    }

    /**
     * Every group with at least one member whose session has not expired, by name: a group whose members have not
     * committed yet exists for listings too. Expired members are expired on the way (as {@link #describe} does).
     */
    public List<String> groupsWithMembers() {
        List<String> out = new ArrayList<>();
        for (String group : store.groups()) {
            describe(group).filter(d -> !d.members().isEmpty()).ifPresent(d -> out.add(group));
        }
        return out;
    }

    /** The groups that have membership state (members now, or had some), by name. */
    public List<String> groups() {
        return store.groups();
    }

    /**
     * As {@link #commitAs}, for Kafka's clients, which commit with the member epoch (or classic generation) they last
     * heard, possibly older than the member's current one when a heartbeat moved it on meanwhile: any epoch up to the
     * current one is accepted; what fences is the partitions, every one of which the member must still hold.
     *
     * @throws TierlogException {@code fenced-member} (an epoch newer than the member's, or a partition it does not
     *                          hold) or {@code unknown-member}; nothing is run
     */
    public void commitHeld(String group, String memberId, int epochAtMost, Collection<TopicPartition> partitions,
                           Runnable commit) {
        commitHeld(group, memberId, null, epochAtMost, partitions, commit);
    }

    /**
     * As {@link #commitHeld(String, String, int, Collection, Runnable)} for a static member naming its instance id:
     * {@code fenced-instance} once another member took the instance id over.
     */
    public void commitHeld(String group, String memberId, String instanceId, int epochAtMost,
                           Collection<TopicPartition> partitions, Runnable commit) {
        Names.requireValidGroup(group);
        store.update(group, s -> {
            if (classicNow(s)) {
                ClassicRounds.requireMayCommit(s.classic, memberId, instanceId, epochAtMost);
                commit.run();
                return null;
            }
            if (expire(s, now())) {
                retarget(s);
            }
            GroupState.Member m = instanceId == null ? requireMember(s, memberId)
                    : requireInstanceHolder(s, instanceId, memberId);
            if (m.departed) {
                throw fenced(memberId, "member " + memberId + " left the group (epoch -2)");
            }
            if (epochAtMost > m.memberEpoch) {
                throw fenced(memberId, "member " + memberId + " is at epoch " + m.memberEpoch + ", not " + epochAtMost);
            }
            Set<TopicPartition> holds = partitionsHeld(s, m);
            for (TopicPartition tp : partitions) {
                if (!holds.contains(tp)) {
                    throw fenced(memberId, "partition " + tp.topic() + "/" + tp.partition()
                            + " is not assigned to member " + memberId);
                }
            }
            commit.run();
            return null;
        });
    }

    /** The group's members and assignment (expired members left out), or empty when it has no state. */
    public Optional<GroupDescription> describe(String group) {
        Names.requireValidGroup(group);
        if (!store.exists(group)) {
            return Optional.empty(); // a look at a group that never had members creates nothing
        }
        return store.update(group, s -> {
            if (expire(s, now())) {
                retarget(s);
            }
            if (classicNow(s)) {
                return Optional.of(describeClassic(group, s.classic));
            }
            if (s.members.isEmpty() && s.groupEpoch == 0) {
                return Optional.empty();
            }
            return Optional.of(describe(group, s));
        });
    }

    /**
     * A streams group's topology, members and tasks (expired members left out); empty when the group is not a
     * streams group.
     */
    public Optional<StreamsGroupDescription> describeStreams(String group) {
        Names.requireValidGroup(group);
        if (!store.exists(group)) {
            return Optional.empty();
        }
        return store.update(group, s -> {
            if (expire(s, now())) {
                retarget(s);
            }
            if (s.streamsTopology == null) {
                return Optional.empty();
            }
            Map<String, StreamsGroupDescription.StreamsMember> members = new TreeMap<>();
            s.members.forEach((id, m) -> members.put(id, new StreamsGroupDescription.StreamsMember(m.processId,
                    m.rack, m.userEndpoint, m.topologyEpoch, GroupState.toList(m.standby),
                    GroupState.toList(m.standbyTarget), GroupState.toList(m.warmup), GroupState.toList(m.warmupTarget),
                    new TreeMap<>(m.taskOffsets), new TreeMap<>(m.clientTags))));
            return Optional.of(new StreamsGroupDescription(describe(group, s), s.streamsTopology,
                    new TreeMap<>(s.streamsTasks), members));
        });
    }

    /**
     * Runs {@code commit} under the group's lock if the member may commit {@code partitions}: always while the
     * group has no members; otherwise only with the current epoch of a member that holds every one of them.
     *
     * @throws TierlogException {@code fenced-member} (no member id while the group has members, another epoch, or
     *                          a partition the member does not hold) or {@code unknown-member}; nothing is run
     */
    public void commitAs(String group, String memberId, Integer memberEpoch, Collection<TopicPartition> partitions,
                         Runnable commit) {
        Names.requireValidGroup(group);
        store.update(group, s -> {
            if (classicNow(s)) {
                ClassicRounds.requireMayCommit(s.classic, memberId, null,
                        memberEpoch == null ? -1 : memberEpoch);
                commit.run();
                return null;
            }
            if (expire(s, now())) {
                retarget(s);
            }
            if (!s.members.isEmpty()) {
                if (memberId == null || memberEpoch == null) {
                    throw fenced(memberId, "the group has members: a commit must name memberId and memberEpoch");
                }
                GroupState.Member m = requireMember(s, memberId);
                if (memberEpoch != m.memberEpoch) {
                    throw fenced(memberId, "member " + memberId + " is at epoch " + m.memberEpoch + ", not "
                            + memberEpoch);
                }
                Set<TopicPartition> holds = partitionsHeld(s, m);
                for (TopicPartition tp : partitions) {
                    if (!holds.contains(tp)) {
                        throw fenced(memberId, "partition " + tp.topic() + "/" + tp.partition()
                                + " is not assigned to member " + memberId);
                    }
                }
            }
            commit.run();
            return null;
        });
    }

    /**
     * Runs {@code action} under the group's lock if the group has no (live) members.
     *
     * @throws TierlogException {@code group-not-empty}
     */
    public <T> T whileEmpty(String group, Supplier<T> action) {
        Names.requireValidGroup(group);
        return store.update(group, s -> {
            requireEmpty(group, s);
            return action.get();
        });
    }

    /** The group's configs as last stored; {@link GroupConfigs#NONE} for a group that has none or no state. */
    public GroupConfigs configs(String group) {
        return configs(group, GroupConfigs.CONSUMER);
    }

    /** The group's configs as last stored, read by one protocol's {@code keys} (every protocol's share one map). */
    public GroupConfigs configs(String group, GroupConfigs.Keys keys) {
        Names.requireValidGroup(group);
        GroupState s = store.read(group);
        return new GroupConfigs(keys, s == null ? new TreeMap<>() : s.configs);
    }

    /**
     * Changes the group's configs under its lock ({@link GroupConfigs#with}: {@code changes} maps keys to new values,
     * null for back to the default), durably, whether or not the group has members; members of Kafka's consumer
     * protocol take them at their next heartbeat. Nothing changes if any is refused.
     *
     * @return the configs now stored
     * @throws TierlogException {@code invalid-config} naming the key
     */
    public GroupConfigs alterConfigs(String group, Map<String, String> changes, long defaultSessionTimeoutMs) {
        return alterConfigs(group, GroupConfigs.CONSUMER, changes, defaultSessionTimeoutMs);
    }

    /** As {@link #alterConfigs(String, Map, long)} for one protocol's {@code keys}. */
    public GroupConfigs alterConfigs(String group, GroupConfigs.Keys keys, Map<String, String> changes,
                                     long defaultSessionTimeoutMs) {
        Names.requireValidGroup(group);
        return store.update(group, s -> {
            GroupConfigs next = new GroupConfigs(keys, s.configs).with(changes, defaultSessionTimeoutMs);
            s.configs = next.values();
            return next;
        });
    }

    /**
     * Deletes the group: under its lock, when it has no members, runs {@code deleteOffsets} (which says whether
     * there were any) and removes the membership state and the group's configs.
     *
     * @throws TierlogException {@code group-not-empty}, or {@code unknown-group} when it had neither members nor
     *                          offsets nor configs
     */
    public void delete(String group, BooleanSupplier deleteOffsets) {
        Names.requireValidGroup(group);
        store.update(group, s -> {
            requireEmpty(group, s);
            boolean hadOffsets = deleteOffsets.getAsBoolean();
            s.deleted = true;
            if (!hadOffsets && s.configs.isEmpty()) {
                throw new TierlogException(ErrorType.UNKNOWN_GROUP, "group " + group + " has no members and no offsets",
                        Map.of("group", group));
            }
            return null;
        });
    }

    private void requireEmpty(String group, GroupState s) {
        if (expire(s, now())) {
            retarget(s);
        }
        int members = s.members.size() + (classicNow(s) ? s.classic.members.size() : 0);
        if (members > 0) {
            throw new TierlogException(ErrorType.GROUP_NOT_EMPTY, "group " + group + " has " + members
                    + " member(s)", Map.of("group", group));
        }
    }

    /** Whether the group is classic (members assigning among themselves), its rounds and sessions brought up to now. */
    private boolean classicNow(GroupState s) {
        if (s.classic == null) {
            return false;
        }
        ClassicRounds.advance(s.classic, sessions, now());
        return s.classic.active();
    }

    /**
     * Before the service assigns in a group whose members assign among themselves (Kafka's classic rounds): a group
     * of consumers becomes the service's, as Kafka 4 upgrades a classic group when a consumer-protocol member joins
     * it; its classic members are dropped, learn so at their next request and join again, served whatever their
     * assignor (ADR 0066). Any other protocol type (Connect's) is refused.
     */
    private void requireNotClassic(String group, GroupState s, Now now) {
        if (s.classic != null) {
            ClassicRounds.advance(s.classic, sessions, now);
            if (s.classic.active()) {
                if (!CONSUMER_PROTOCOL_TYPE.equals(s.classic.protocolType)) {
                    throw new TierlogException(ErrorType.GROUP_PROTOCOL_MISMATCH, "group " + group + " has members "
                            + "that assign partitions among themselves (Kafka's classic protocol, protocol type "
                            + s.classic.protocolType + "): the service cannot assign in it", Map.of("group", group));
                }
                LOG.log(System.Logger.Level.INFO, "group " + group + ": its " + s.classic.members.size()
                        + " classic member(s) that assigned among themselves rejoin, assigned by the service");
                s.classic = null;
            }
        }
    }

    /**
     * Kafka's downgrade of a group it took over from classic members (ADR 0066): when every member left assigns
     * itself ({@link Heartbeat#assignsItself}: the KIP-848 or HTTP members that made the group the service's are
     * gone), the members are dropped, learn so at their next request (a heartbeat answered
     * {@link Heartbeat#LEAVE}, or an unknown member) and join again, and the first join starts their own rounds.
     * Whether it did.
     */
    private boolean handBackToRounds(String group, GroupState s) {
        if (s.members.isEmpty() || !s.members.values().stream().allMatch(m -> m.assignsItself)) {
            return false;
        }
        LOG.log(System.Logger.Level.INFO, "group " + group + ": its " + s.members.size() + " member(s) assign "
                + "among themselves again, the last member the service assigned for having left");
        s.members.clear();
        retarget(s);
        return true;
    }

    /**
     * Expires the group's members this coordinator assigns whose sessions ended (retargeting the rest); whether any
     * is left. For {@link ClassicGroupCoordinator}, which may start a classic group only where none is.
     */
    boolean expireServed(GroupState s, Now now) {
        if (expire(s, now)) {
            retarget(s);
        }
        return !s.members.isEmpty();
    }

    GroupStateStore store() {
        return store;
    }

    SessionClock sessions() {
        return sessions;
    }

    static long heartbeatInterval(long sessionTimeoutMs) {
        return Math.max(1, Math.min(MAX_HEARTBEAT_INTERVAL_MS, sessionTimeoutMs / 3));
    }

    /** The interval {@code m} heartbeats at when nothing is pending: its group's setting, else its session's third. */
    private static long usualInterval(GroupState.Member m) {
        return m.heartbeatIntervalMs > 0 ? m.heartbeatIntervalMs : heartbeatInterval(m.sessionTimeoutMs);
    }

    /** Removes members whose session expired as this instance can tell; true if any was. */
    private boolean expire(GroupState s, Now now) {
        boolean any = false;
        for (Iterator<GroupState.Member> it = s.members.values().iterator(); it.hasNext(); ) {
            if (sessionLeftMs(it.next(), now) < 0) {
                it.remove();
                any = true;
            }
        }
        return any;
    }

    /**
     * How long until this instance may expire {@code m} (negative: it may now). Measured on this process's monotonic
     * clock when this coordinator heard its last heartbeat; otherwise on the wall clock with the skew margin, since
     * another instance's clock wrote {@code lastHeartbeatMs}.
     */
    private long sessionLeftMs(GroupState.Member m, Now now) {
        return sessions.sessionLeftMs(m.lastHeartbeatMs, m.heardBy, m.heardAtMonotonicMs, m.sessionTimeoutMs, now);
    }

    /**
     * The {@code heartbeatIntervalMs} to answer {@code m}: the usual interval, shortened to a tenth of it while
     * {@code m} waits for partitions others still hold (they come as soon as the holders' next heartbeats release
     * them), and to just past the expiry of any member that missed two heartbeats and would expire before
     * {@code m}'s next one (so {@code m} takes its share of that member's partitions at once, not a heartbeat later).
     */
    private long nextHeartbeatIn(GroupState s, GroupState.Member m, Now now) {
        long usual = usualInterval(m);
        long next = usual;
        if (!GroupState.toSet(m.assigned).containsAll(GroupState.toSet(m.target))) {
            next = Math.max(MIN_HEARTBEAT_INTERVAL_MS, usual / 10);
        }
        for (GroupState.Member o : s.members.values()) {
            long left = sessionLeftMs(o, now);
            boolean silent = o.sessionTimeoutMs - left > 2 * usualInterval(o);
            if (o != m && silent && left + 1 + AFTER_EXPIRY_MS < next) {
                next = Math.max(MIN_HEARTBEAT_INTERVAL_MS, left + 1 + AFTER_EXPIRY_MS);
            }
        }
        return Math.min(usual, next);
    }

    private Now now() {
        return sessions.now();
    }

    private Map<String, Integer> currentCounts(GroupState s) {
        Map<String, Integer> counts = new TreeMap<>();
        for (GroupState.Member m : s.members.values()) {
            for (String t : m.topics) {
                // A streams group's "topics" are its subtopologies, with the task counts last configured.
                counts.computeIfAbsent(t, s.streamsTopology != null ? x -> s.streamsTasks.getOrDefault(x, 0)
                        : partitionCounts::partitions);
            }
        }
        return counts;
    }

    /**
     * Recomputes the target assignment from the members' previous targets, with the assignor most members ask for
     * ({@link GroupAssignor#preferred}); a new group epoch.
     */
    private void retarget(GroupState s) {
        s.groupEpoch++;
        s.partitionCounts = new TreeMap<>(currentCounts(s));
        Map<String, Set<String>> subscriptions = new TreeMap<>();
        Map<String, Set<TopicPartition>> previous = new HashMap<>();
        Map<String, Set<TopicPartition>> copies = new HashMap<>();
        Map<String, Map<TopicPartition, Long>> reported = new HashMap<>();
        List<String> named = new ArrayList<>();
        s.members.forEach((id, m) -> {
            subscriptions.put(id, m.topics);
            previous.put(id, GroupState.toSet(m.target));
            Set<TopicPartition> warmCopies = GroupState.toSet(m.standbyTarget);
            warmCopies.addAll(GroupState.toSet(m.warmupTarget));
            copies.put(id, warmCopies);
            reported.put(id, GroupState.toOffsets(m.taskOffsets));
            if (m.assignor != null) {
                named.add(m.assignor);
            }
        });
        GroupAssignor assignor = GroupAssignor.preferred(named);
        s.assignor = assignor.wireName();
        Map<String, Set<TopicPartition>> targets;
        if (s.streamsTopology != null && s.streamsAssignFromMs > now().wallMs()) {
            targets = new HashMap<>(); // waiting for more members of a new group: no tasks yet, nothing to assign
            for (String id : s.members.keySet()) {
                targets.put(id, Set.of());
                s.members.get(id).warmupTarget = new TreeMap<>();
            }
        } else {
            targets = assignor.assign(subscriptions, s.partitionCounts, previous, new WarmState(copies, reported));
            if (s.streamsTopology != null) {
                targets = refineWarmups(s, targets);
            }
        }
        targets.forEach((id, target) -> s.members.get(id).target = GroupState.toMap(target));
        if (s.streamsTopology != null) {
            retargetStandbys(s);
        }
    }

    /**
     * A streams group's targets with moves of stateful tasks to members not caught up held back, and those members'
     * warm-up targets ({@link WarmupTasks}).
     */
    private static Map<String, Set<TopicPartition>> refineWarmups(GroupState s,
                                                                  Map<String, Set<TopicPartition>> ideal) {
        GroupConfigs configs = new GroupConfigs(GroupConfigs.STREAMS, s.configs);
        s.streamsWarmupReplicas = (int) configs.setting(GroupConfigs.WARMUP_REPLICAS);
        Map<String, String> processOf = new HashMap<>();
        Map<String, Map<TopicPartition, Long>> offsets = new HashMap<>();
        Map<String, Set<TopicPartition>> previousWarmups = new HashMap<>();
        // A task's owner is whoever runs it now, else whoever was to run it.
        Map<TopicPartition, String> ownerOf = new HashMap<>();
        s.members.forEach((id, m) -> GroupState.toSet(m.target).forEach(t -> ownerOf.put(t, id)));
        s.members.forEach((id, m) -> m.holds().forEach(t -> ownerOf.put(t, id)));
        Map<String, Set<TopicPartition>> owners = new HashMap<>();
        ownerOf.forEach((t, id) -> owners.computeIfAbsent(id, x -> new HashSet<>()).add(t));
        s.members.forEach((id, m) -> {
            if (m.processId != null) {
                processOf.put(id, m.processId);
            }
            if (m.reportsTaskOffsets) {
                offsets.put(id, GroupState.toOffsets(m.taskOffsets));
            }
            previousWarmups.put(id, GroupState.toSet(m.warmupTarget));
        });
        WarmupTasks.Refined refined = WarmupTasks.refine(ideal, owners,
                s.streamsTopology.statefulSubtopologies(), processOf,
                new WarmupTasks.Progress(offsets, endOffsets(s), configs.setting(GroupConfigs.ACCEPTABLE_RECOVERY_LAG)),
                s.streamsWarmupReplicas, previousWarmups);
        refined.warmup().forEach((id, tasks) -> s.members.get(id).warmupTarget = GroupState.toMap(tasks));
        return refined.active();
    }

    /**
     * Keeps what a streams member reported of its tasks' state (only tasks of the group's topology, so the state stays
     * bounded); whether the targets need computing again: its first report (a joining member's were computed without
     * it), or one of its warm-up tasks caught up, so the held move may go ahead.
     */
    private static boolean keepProgress(GroupState s, GroupState.Member m, TaskProgress progress,
                                        Map<String, Integer> taskCounts) {
        boolean firstReport = progress.offsets() != null && !m.reportsTaskOffsets;
        if (progress.offsets() != null) {
            m.taskOffsets = GroupState.toNested(progress.offsets(), taskCounts);
            m.reportsTaskOffsets = true;
        }
        if (progress.endOffsets() != null) {
            m.taskEndOffsets = GroupState.toNested(progress.endOffsets(), taskCounts);
        }
        if (firstReport) {
            return true; // a joining member's target was computed before its offsets were known
        }
        if (m.warmupTarget.isEmpty() || progress.offsets() == null && progress.endOffsets() == null) {
            return false;
        }
        WarmupTasks.Progress now = new WarmupTasks.Progress(Map.of(m.memberId, GroupState.toOffsets(m.taskOffsets)),
                endOffsets(s), new GroupConfigs(GroupConfigs.STREAMS, s.configs)
                .setting(GroupConfigs.ACCEPTABLE_RECOVERY_LAG));
        return GroupState.toSet(m.warmupTarget).stream().anyMatch(t -> now.caughtUp(m.memberId, t));
    }

    /** Each task's changelog end as far as the members know it: the largest any of them last reported. */
    private static Map<TopicPartition, Long> endOffsets(GroupState s) {
        Map<TopicPartition, Long> out = new HashMap<>();
        s.members.values().forEach(m -> GroupState.toOffsets(m.taskEndOffsets).forEach((t, end) ->
                out.merge(t, end, Math::max)));
        return out;
    }

    /** A streams group's standby targets, after its active targets ({@link StandbyTasks}). */
    private static void retargetStandbys(GroupState s) {
        s.streamsStandbyReplicas = new GroupConfigs(GroupConfigs.STREAMS, s.configs).standbyReplicas();
        Map<String, Set<TopicPartition>> active = new TreeMap<>();
        Map<String, String> processOf = new HashMap<>();
        Map<String, Map<String, String>> placeOf = new HashMap<>();
        Map<String, Set<TopicPartition>> previous = new HashMap<>();
        List<String> tagKeys = new GroupConfigs(GroupConfigs.STREAMS, s.configs)
                .list(GroupConfigs.RACK_AWARE_ASSIGNMENT_TAGS);
        s.members.forEach((id, m) -> {
            active.put(id, GroupState.toSet(m.target));
            if (m.processId != null) {
                processOf.put(id, m.processId);
            }
            Map<String, String> place = new HashMap<>();
            if (m.rack != null) {
                place.put("rack", m.rack);
            }
            tagKeys.forEach(k -> {
                if (m.clientTags.containsKey(k)) {
                    place.put("tag:" + k, m.clientTags.get(k));
                }
            });
            placeOf.put(id, place);
            previous.put(id, GroupState.toSet(m.standbyTarget));
        });
        StandbyTasks.assign(s.streamsStandbyReplicas, s.streamsTopology.statefulSubtopologies(), active, processOf,
                        placeOf, previous)
                .forEach((id, standby) -> {
                    // A member warming a task up restores it already: the warm-up stands in for its standby.
                    GroupState.Member m = s.members.get(id);
                    standby.removeAll(GroupState.toSet(m.warmupTarget));
                    m.standbyTarget = GroupState.toMap(standby);
                });
    }

    /**
     * Moves a streams member's standby tasks to its standby target, leaving out any it still runs as active (the
     * client turns an active task into a standby only after giving it up); the member's epoch grows when they change.
     */
    private static void reconcileStandbys(GroupState.Member m) {
        m.standby = copiesToKeep(m, m.standbyTarget, m.standby);
    }

    /** Moves a streams member's warm-up tasks to its warm-up target, as {@link #reconcileStandbys} moves standbys. */
    private static void reconcileWarmups(GroupState.Member m) {
        m.warmup = copiesToKeep(m, m.warmupTarget, m.warmup);
    }

    /**
     * {@code target} minus what the member still runs as active; its epoch grows when that differs from
     * {@code told}.
     */
    private static TreeMap<String, TreeSet<Integer>> copiesToKeep(GroupState.Member m,
                                                                 Map<String, TreeSet<Integer>> target,
                                                                 Map<String, TreeSet<Integer>> told) {
        Set<TopicPartition> copies = GroupState.toSet(target);
        copies.removeAll(m.holds());
        TreeMap<String, TreeSet<Integer>> granted = GroupState.toMap(copies);
        if (!granted.equals(GroupState.toMap(GroupState.toSet(told)))) {
            m.memberEpoch++;
        }
        return granted;
    }

    /**
     * Moves member {@code m}'s current assignment towards its target: partitions it no longer lists are released;
     * those leaving its target are taken back (held until it stops listing them); those entering its target are
     * granted only if no other member holds them. The member's epoch grows when its assignment changed.
     */
    private static void reconcile(GroupState s, GroupState.Member m, Set<TopicPartition> owned) {
        Set<TopicPartition> target = GroupState.toSet(m.target);
        Set<TopicPartition> assigned = GroupState.toSet(m.assigned);
        Set<TopicPartition> revoking = GroupState.toSet(m.revoking);
        if (owned != null) {
            revoking.retainAll(owned);
        }
        boolean changed = false;
        for (Iterator<TopicPartition> it = assigned.iterator(); it.hasNext(); ) {
            TopicPartition tp = it.next();
            if (!target.contains(tp)) {
                it.remove();
                changed = true;
                if (owned == null || owned.contains(tp)) {
                    revoking.add(tp);
                }
            }
        }
        Set<TopicPartition> heldByOthers = new TreeSet<>(StickyBalancedAssignor.ORDER);
        s.members.values().forEach(o -> {
            if (o != m) {
                heldByOthers.addAll(o.holds());
            }
        });
        for (TopicPartition tp : target) {
            if (!assigned.contains(tp) && (revoking.remove(tp) || !heldByOthers.contains(tp))) {
                assigned.add(tp);
                changed = true;
            }
        }
        m.assigned = GroupState.toMap(assigned);
        m.revoking = GroupState.toMap(revoking);
        if (changed) {
            m.memberEpoch++;
        }
    }

    /** The partitions a member may commit: those it holds, or for a streams member those its tasks read. */
    private static Set<TopicPartition> partitionsHeld(GroupState s, GroupState.Member m) {
        return s.streamsTopology == null ? m.holds() : s.streamsTopology.partitionsRead(m.holds());
    }

    private static GroupDescription describe(String group, GroupState s) {
        List<GroupDescription.MemberDescription> members = new ArrayList<>();
        boolean stable = true;
        for (GroupState.Member m : s.members.values()) {
            members.add(new GroupDescription.MemberDescription(m.memberId, m.clientId,
                    m.departed ? Heartbeat.STATIC_LEAVE : m.memberEpoch, GroupState.toList(m.assigned),
                    m.lastHeartbeatMs, Set.copyOf(m.topics), GroupState.toList(m.target), m.instanceId,
                    m.topicRegex));
            stable &= m.assigned.equals(m.target) && m.revoking.values().stream().allMatch(Set::isEmpty);
        }
        GroupDescription.State state = members.isEmpty() ? GroupDescription.State.EMPTY
                : stable ? GroupDescription.State.STABLE : GroupDescription.State.RECONCILING;
        return new GroupDescription(group, state, s.groupEpoch, members,
                s.assignor == null ? GroupAssignor.UNIFORM.wireName() : s.assignor, s.streamsTopology != null);
    }

    /**
     * A classic group as the service can describe it: its members and generation; their assignments are the
     * leader's, in its assignor's format, so none is shown.
     */
    private static GroupDescription describeClassic(String group, ClassicGroup g) {
        List<GroupDescription.MemberDescription> members = new ArrayList<>();
        for (ClassicGroup.Member m : g.members.values()) {
            members.add(new GroupDescription.MemberDescription(m.memberId, m.clientId, m.generation, List.of(),
                    m.lastHeartbeatMs, Set.of(), List.of(), m.instanceId, null));
        }
        return new GroupDescription(group, g.phase == ClassicGroup.Phase.STABLE ? GroupDescription.State.STABLE
                : GroupDescription.State.RECONCILING, g.generation, members);
    }

    private static Set<TopicPartition> owned(Heartbeat hb) {
        if (hb.ownedPartitions() == null) {
            return null;
        }
        Set<TopicPartition> owned = new TreeSet<>(StickyBalancedAssignor.ORDER);
        hb.ownedPartitions().forEach(tps -> tps.partitions().forEach(p -> owned.add(new TopicPartition(tps.topic(), p))));
        return owned;
    }

    private static GroupState.Member requireMember(GroupState s, String memberId) {
        GroupState.Member m = memberId == null ? null : s.members.get(memberId);
        if (m == null) {
            throw new TierlogException(ErrorType.UNKNOWN_MEMBER, "member " + memberId
                    + " is not in the group (unknown, left or expired): join again with memberId null",
                    memberId == null ? Map.of() : Map.of("memberId", memberId));
        }
        return m;
    }

    /** The member holding {@code instanceId}, or null. */
    private static GroupState.Member instanceHolder(GroupState s, String instanceId) {
        for (GroupState.Member m : s.members.values()) {
            if (instanceId.equals(m.instanceId)) {
                return m;
            }
        }
        return null;
    }

    /**
     * The member holding {@code instanceId}, which must be {@code memberId} when that is given: {@code unknown-member}
     * when no member holds it, {@code fenced-instance} when another member took it over.
     */
    private static GroupState.Member requireInstanceHolder(GroupState s, String instanceId, String memberId) {
        GroupState.Member m = instanceHolder(s, instanceId);
        if (m == null) {
            throw new TierlogException(ErrorType.UNKNOWN_MEMBER, "no member holds instance id " + instanceId
                    + " (it left or expired): join again", Map.of("instanceId", instanceId));
        }
        if (memberId != null && !memberId.equals(m.memberId)) {
            throw new TierlogException(ErrorType.FENCED_INSTANCE, "instance id " + instanceId
                    + " was taken over by member " + m.memberId + "; member " + memberId + " is fenced",
                    Map.of("instanceId", instanceId, "memberId", memberId));
        }
        return m;
    }

    private static void validate(Heartbeat hb) {
        if (hb.memberEpoch() < Heartbeat.STATIC_LEAVE) {
            throw bad("memberEpoch", "memberEpoch must be -2, -1, 0 or a member's epoch: " + hb.memberEpoch());
        }
        if (hb.instanceId() != null && !INSTANCE_ID.matcher(hb.instanceId()).matches()) {
            throw bad("instanceId", "instanceId must match [a-zA-Z0-9._-]{1,249}");
        }
        if (hb.memberEpoch() == Heartbeat.STATIC_LEAVE) {
            if (hb.memberId() == null || hb.instanceId() == null) {
                throw bad(hb.memberId() == null ? "memberId" : "instanceId",
                        "memberId and instanceId are required to leave for a while (memberEpoch -2)");
            }
            return;
        }
        if (hb.memberEpoch() == Heartbeat.LEAVE) {
            if (hb.memberId() == null && hb.instanceId() == null) {
                throw bad("memberId", "memberId (or a static member's instanceId) is required to leave (memberEpoch -1)");
            }
            return;
        }
        if (hb.sessionTimeoutMs() < MIN_SESSION_TIMEOUT_MS || hb.sessionTimeoutMs() > MAX_SESSION_TIMEOUT_MS) {
            throw bad("sessionTimeoutMs", "sessionTimeoutMs must be in [" + MIN_SESSION_TIMEOUT_MS + ", "
                    + MAX_SESSION_TIMEOUT_MS + "]: " + hb.sessionTimeoutMs());
        }
        if (hb.topics() != null) {
            hb.topics().forEach(Names::requireValidTopic);
        }
        if (hb.assignor() != null && GroupAssignor.named(hb.assignor()).isEmpty()) {
            throw bad("assignor", "assignor must be one of " + GroupAssignor.wireNames() + ": " + hb.assignor());
        }
        if (hb.topicRegex() != null && hb.topicRegex().length() > MAX_TOPIC_REGEX_CHARS) {
            throw bad("topicRegex", "topicRegex must be at most " + MAX_TOPIC_REGEX_CHARS + " characters: "
                    + hb.topicRegex().length());
        }
        if (hb.ownedPartitions() != null) {
            for (TopicPartitions tps : hb.ownedPartitions()) {
                Names.requireValidTopic(tps.topic());
                for (int p : tps.partitions()) {
                    if (p < 0) {
                        throw bad("ownedPartitions", "ownedPartitions: partition must be >= 0: " + p);
                    }
                }
            }
        }
    }

    private static TierlogException bad(String field, String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, detail, Map.of("field", field));
    }

    private static TierlogException fenced(String memberId, String detail) {
        return new TierlogException(ErrorType.FENCED_MEMBER, detail,
                memberId == null ? Map.of() : Map.of("memberId", memberId));
    }
}
