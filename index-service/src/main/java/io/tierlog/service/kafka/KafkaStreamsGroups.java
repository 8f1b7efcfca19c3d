package io.tierlog.service.kafka;

import io.tierlog.groups.GroupCoordinator;
import io.tierlog.groups.GroupDescription;
import io.tierlog.groups.StreamsGroupDescription;
import io.tierlog.groups.StreamsHeartbeat;
import io.tierlog.groups.StreamsHeartbeatAnswer;
import io.tierlog.groups.StreamsTopology;
import io.tierlog.groups.TaskProgress;
import io.tierlog.groups.TopicPartitions;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.topics.TopicAdmin;
import jakarta.inject.Singleton;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.StreamsGroupDescribeRequest;
import org.apache.kafka.common.requests.StreamsGroupDescribeResponse;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatRequest;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatResponse;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Kafka Streams' rebalance protocol (KIP-1071, {@code group.protocol=streams}) over the {@link GroupCoordinator}:
 * StreamsGroupHeartbeat and StreamsGroupDescribe. The service keeps the application's topology (set by the first
 * member of an empty group), creates its repartition and changelog topics with the partition counts Kafka's
 * coordinator would give them, and divides the tasks among the members with the group's assignor, each task moving
 * only after its previous owner stopped running it, and the standby tasks the group's
 * {@code streams.num.standby.replicas} asks for, and warm-up tasks where a stateful task moves to a member not caught
 * up (it stays with its owner until then, as Kafka's assignment refiner does). Blocking: runs on a worker thread.
 * Stateless: any instance answers any member.
 */
@Singleton
public class KafkaStreamsGroups {
    private static final Logger LOG = Logger.getLogger(KafkaStreamsGroups.class);

    private final GroupCoordinator coordinator;
    private final TopicStore topics;
    private final TopicAdmin admin;
    private final long sessionTimeoutMs;

    public KafkaStreamsGroups(GroupCoordinator coordinator, TopicStore topics, TopicAdmin admin,
                              TierlogConfig config) {
        this.coordinator = coordinator;
        this.topics = topics;
        this.admin = admin;
        this.sessionTimeoutMs = config.kafka().groupSessionTimeout().toMillis();
    }

    /**
     * @param mayCreate whether the caller may create a topic: internal topics it may not create are reported as
     *                  missing (MISSING_INTERNAL_TOPICS), as Kafka's coordinator reports them
     */
    StreamsGroupHeartbeatResponse heartbeat(StreamsGroupHeartbeatRequest request, String clientId,
                                            Predicate<String> mayCreate) {
        StreamsGroupHeartbeatRequestData in = request.data();
        StreamsGroupHeartbeatResponseData out = new StreamsGroupHeartbeatResponseData().setMemberId(in.memberId())
                .setMemberEpoch(in.memberEpoch()).setAcceptableRecoveryLag(-1);
        try {
            if (in.memberId() == null || in.memberId().isEmpty()) {
                return new StreamsGroupHeartbeatResponse(out.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("MemberId can't be empty."));
            }
            StreamsTopology topology = in.topology() == null ? null : topology(in.topology());
            String instanceId = in.instanceId() == null || in.instanceId().isEmpty() ? null : in.instanceId();
            int epoch = in.memberEpoch() == -2 && instanceId == null ? -1 : in.memberEpoch();
            StreamsHeartbeatAnswer answer = coordinator.streamsHeartbeat(in.groupId(), new StreamsHeartbeat(
                    in.memberId(), epoch, instanceId, sessionTimeoutMs, topology, tasks(in.activeTasks()),
                    in.processId(), endpoint(in.userEndpoint()), in.endpointInformationEpoch(), clientId,
                    in.shutdownApplication(), in.rackId(), clientTags(in.clientTags())),
                    new TaskProgress(offsets(in.taskOffsets()), offsets(in.taskEndOffsets())));
            // After the join was accepted (a refused one creates nothing), before it is answered: the group's topics.
            List<StreamsTopology.Status> created = topology == null || answer.membership().memberEpoch() < 0
                    ? List.of() : createInternalTopics(answer.topology(), mayCreate);
            out.setMemberId(answer.membership().memberId()).setMemberEpoch(answer.membership().memberEpoch())
                    .setHeartbeatIntervalMs((int) answer.membership().heartbeatIntervalMs())
                    .setEndpointInformationEpoch(answer.endpointEpoch())
                    .setTaskOffsetIntervalMs(answer.taskOffsetIntervalMs());
            if (request.version() == 0) { // an int there, a long from version 1
                out.setAcceptableRecoveryLagLegacy((int) Math.min(Integer.MAX_VALUE, answer.acceptableRecoveryLag()));
            } else {
                out.setAcceptableRecoveryLag(answer.acceptableRecoveryLag());
            }
            List<StreamsGroupHeartbeatResponseData.Status> statuses = new ArrayList<>();
            for (StreamsTopology.Status s : concat(created, answer.statuses())) {
                if (s.code() == StreamsTopology.Status.MISSING_CLIENT_TAGS && request.version() == 0) {
                    continue; // a status version 0 clients do not know (KAFKA-20744)
                }
                statuses.add(new StreamsGroupHeartbeatResponseData.Status().setStatusCode((byte) s.code())
                        .setStatusDetail(s.detail()));
            }
            out.setStatus(statuses);
            // As for consumers, the tasks go out when they changed (a new epoch) or on joining, all three lists at once.
            if (answer.membership().memberEpoch() >= 0
                    && (in.memberEpoch() == 0 || answer.membership().memberEpoch() != in.memberEpoch())) {
                out.setActiveTasks(responseTasks(answer.membership().assignment()))
                        .setStandbyTasks(responseTasks(answer.standbyTasks()))
                        .setWarmupTasks(responseTasks(answer.warmupTasks()));
            }
            if (answer.endpoints() != null) {
                out.setPartitionsByUserEndpoint(byEndpoint(answer.endpoints()));
            }
        } catch (RuntimeException e) {
            Errors error = KafkaGroups.error(e, Errors.FENCED_MEMBER_EPOCH);
            if (error == Errors.INCONSISTENT_GROUP_PROTOCOL) {
                error = Errors.GROUP_ID_NOT_FOUND; // Kafka: "Group ... is not a streams group"
            } else if (error == Errors.INVALID_REQUEST && isTopologyRefusal(e)) {
                error = Errors.STREAMS_INVALID_TOPOLOGY;
            }
            out.setErrorCode(error.code()).setErrorMessage(KafkaErrors.message(e));
        }
        return new StreamsGroupHeartbeatResponse(out);
    }

    StreamsGroupDescribeResponse describe(StreamsGroupDescribeRequest request) {
        StreamsGroupDescribeResponseData out = new StreamsGroupDescribeResponseData();
        for (String group : request.data().groupIds()) {
            StreamsGroupDescribeResponseData.DescribedGroup g = new StreamsGroupDescribeResponseData.DescribedGroup()
                    .setGroupId(group);
            try {
                Optional<StreamsGroupDescription> d = coordinator.describeStreams(group);
                if (d.isEmpty()) {
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                            .setErrorMessage("group " + group + " is not a streams group");
                } else {
                    describe(g, d.get());
                }
            } catch (RuntimeException e) {
                g.setErrorCode(KafkaGroups.error(e, Errors.UNKNOWN_SERVER_ERROR).code())
                        .setErrorMessage(KafkaErrors.message(e));
            }
            out.groups().add(g);
        }
        return new StreamsGroupDescribeResponse(out);
    }

    private static void describe(StreamsGroupDescribeResponseData.DescribedGroup g, StreamsGroupDescription d) {
        GroupDescription group = d.group();
        String state = switch (group.state()) {
            case EMPTY -> "Empty";
            case STABLE -> d.taskCounts().values().stream().allMatch(n -> n == 0) ? "NotReady" : "Stable";
            case RECONCILING -> "Reconciling";
        };
        StreamsGroupDescribeResponseData.Topology topology = new StreamsGroupDescribeResponseData.Topology()
                .setEpoch(d.topology().epoch()).setSubtopologies(new ArrayList<>());
        for (StreamsTopology.Subtopology s : d.topology().subtopologies()) {
            topology.subtopologies().add(new StreamsGroupDescribeResponseData.Subtopology().setSubtopologyId(s.id())
                    .setSourceTopics(new ArrayList<>(s.sourceTopics()))
                    .setRepartitionSinkTopics(new ArrayList<>(s.repartitionSinkTopics()))
                    .setRepartitionSourceTopics(describedTopics(s.repartitionSourceTopics()))
                    .setStateChangelogTopics(describedTopics(s.changelogTopics())));
        }
        g.setGroupState(state).setGroupEpoch((int) group.groupEpoch()).setAssignmentEpoch((int) group.groupEpoch())
                .setTopology(topology);
        for (GroupDescription.MemberDescription m : group.members()) {
            StreamsGroupDescription.StreamsMember streams = d.members().get(m.memberId());
            StreamsGroupDescribeResponseData.Member member = new StreamsGroupDescribeResponseData.Member()
                    .setMemberId(m.memberId()).setMemberEpoch(m.memberEpoch()).setInstanceId(m.instanceId())
                    .setClientId(m.clientId() == null ? "" : m.clientId()).setClientHost("")
                    .setTopologyEpoch(streams == null ? 0 : streams.topologyEpoch())
                    .setProcessId(streams == null || streams.processId() == null ? "" : streams.processId())
                    .setRackId(streams == null ? null : streams.rack())
                    .setAssignment(describedAssignment(m.assignment(),
                            streams == null ? List.of() : streams.standby(),
                            streams == null ? List.of() : streams.warmup()))
                    .setTargetAssignment(describedAssignment(m.target(),
                            streams == null ? List.of() : streams.standbyTarget(),
                            streams == null ? List.of() : streams.warmupTarget()))
                    .setTaskOffsets(describedOffsets(streams))
                    .setClientTags(describedTags(streams));
            if (streams != null && streams.userEndpoint() != null) {
                member.setUserEndpoint(new StreamsGroupDescribeResponseData.Endpoint()
                        .setHost(streams.userEndpoint().host()).setPort(streams.userEndpoint().port()));
            }
            g.members().add(member);
        }
    }

    private static List<StreamsGroupDescribeResponseData.TopicInfo> describedTopics(
            List<StreamsTopology.InternalTopic> internal) {
        List<StreamsGroupDescribeResponseData.TopicInfo> out = new ArrayList<>();
        for (StreamsTopology.InternalTopic t : internal) {
            List<StreamsGroupDescribeResponseData.KeyValue> configs = new ArrayList<>();
            new TreeMap<>(t.configs()).forEach((k, v) -> configs.add(new StreamsGroupDescribeResponseData.KeyValue()
                    .setKey(k).setValue(v)));
            out.add(new StreamsGroupDescribeResponseData.TopicInfo().setName(t.name()).setPartitions(t.partitions())
                    .setReplicationFactor((short) 1).setTopicConfigs(configs));
        }
        return out;
    }

    private static StreamsGroupDescribeResponseData.Assignment describedAssignment(List<TopicPartitions> active,
                                                                              List<TopicPartitions> standby,
                                                                              List<TopicPartitions> warmup) {
        return new StreamsGroupDescribeResponseData.Assignment().setActiveTasks(describedTasks(active))
                .setStandbyTasks(describedTasks(standby)).setWarmupTasks(describedTasks(warmup));
    }

    private static List<StreamsGroupDescribeResponseData.KeyValue> describedTags(
            StreamsGroupDescription.StreamsMember streams) {
        List<StreamsGroupDescribeResponseData.KeyValue> out = new ArrayList<>();
        if (streams != null) {
            streams.clientTags().forEach((k, v) -> out.add(new StreamsGroupDescribeResponseData.KeyValue().setKey(k)
                    .setValue(v)));
        }
        return out;
    }

    /** A member's client tags as sent; null when not sent (unchanged). A key sent twice keeps its last value. */
    private static Map<String, String> clientTags(List<StreamsGroupHeartbeatRequestData.KeyValue> in) {
        if (in == null) {
            return null;
        }
        Map<String, String> out = new TreeMap<>();
        in.forEach(kv -> out.put(kv.key(), kv.value()));
        return out;
    }

    /** A member's last reported offsets of its tasks' state. */
    private static List<StreamsGroupDescribeResponseData.TaskOffset> describedOffsets(
            StreamsGroupDescription.StreamsMember streams) {
        List<StreamsGroupDescribeResponseData.TaskOffset> out = new ArrayList<>();
        if (streams != null) {
            streams.taskOffsets().forEach((sub, offsets) -> offsets.forEach((p, offset) -> out.add(
                    new StreamsGroupDescribeResponseData.TaskOffset().setSubtopologyId(sub).setPartition(p)
                            .setOffset(offset))));
        }
        return out;
    }

    /**
     * Reported task offsets by task (a subtopology's tasks as a topic's partitions); null when none were sent. Tasks
     * below 0 are left out here, tasks the topology does not have by the coordinator.
     */
    private static Map<TopicPartition, Long> offsets(
            List<StreamsGroupHeartbeatRequestData.TaskOffset> in) {
        if (in == null) {
            return null;
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        for (StreamsGroupHeartbeatRequestData.TaskOffset t : in) {
            if (t.partition() >= 0) { // a task that cannot exist: the coordinator keeps only the topology's tasks
                out.put(new TopicPartition(t.subtopologyId(), t.partition()), t.offset());
            }
        }
        return out;
    }

    private static List<StreamsGroupDescribeResponseData.TaskIds> describedTasks(List<TopicPartitions> tasks) {
        List<StreamsGroupDescribeResponseData.TaskIds> out = new ArrayList<>();
        tasks.forEach(t -> out.add(new StreamsGroupDescribeResponseData.TaskIds().setSubtopologyId(t.topic())
                .setPartitions(new ArrayList<>(t.partitions()))));
        return out;
    }

    /**
     * Creates the group's internal topics that do not exist yet, with the partition counts its topology gives them
     * against the topics now; what could not be created is reported as a status, as Kafka's coordinator does.
     */
    private List<StreamsTopology.Status> createInternalTopics(StreamsTopology topology, Predicate<String> mayCreate) {
        StreamsTopology.Configured configured = topology
                .configure(t -> topics.find(t).map(m -> m.partitions()).orElse(0));
        List<String> failed = new ArrayList<>();
        configured.internalTopics().forEach((name, t) -> {
            if (topics.find(name).isPresent()) {
                return;
            }
            if (!mayCreate.test(name)) {
                failed.add(name + " (not authorized to create it)");
                return;
            }
            try {
                admin.create(name, t.partitions(), new HashMap<>(t.configs()));
                LOG.infof("created internal topic %s of streams application (%d partitions)", name, t.partitions());
            } catch (TierlogException e) {
                if (e.type() != ErrorType.TOPIC_EXISTS) {
                    failed.add(name + " (" + KafkaErrors.message(e) + ")");
                }
            }
        });
        return failed.isEmpty() ? List.of() : List.of(new StreamsTopology.Status(
                StreamsTopology.Status.MISSING_INTERNAL_TOPICS, "internal topics are missing: " + String.join(", ",
                failed)));
    }

    private static StreamsTopology topology(StreamsGroupHeartbeatRequestData.Topology in) {
        List<StreamsTopology.Subtopology> subtopologies = new ArrayList<>();
        for (StreamsGroupHeartbeatRequestData.Subtopology s : in.subtopologies()) {
            if (!s.sourceTopicRegex().isEmpty()) {
                throw new TierlogException(ErrorType.BAD_REQUEST, "invalid topology: subtopology " + s.subtopologyId()
                        + " subscribes by pattern, which streams groups here do not support",
                        Map.of("field", "topology"));
            }
            List<String> sources = new ArrayList<>(s.sourceTopics());
            List<String> repartitionSources = s.repartitionSourceTopics().stream()
                    .map(StreamsGroupHeartbeatRequestData.TopicInfo::name).toList();
            List<List<String>> copartition = new ArrayList<>();
            for (StreamsGroupHeartbeatRequestData.CopartitionGroup c : s.copartitionGroups()) {
                List<String> group = new ArrayList<>();
                c.sourceTopics().forEach(i -> group.add(at(sources, i)));
                c.repartitionSourceTopics().forEach(i -> group.add(at(repartitionSources, i)));
                copartition.add(group);
            }
            subtopologies.add(new StreamsTopology.Subtopology(s.subtopologyId(), sources,
                    internal(s.repartitionSourceTopics()), internal(s.stateChangelogTopics()),
                    new ArrayList<>(s.repartitionSinkTopics()), copartition));
        }
        return new StreamsTopology(in.epoch(), subtopologies);
    }

    private static String at(List<String> topics, short index) {
        if (index < 0 || index >= topics.size()) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "invalid topology: copartition group index " + index
                    + " out of range", Map.of("field", "topology"));
        }
        return topics.get(index);
    }

    private static List<StreamsTopology.InternalTopic> internal(List<StreamsGroupHeartbeatRequestData.TopicInfo> in) {
        List<StreamsTopology.InternalTopic> out = new ArrayList<>();
        for (StreamsGroupHeartbeatRequestData.TopicInfo t : in) {
            Map<String, String> configs = new TreeMap<>();
            t.topicConfigs().forEach(kv -> configs.put(kv.key(), kv.value()));
            out.add(new StreamsTopology.InternalTopic(t.name(), t.partitions(), configs));
        }
        return out;
    }

    private static List<TopicPartitions> tasks(List<StreamsGroupHeartbeatRequestData.TaskIds> in) {
        if (in == null) {
            return null;
        }
        List<TopicPartitions> out = new ArrayList<>();
        in.forEach(t -> out.add(new TopicPartitions(t.subtopologyId(), t.partitions())));
        return out;
    }

    private static List<StreamsGroupHeartbeatResponseData.TaskIds> responseTasks(List<TopicPartitions> tasks) {
        List<StreamsGroupHeartbeatResponseData.TaskIds> out = new ArrayList<>();
        tasks.forEach(t -> out.add(new StreamsGroupHeartbeatResponseData.TaskIds().setSubtopologyId(t.topic())
                .setPartitions(new ArrayList<>(t.partitions()))));
        return out;
    }

    private static StreamsTopology.Endpoint endpoint(StreamsGroupHeartbeatRequestData.Endpoint e) {
        return e == null ? null : new StreamsTopology.Endpoint(e.host(), e.port());
    }

    /** One entry per member, as Kafka sends them: a client with several stream threads unites its members' entries. */
    private static List<StreamsGroupHeartbeatResponseData.EndpointToPartitions> byEndpoint(
            List<StreamsTopology.MemberEndpoint> members) {
        List<StreamsGroupHeartbeatResponseData.EndpointToPartitions> out = new ArrayList<>();
        for (StreamsTopology.MemberEndpoint m : members) {
            out.add(new StreamsGroupHeartbeatResponseData.EndpointToPartitions()
                    .setUserEndpoint(new StreamsGroupHeartbeatResponseData.Endpoint()
                            .setHost(m.endpoint().host()).setPort(m.endpoint().port()))
                    .setActivePartitions(endpointPartitions(m.partitions()))
                    .setStandbyPartitions(endpointPartitions(m.standbyPartitions())));
        }
        return out;
    }

    private static List<StreamsGroupHeartbeatResponseData.TopicPartition> endpointPartitions(
            List<TopicPartitions> partitions) {
        List<StreamsGroupHeartbeatResponseData.TopicPartition> out = new ArrayList<>();
        partitions.forEach(tp -> out.add(new StreamsGroupHeartbeatResponseData.TopicPartition().setTopic(tp.topic())
                .setPartitions(new ArrayList<>(tp.partitions()))));
        return out;
    }

    private static boolean isTopologyRefusal(RuntimeException e) {
        return KafkaErrors.unwrap(e) instanceof TierlogException t && "topology".equals(t.extra().get("field"));
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
