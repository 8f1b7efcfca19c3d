package io.tierlog.service.kafka;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.tierlog.groups.ClassicGroupCoordinator;
import io.tierlog.groups.GroupAssignor;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.groups.GroupDescription;
import io.tierlog.groups.Heartbeat;
import io.tierlog.groups.HeartbeatAnswer;
import io.tierlog.groups.JoinRules;
import io.tierlog.groups.TopicPartitions;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.groups.GroupOffsets;
import io.tierlog.service.topics.TopicAdmin;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * Consumer-group membership over Kafka's protocols, through the {@link GroupCoordinator} HTTP heartbeats use, so
 * a Kafka consumer and an HTTP member of one group share its partitions (docs/adr/0016-kafka-groups-and-sasl.md).
 *
 * <ul>
 *   <li><b>KIP-848</b> ({@code group.protocol=consumer}): ConsumerGroupHeartbeat is the coordinator's heartbeat,
 *   field for field (the client's own member id, its epoch, subscribed topics, owned partitions), with topics named
 *   by their Kafka topic id on the wire. ConsumerGroupDescribe is the coordinator's description.</li>
 *   <li><b>Classic</b> ({@code group.protocol=classic}): the coordinator assigns (server side), so no client is ever
 *   the group's leader. JoinGroup is a heartbeat carrying the subscription (and, for cooperative clients, the
 *   partitions still owned) and answers at once with generation = the member's epoch; SyncGroup answers the
 *   member's current assignment; Heartbeat is a heartbeat that answers REBALANCE_IN_PROGRESS when it moved the
 *   member's assignment (its epoch), which makes the client join again and fetch it; LeaveGroup leaves.</li>
 *   <li><b>Static members</b> ({@code group.instance.id}, KIP-345): a consumer restarted under its instance id takes
 *   over its predecessor's partitions and nothing else moves. A classic join without a member id takes the instance
 *   over at once (a classic static member never says it stopped) and its predecessor is answered
 *   FENCED_INSTANCE_ID from then on; a KIP-848 join waits until the holder left with epoch -2 (else
 *   UNRELEASED_INSTANCE_ID), and the holder's partitions wait for it until its session ends.</li>
 * </ul>
 *
 * <p>Blocking (each call is a locked read-modify-write of the group's state file): runs on a worker thread.
 * Thread-safe and stateless: any instance on the volume answers any member.
 */
@Singleton
public class KafkaGroups {
    /** The member id JoinGroup answers as the leader: no member's, so every client is a follower (server-side assignment). */
    static final String NO_LEADER = "tierlog-coordinator";
    private static final String PROTOCOL_TYPE = KafkaInternals.CONSUMER_PROTOCOL_TYPE;

    private final GroupCoordinator coordinator;
    private final ClassicGroupCoordinator classic;
    private final GroupOffsets offsets;
    private final TopicStore topicStore;
    private final KafkaTopics topics;
    private final long consumerSessionTimeoutMs;

    public KafkaGroups(GroupCoordinator coordinator, ClassicGroupCoordinator classic, GroupOffsets offsets,
                       TopicStore topicStore, TierlogConfig config) {
        this.coordinator = coordinator;
        this.classic = classic;
        this.offsets = offsets;
        this.topicStore = topicStore;
        this.topics = new KafkaTopics(topicStore);
        this.consumerSessionTimeoutMs = config.kafka().groupSessionTimeout().toMillis();
    }

    // ---- KIP-848 ----

    /**
     * The topics a subscription by regular expression covers now: Kafka's RE2J syntax, matched against the whole
     * name, over the topics the caller may describe (internal topics never match, as Metadata hides them). Names
     * only: one directory listing per heartbeat of a pattern member, no topic file read.
     */
    private Set<String> matching(String regex, Predicate<String> mayDescribe) {
        Pattern pattern = Pattern.compile(regex);
        Set<String> out = new TreeSet<>();
        for (String name : topicStore.names()) {
            if (!TopicAdmin.isInternal(name) && pattern.matches(name) && mayDescribe.test(name)) {
                out.add(name);
            }
        }
        return out;
    }

    /**
     * @param mayDescribe whether the caller may see a topic: a subscription by regular expression matches only
     *                    those (as Kafka's coordinator filters by DESCRIBE)
     */
    ConsumerGroupHeartbeatResponse consumerGroupHeartbeat(ConsumerGroupHeartbeatRequest request, String clientId,
                                                          Predicate<String> mayDescribe) {
        ConsumerGroupHeartbeatRequestData in = request.data();
        ConsumerGroupHeartbeatResponseData out = new ConsumerGroupHeartbeatResponseData();
        try {
            String regex = in.subscribedTopicRegex();
            if (regex != null && !regex.isEmpty()) {
                try {
                    Pattern.compile(regex);
                } catch (PatternSyntaxException e) {
                    return new ConsumerGroupHeartbeatResponse(out.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code())
                            .setErrorMessage("subscribedTopicRegex is not a valid RE2J expression: " + e.getDescription()));
                }
            }
            if (in.serverAssignor() != null && GroupAssignor.named(in.serverAssignor()).isEmpty()) {
                return new ConsumerGroupHeartbeatResponse(out.setErrorCode(Errors.UNSUPPORTED_ASSIGNOR.code())
                        .setErrorMessage("ServerAssignor " + in.serverAssignor()
                                + " is not supported. Supported assignors: " + GroupAssignor.wireNames() + "."));
            }
            String memberId = in.memberId() == null || in.memberId().isEmpty() ? null : in.memberId();
            String instanceId = emptyToNull(in.instanceId());
            // -2 is a static member leaving for a while; a dynamic member sending it simply leaves.
            int epoch = in.memberEpoch() == Heartbeat.STATIC_LEAVE && instanceId == null ? Heartbeat.LEAVE
                    : in.memberEpoch();
            Set<String> subscribed = in.subscribedTopicNames() == null ? null : new HashSet<>(in.subscribedTopicNames());
            List<TopicPartitions> owned = null;
            if (in.topicPartitions() != null) {
                owned = new ArrayList<>();
                for (ConsumerGroupHeartbeatRequestData.TopicPartitions tp : in.topicPartitions()) {
                    Optional<String> name = nameOf(tp.topicId());
                    if (name.isPresent()) {
                        owned.add(new TopicPartitions(name.get(), tp.partitions()));
                    }
                }
            }
            HeartbeatAnswer answer = coordinator.heartbeat(in.groupId(), new Heartbeat(memberId, epoch, subscribed,
                    epoch < 0 ? 0 : consumerSessionTimeoutMs, owned, clientId, instanceId, regex)
                            .withAssignor(in.serverAssignor()),
                    JoinRules.CONSUMER_PROTOCOL, stored -> matching(stored, mayDescribe));
            out.setMemberId(answer.memberId()).setMemberEpoch(answer.memberEpoch())
                    .setHeartbeatIntervalMs((int) answer.heartbeatIntervalMs());
            // The assignment is sent when it changed (a new epoch) or on joining, as Kafka's coordinator does.
            if (answer.memberEpoch() >= 0 && (in.memberEpoch() == 0 || answer.memberEpoch() != in.memberEpoch())) {
                ConsumerGroupHeartbeatResponseData.Assignment assignment = new ConsumerGroupHeartbeatResponseData.Assignment();
                for (TopicPartitions tps : answer.assignment()) {
                    Optional<Uuid> id = idOf(tps.topic());
                    id.ifPresent(uuid -> assignment.topicPartitions().add(
                            new ConsumerGroupHeartbeatResponseData.TopicPartitions().setTopicId(uuid)
                                    .setPartitions(new ArrayList<>(tps.partitions()))));
                }
                out.setAssignment(assignment);
            }
        } catch (RuntimeException e) {
            Errors error = error(e, Errors.FENCED_MEMBER_EPOCH);
            // Kafka answers a member of another kind of group so: "Group ... is not a consumer group".
            out.setErrorCode((error == Errors.INCONSISTENT_GROUP_PROTOCOL ? Errors.GROUP_ID_NOT_FOUND : error).code())
                    .setErrorMessage(KafkaErrors.message(e));
        }
        return new ConsumerGroupHeartbeatResponse(out);
    }

    ConsumerGroupDescribeResponse consumerGroupDescribe(ConsumerGroupDescribeRequest request) {
        ConsumerGroupDescribeResponseData out = new ConsumerGroupDescribeResponseData();
        for (String group : request.data().groupIds()) {
            ConsumerGroupDescribeResponseData.DescribedGroup g = new ConsumerGroupDescribeResponseData.DescribedGroup()
                    .setGroupId(group).setAssignorName(GroupAssignor.UNIFORM.wireName());
            try {
                if (classic.active(group)) {
                    // As Kafka's coordinator answers for a classic group: Admin then describes it with DescribeGroups.
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("group " + group
                            + " is a classic group whose members assign partitions among themselves");
                    out.groups().add(g);
                    continue;
                }
                Optional<GroupDescription> d = coordinator.describe(group);
                if (d.isPresent() && d.get().streams()) {
                    // As Kafka: Admin describes a streams group with StreamsGroupDescribe.
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("group " + group
                            + " is a streams group, not a consumer group");
                } else if (d.isEmpty() && offsets.offsets(group).isEmpty()) {
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("group " + group + " does not exist");
                } else {
                    GroupDescription desc = d.orElse(new GroupDescription(group, GroupDescription.State.EMPTY, 0, List.of()));
                    g.setGroupState(consumerState(desc)).setAssignorName(desc.assignor())
                            .setGroupEpoch((int) desc.groupEpoch())
                            .setAssignmentEpoch((int) desc.groupEpoch());
                    for (GroupDescription.MemberDescription m : desc.members()) {
                        g.members().add(new ConsumerGroupDescribeResponseData.Member().setMemberId(m.memberId())
                                .setInstanceId(m.instanceId()).setMemberEpoch(m.memberEpoch()).setClientId(m.clientId() == null ? "" : m.clientId())
                                .setClientHost("").setSubscribedTopicNames(new ArrayList<>(new TreeSet<>(m.topics())))
                                .setSubscribedTopicRegex(m.topicRegex())
                                .setAssignment(describedAssignment(m.assignment()))
                                .setTargetAssignment(describedAssignment(m.target())));
                    }
                }
            } catch (RuntimeException e) {
                g.setErrorCode(error(e, Errors.UNKNOWN_SERVER_ERROR).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.groups().add(g);
        }
        return new ConsumerGroupDescribeResponse(out);
    }

    private ConsumerGroupDescribeResponseData.Assignment describedAssignment(List<TopicPartitions> partitions) {
        ConsumerGroupDescribeResponseData.Assignment a = new ConsumerGroupDescribeResponseData.Assignment();
        for (TopicPartitions tps : partitions) {
            idOf(tps.topic()).ifPresent(id -> a.topicPartitions().add(new ConsumerGroupDescribeResponseData.TopicPartitions()
                    .setTopicId(id).setTopicName(tps.topic()).setPartitions(new ArrayList<>(tps.partitions()))));
        }
        return a;
    }

    private static String consumerState(GroupDescription d) {
        return switch (d.state()) {
            case EMPTY -> "Empty";
            case STABLE -> "Stable";
            case RECONCILING -> "Reconciling";
        };
    }

    // ---- Classic ----

    JoinGroupResponse joinGroup(JoinGroupRequest request, short version, String clientId) {
        JoinGroupRequestData in = request.data();
        JoinGroupResponseData out = new JoinGroupResponseData().setLeader(NO_LEADER).setMemberId(in.memberId())
                .setProtocolName(version >= 7 ? null : "");
        try {
            if (!PROTOCOL_TYPE.equals(in.protocolType()) || in.protocols().isEmpty()) {
                return new JoinGroupResponse(out.setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()), version);
            }
            if (in.sessionTimeoutMs() < GroupCoordinator.MIN_SESSION_TIMEOUT_MS
                    || in.sessionTimeoutMs() > GroupCoordinator.MAX_SESSION_TIMEOUT_MS) {
                return new JoinGroupResponse(out.setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code()), version);
            }
            String instanceId = emptyToNull(in.groupInstanceId());
            if (in.memberId().isEmpty() && version >= 4 && instanceId == null) {
                // KIP-394: the member learns its id first, so a join whose answer is lost leaves no stray member.
                // A static member needs no such round: its instance id names it across lost answers.
                return new JoinGroupResponse(out.setErrorCode(Errors.MEMBER_ID_REQUIRED.code())
                        .setMemberId(newMemberId()), version);
            }
            // The member's first protocol the service runs (Kafka's vote, for one member), else its first.
            JoinGroupRequestData.JoinGroupRequestProtocol protocol = in.protocols().stream()
                    .filter(p -> KafkaClassicGroups.SERVED_ASSIGNORS.contains(p.name())).findFirst()
                    .orElse(in.protocols().iterator().next());
            boolean assignsItself = !KafkaClassicGroups.SERVED_ASSIGNORS.contains(protocol.name());
            ConsumerPartitionAssignor.Subscription subscription =
                    KafkaInternals.subscription(ByteBuffer.wrap(protocol.metadata()));
            List<TopicPartitions> owned = byTopic(subscription.ownedPartitions());
            // A static member joining without an id is a new process under the instance id: it takes the instance
            // over from a live holder (which never says it stopped); one naming an id is that member rejoining.
            boolean freshStaticJoin = instanceId != null && in.memberId().isEmpty();
            String memberId = freshStaticJoin ? newMemberId() : in.memberId().isEmpty() ? null : in.memberId();
            int epoch = memberId == null || freshStaticJoin ? 0 : currentEpoch(in.groupId(), memberId).orElse(0);
            Heartbeat join = new Heartbeat(memberId, epoch, new HashSet<>(subscription.topics()),
                    in.sessionTimeoutMs(), owned, clientId, instanceId)
                    .withAssignor(KafkaClassicGroups.serverAssignor(protocol.name()));
            HeartbeatAnswer answer;
            try {
                answer = coordinator.heartbeat(in.groupId(), assignsItself ? join.assigningItself() : join,
                        freshStaticJoin ? JoinRules.CLIENT_IDS_TAKE_OVER : JoinRules.CLIENT_IDS);
            } catch (TierlogException e) {
                if (e.type() == ErrorType.UNRELEASED_INSTANCE) {
                    // A replaced process rejoining under its old id: another member holds its instance id now.
                    return new JoinGroupResponse(out.setErrorCode(Errors.FENCED_INSTANCE_ID.code()), version);
                }
                throw e;
            }
            if (answer.memberEpoch() == Heartbeat.LEAVE) {
                // The group went back to its members' own rounds (ADR 0066): this member joins again, into them.
                return new JoinGroupResponse(out.setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()).setMemberId(""),
                        version);
            }
            out.setMemberId(answer.memberId()).setGenerationId(answer.memberEpoch()).setProtocolName(protocol.name());
            if (version >= 7) {
                out.setProtocolType(PROTOCOL_TYPE);
            }
        } catch (RuntimeException e) {
            out.setErrorCode(error(e, Errors.ILLEGAL_GENERATION).code());
        }
        return new JoinGroupResponse(out, version);
    }

    SyncGroupResponse syncGroup(SyncGroupRequest request) {
        SyncGroupRequestData in = request.data();
        SyncGroupResponseData out = new SyncGroupResponseData().setProtocolType(in.protocolType())
                .setProtocolName(in.protocolName()).setAssignment(new byte[0]);
        try {
            Optional<GroupDescription> group = coordinator.describe(in.groupId());
            Optional<GroupDescription.MemberDescription> m = group.flatMap(d -> d.members().stream()
                    .filter(x -> x.memberId().equals(in.memberId())).findFirst());
            if (m.isEmpty()) {
                return new SyncGroupResponse(out.setErrorCode(staticMemberReplaced(group, in.groupInstanceId())
                        ? Errors.FENCED_INSTANCE_ID.code() : Errors.UNKNOWN_MEMBER_ID.code()));
            }
            if (m.get().memberEpoch() != in.generationId()) {
                return new SyncGroupResponse(out.setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
            }
            List<org.apache.kafka.common.TopicPartition> assigned = new ArrayList<>();
            m.get().assignment().forEach(tps -> tps.partitions().forEach(
                    p -> assigned.add(new org.apache.kafka.common.TopicPartition(tps.topic(), p))));
            ByteBuffer bytes = KafkaInternals.serialize(new ConsumerPartitionAssignor.Assignment(assigned));
            byte[] array = new byte[bytes.remaining()];
            bytes.get(array);
            out.setAssignment(array);
        } catch (RuntimeException e) {
            out.setErrorCode(error(e, Errors.ILLEGAL_GENERATION).code());
        }
        return new SyncGroupResponse(out);
    }

    HeartbeatResponse heartbeat(HeartbeatRequest request, String clientId) {
        HeartbeatResponseData out = new HeartbeatResponseData();
        try {
            int generation = request.data().generationId();
            HeartbeatAnswer answer = coordinator.heartbeat(request.data().groupId(), new Heartbeat(
                    request.data().memberId(), generation, null, 0, null, clientId,
                    emptyToNull(request.data().groupInstanceId())), JoinRules.CLIENT_IDS);
            if (answer.memberEpoch() == Heartbeat.LEAVE) {
                // The group went back to its members' own rounds (ADR 0066): the client joins again, into them.
                out.setErrorCode(Errors.UNKNOWN_MEMBER_ID.code());
            } else if (answer.memberEpoch() != generation) {
                // Its assignment moved: the client joins again and SyncGroup hands it the new one.
                out.setErrorCode(Errors.REBALANCE_IN_PROGRESS.code());
            }
        } catch (RuntimeException e) {
            out.setErrorCode(error(e, Errors.ILLEGAL_GENERATION).code());
        }
        return new HeartbeatResponse(out);
    }

    LeaveGroupResponse leaveGroup(LeaveGroupRequest request) {
        LeaveGroupResponseData out = new LeaveGroupResponseData();
        for (LeaveGroupRequestData.MemberIdentity member : request.members()) {
            LeaveGroupResponseData.MemberResponse r = new LeaveGroupResponseData.MemberResponse()
                    .setMemberId(member.memberId()).setGroupInstanceId(member.groupInstanceId());
            try {
                // Admin's removeMembersFromConsumerGroup names a static member by its instance id alone.
                coordinator.heartbeat(request.data().groupId(), new Heartbeat(emptyToNull(member.memberId()),
                        Heartbeat.LEAVE, Set.of(), 0, null, null, emptyToNull(member.groupInstanceId())),
                        JoinRules.CLIENT_IDS);
            } catch (RuntimeException e) {
                r.setErrorCode(error(e, Errors.UNKNOWN_MEMBER_ID).code());
            }
            out.members().add(r);
        }
        return leaveGroupAnswer(out, request.version());
    }

    /** Versions before 3 name one member and answer with its error alone: they have no member list. */
    static LeaveGroupResponse leaveGroupAnswer(LeaveGroupResponseData out, short version) {
        if (version < 3 && !out.members().isEmpty()) {
            out.setErrorCode(out.members().get(0).errorCode()).setMembers(new ArrayList<>());
        }
        return new LeaveGroupResponse(out);
    }

    DescribeGroupsResponse describeGroups(DescribeGroupsRequest request) {
        DescribeGroupsResponseData out = new DescribeGroupsResponseData();
        for (String group : request.data().groups()) {
            DescribeGroupsResponseData.DescribedGroup g = new DescribeGroupsResponseData.DescribedGroup().setGroupId(group)
                    .setProtocolType(PROTOCOL_TYPE).setProtocolData("");
            try {
                Optional<ClassicGroupCoordinator.Description> own = classic.describe(group);
                if (own.isPresent() && !own.get().members().isEmpty()) {
                    describeClassic(g, own.get());
                    out.groups().add(g);
                    continue;
                }
                Optional<GroupDescription> d = coordinator.describe(group);
                if (d.isPresent() && d.get().streams()) {
                    // As Kafka: a streams group is described by StreamsGroupDescribe only. (No error message:
                    // versions before 6 cannot carry one.)
                    g.setGroupState("Dead").setErrorCode(Errors.GROUP_ID_NOT_FOUND.code());
                } else if (d.isEmpty() || d.get().members().isEmpty()) {
                    // Kafka answers a group without members as Empty when it has offsets, else Dead.
                    g.setGroupState(offsets.offsets(group).isEmpty() ? "Dead" : "Empty");
                } else {
                    g.setGroupState(d.get().state() == GroupDescription.State.STABLE ? "Stable" : "CompletingRebalance")
                            .setProtocolData(d.get().assignor());
                    for (GroupDescription.MemberDescription m : d.get().members()) {
                        List<org.apache.kafka.common.TopicPartition> assigned = new ArrayList<>();
                        m.assignment().forEach(tps -> tps.partitions().forEach(
                                p -> assigned.add(new org.apache.kafka.common.TopicPartition(tps.topic(), p))));
                        g.members().add(new DescribeGroupsResponseData.DescribedGroupMember().setMemberId(m.memberId())
                                .setGroupInstanceId(m.instanceId())
                                .setClientId(m.clientId() == null ? "" : m.clientId()).setClientHost("")
                                .setMemberMetadata(bytes(KafkaInternals.serialize(
                                        new ConsumerPartitionAssignor.Subscription(new ArrayList<>(new TreeSet<>(m.topics()))))))
                                .setMemberAssignment(bytes(KafkaInternals.serialize(
                                        new ConsumerPartitionAssignor.Assignment(assigned)))));
                    }
                }
            } catch (RuntimeException e) {
                g.setErrorCode(error(e, Errors.UNKNOWN_SERVER_ERROR).code());
            }
            out.groups().add(g);
        }
        return new DescribeGroupsResponse(out);
    }

    /**
     * The topics the members of a classic group subscribe to, as Kafka's coordinator reads them: from the consumer
     * protocol's metadata, so only for protocol type {@code consumer} (Kafka Streams' included).
     */
    private static Set<String> classicTopics(ClassicGroupCoordinator.Description d) {
        Set<String> topics = new HashSet<>();
        if (PROTOCOL_TYPE.equals(d.protocolType())) {
            for (ClassicGroupCoordinator.MemberInfo m : d.members()) {
                try {
                    topics.addAll(KafkaInternals.subscription(ByteBuffer.wrap(m.metadata())).topics());
                } catch (RuntimeException e) {
                    // metadata in another encoding: its topics are unknown, as to Kafka's coordinator
                }
            }
        }
        return topics;
    }

    /** A group whose members assign among themselves, as Kafka's coordinator describes a classic group. */
    private static void describeClassic(DescribeGroupsResponseData.DescribedGroup g,
                                        ClassicGroupCoordinator.Description d) {
        g.setGroupState(d.state()).setProtocolType(d.protocolType())
                .setProtocolData(d.protocolName() == null ? "" : d.protocolName());
        for (ClassicGroupCoordinator.MemberInfo m : d.members()) {
            g.members().add(new DescribeGroupsResponseData.DescribedGroupMember().setMemberId(m.memberId())
                    .setGroupInstanceId(m.instanceId()).setClientId(m.clientId() == null ? "" : m.clientId())
                    .setClientHost(m.clientHost() == null ? "" : m.clientHost()).setMemberMetadata(m.metadata())
                    .setMemberAssignment(m.assignment()));
        }
    }

    /**
     * Every group with members or committed offsets: a "consumer" group (both protocols the service assigns for share
     * one kind), or a "classic" one whose members assign among themselves.
     *
     * @param visible the groups the caller may see (read)
     */
    ListGroupsResponse listGroups(ListGroupsRequest request, java.util.function.Predicate<String> visible) {
        ListGroupsResponseData out = new ListGroupsResponseData();
        Set<String> states = new HashSet<>();
        request.data().statesFilter().forEach(s -> states.add(s.toLowerCase(Locale.ROOT)));
        Set<String> types = new HashSet<>();
        request.data().typesFilter().forEach(t -> types.add(t.toLowerCase(Locale.ROOT)));

        Set<String> names = new TreeSet<>(coordinator.groups());
        names.addAll(offsets.groups());
        for (String group : names) {
            if (!visible.test(group)) {
                continue;
            }
            try {
                Optional<ClassicGroupCoordinator.Description> own = classic.describe(group);
                if (own.isPresent() && !own.get().members().isEmpty()) {
                    ClassicGroupCoordinator.Description c = own.get();
                    if ((types.isEmpty() || types.contains("classic"))
                            && (states.isEmpty() || states.contains(c.state().toLowerCase(Locale.ROOT)))) {
                        out.groups().add(new ListGroupsResponseData.ListedGroup().setGroupId(group)
                                .setProtocolType(c.protocolType()).setGroupState(c.state()).setGroupType("classic"));
                    }
                    continue;
                }
                if (!types.isEmpty() && !types.contains("consumer") && !types.contains("streams")) {
                    continue;
                }
                Optional<GroupDescription> d = coordinator.describe(group);
                String type = d.isPresent() && d.get().streams() ? "streams" : "consumer";
                String state = d.map(KafkaGroups::consumerState).orElse("Empty");
                if (d.isEmpty() && offsets.offsets(group).isEmpty()) {
                    continue; // its last member left and it never committed: nothing to list
                }
                if (!types.isEmpty() && !types.contains(type)
                        || !states.isEmpty() && !states.contains(state.toLowerCase(Locale.ROOT))) {
                    continue;
                }
                // A streams group's protocol type is "streams" (Kafka's StreamsGroup.PROTOCOL_TYPE).
                out.groups().add(new ListGroupsResponseData.ListedGroup().setGroupId(group)
                        .setProtocolType(type.equals("streams") ? "streams" : PROTOCOL_TYPE).setGroupState(state)
                        .setGroupType(type));
            } catch (TierlogException e) {
                // a group removed while listing
            }
        }
        return new ListGroupsResponse(out);
    }

    /**
     * Removes committed offsets, as Kafka does: refused per partition (GROUP_SUBSCRIBED_TO_TOPIC) for the topics a
     * member of the group subscribes to.
     */
    OffsetDeleteResponse offsetDelete(OffsetDeleteRequest request) {
        OffsetDeleteRequestData in = request.data();
        OffsetDeleteResponseData out = new OffsetDeleteResponseData();
        try {
            Optional<GroupDescription> d = coordinator.describe(in.groupId());
            if (d.isEmpty() && offsets.offsets(in.groupId()).isEmpty()) {
                return new OffsetDeleteResponse(out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()));
            }
            Set<String> subscribed = new HashSet<>();
            if (d.isPresent() && d.get().streams()) {
                // A streams group's members "subscribe" to subtopologies: the topics are those its topology reads.
                coordinator.describeStreams(in.groupId()).filter(s -> !s.group().members().isEmpty())
                        .ifPresent(s -> subscribed.addAll(s.topology().topics()));
            } else {
                d.ifPresent(g -> g.members().forEach(m -> subscribed.addAll(m.topics())));
            }
            classic.describe(in.groupId()).ifPresent(c -> subscribed.addAll(classicTopics(c)));
            List<TopicPartition> deletable = new ArrayList<>();
            for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : in.topics()) {
                OffsetDeleteResponseData.OffsetDeleteResponseTopic topic =
                        new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(t.name());
                for (OffsetDeleteRequestData.OffsetDeleteRequestPartition p : t.partitions()) {
                    Errors error = p.partitionIndex() < 0 ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                            : subscribed.contains(t.name()) ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : Errors.NONE;
                    if (error == Errors.NONE) {
                        deletable.add(new TopicPartition(t.name(), p.partitionIndex()));
                    }
                    topic.partitions().add(new OffsetDeleteResponseData.OffsetDeleteResponsePartition()
                            .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
                }
                out.topics().add(topic);
            }
            offsets.delete(in.groupId(), deletable);
        } catch (RuntimeException e) {
            return new OffsetDeleteResponse(new OffsetDeleteResponseData()
                    .setErrorCode(error(e, Errors.UNKNOWN_SERVER_ERROR).code()));
        }
        return new OffsetDeleteResponse(out);
    }

    /**
     * DeleteGroups: each group as {@code DELETE /v1/groups/{group}} deletes it, its committed offsets and membership
     * state together, only while it has no members (NON_EMPTY_GROUP otherwise); GROUP_ID_NOT_FOUND for a group with
     * neither members nor offsets.
     */
    DeleteGroupsResponse deleteGroups(DeleteGroupsRequest request) {
        DeleteGroupsResponseData.DeletableGroupResultCollection results =
                new DeleteGroupsResponseData.DeletableGroupResultCollection();
        for (String group : request.data().groupsNames()) {
            Errors error = Errors.NONE;
            try {
                coordinator.delete(group, () -> offsets.delete(group));
            } catch (RuntimeException e) {
                error = error(e, Errors.UNKNOWN_SERVER_ERROR);
            }
            results.add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(group).setErrorCode(error.code()));
        }
        return new DeleteGroupsResponse(new DeleteGroupsResponseData().setResults(results));
    }

    // ---- shared ----

    private Optional<Integer> currentEpoch(String group, String memberId) {
        return member(group, memberId).map(GroupDescription.MemberDescription::memberEpoch);
    }

    private Optional<GroupDescription.MemberDescription> member(String group, String memberId) {
        return coordinator.describe(group).flatMap(d -> d.members().stream()
                .filter(m -> m.memberId().equals(memberId)).findFirst());
    }

    /** Whether a request naming {@code instanceId} comes from a member another process replaced under it. */
    private static boolean staticMemberReplaced(Optional<GroupDescription> group, String instanceId) {
        return instanceId != null && !instanceId.isEmpty() && group.stream().flatMap(d -> d.members().stream())
                .anyMatch(m -> instanceId.equals(m.instanceId()));
    }

    private static String newMemberId() {
        return "tierlog-" + UUID.randomUUID();
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static List<TopicPartitions> byTopic(List<org.apache.kafka.common.TopicPartition> partitions) {
        Map<String, List<Integer>> m = new HashMap<>();
        partitions.forEach(tp -> m.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition()));
        List<TopicPartitions> out = new ArrayList<>();
        m.forEach((t, ps) -> out.add(new TopicPartitions(t, ps)));
        return out;
    }

    private Optional<Uuid> idOf(String topic) {
        return topicStore.find(topic).map(KafkaTopics::idOf);
    }

    private Optional<String> nameOf(Uuid id) {
        try {
            return Optional.of(topics.resolve(null, id)).map(TopicMetadata::name);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** The coordinator's refusals as the codes Kafka's group clients act on; {@code fenced} for fenced-member. */
    static Errors error(Throwable e, Errors fenced) {
        if (KafkaErrors.unwrap(e) instanceof TierlogException t) {
            ErrorType type = t.type();
            switch (type) {
                case UNKNOWN_MEMBER:
                    return Errors.UNKNOWN_MEMBER_ID;
                case FENCED_MEMBER:
                    return fenced;
                case FENCED_INSTANCE:
                    return Errors.FENCED_INSTANCE_ID;
                case UNRELEASED_INSTANCE:
                    return Errors.UNRELEASED_INSTANCE_ID;
                case GROUP_NOT_EMPTY:
                    return Errors.NON_EMPTY_GROUP;
                case UNKNOWN_GROUP:
                    return Errors.GROUP_ID_NOT_FOUND;
                case INVALID_GROUP:
                    return Errors.INVALID_GROUP_ID;
                case BAD_REQUEST:
                    return Errors.INVALID_REQUEST;
                default:
                    break;
            }
        }
        return KafkaErrors.of(e);
    }
}
