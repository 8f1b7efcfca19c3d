package io.tierlog.service.kafka;

import io.tierlog.access.Operation;
import io.tierlog.access.Principal;
import io.tierlog.access.Resource;
import io.tierlog.service.security.AccessControl;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.StreamsGroupDescribeRequest;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Which scopes each Kafka API needs, the Kafka counterpart of HTTP's route table ({@code HttpRoutes}), checked by the
 * same {@link AccessControl} (same scopes, same audit line and denial counter): produce on a topic for Produce,
 * fetch for Fetch and ListOffsets, describe for Metadata, DescribeConfigs and DescribeLogDirs, create, delete (DeleteTopics,
 * DeleteRecords) and alter (CreatePartitions, AlterConfigs, IncrementalAlterConfigs) as over HTTP, and admin on the cluster to alter anything but a
 * topic's configs; on groups, read for membership (a streams member with describe on its topology's topics; the
 * internal topics created for it need create, {@link #allowsCreate}), OffsetFetch and the describes, commit for OffsetCommit (with
 * fetch on each topic it names, as HTTP's commit), delete for OffsetDelete; AlterShareGroupOffsets as OffsetCommit,
 * DeleteShareGroupOffsets delete on the group with fetch on each topic. Transactions (Kafka's WRITE on a
 * TransactionalId): produce on the transactional id for InitProducerId naming one, AddPartitionsToTxn (with produce
 * on each topic), AddOffsetsToTxn and TxnOffsetCommit (with commit on the group, and fetch on each topic for the
 * latter), EndTxn and a transactional Produce; describe on it for DescribeTransactions. The ACL and client-quota
 * APIs, and client-metrics subscriptions (ListConfigResources, their configs), need admin on the cluster, and so do a
 * delegation token owned by another principal and describing others' tokens ({@link #mayManageTokensOf}).
 * GetTelemetrySubscriptions, PushTelemetry, ApiVersions, an idempotent
 * InitProducerId, FindCoordinator and DescribeCluster need only an authenticated caller. Listings (Metadata and DescribeLogDirs of
 * all topics, ListGroups) show only what the caller may describe or read; Metadata naming topics answers
 * TOPIC_AUTHORIZATION_FAILED for each one the caller may not describe, as Kafka does (clients ask for all their
 * topics in one Metadata request).
 *
 * <p>Any other request naming anything the caller may not use is refused whole, with TOPIC_, GROUP_ or
 * CLUSTER_AUTHORIZATION_FAILED on every part of it (Kafka refuses per topic; whole-request refusal never serves
 * part of a request the caller should not make). Stateless.
 */
final class KafkaAccess {
    private final AccessControl access;
    private final KafkaTopics topics;

    KafkaAccess(AccessControl access, KafkaTopics topics) {
        this.access = access;
        this.topics = topics;
    }

    /** A request naming a topic by an id this process has not seen: its check reads the volume (off the event loop). */
    static final class NeedsLookup extends RuntimeException {
        private static final NeedsLookup INSTANCE = new NeedsLookup();

        private NeedsLookup() {
            super(null, null, false, false);
        }
    }

    /**
     * The refusal for {@code request} by {@code caller}, or null when it may be served.
     *
     * @param mayReadVolume false on the event loop: a topic id not seen before then throws {@link NeedsLookup}
     */
    ApiException refusal(AbstractRequest request, Principal caller, String clientId, boolean mayReadVolume) {
        List<Need> needs = new ArrayList<>();
        collect(request, needs::add, mayReadVolume);
        for (Need need : needs) {
            if (!access.allows(caller, need.op, need.resource, "kafka " + request.apiKey().name + " client=" + clientId)) {
                String what = need.op.id() + " " + need.resource;
                return switch (need.resource.kind()) {
                    case TOPIC -> new TopicAuthorizationException("not allowed to " + what);
                    case GROUP -> new GroupAuthorizationException("not allowed to " + what);
                    case TRANSACTION -> new TransactionalIdAuthorizationException("not allowed to " + what);
                    case CLUSTER -> new ClusterAuthorizationException("not allowed to " + what);
                };
            }
        }
        return null;
    }

    /** For listings: whether the caller may see the topic (describe). Not audited: a listing just leaves it out. */
    boolean mayDescribeTopic(Principal caller, String topic) {
        return caller.allows(Operation.DESCRIBE, Resource.topic(topic));
    }

    /**
     * For CreateDelegationToken: whether {@code caller} may create a token owned by {@code owner}: its own, or anyone's
     * as the cluster's administrator (Kafka's CREATE_TOKENS on the user). A refusal is audited.
     */
    boolean mayManageTokensOf(Principal caller, String owner, String clientId) {
        return owner.equals(caller.name()) || access.allows(caller, Operation.ADMIN, Resource.CLUSTER,
                "kafka CreateDelegationToken owner=" + owner + " client=" + clientId);
    }

    /**
     * For DescribeDelegationToken: whether {@code caller} may see a token it neither owns, requested nor renews, as the
     * cluster's administrator (Kafka's DESCRIBE_TOKENS on its owner). Not audited: a listing just leaves it out.
     */
    boolean maySeeTokensOf(Principal caller, String owner) {
        return owner.equals(caller.name()) || caller.allows(Operation.ADMIN, Resource.CLUSTER);
    }

    /** For Metadata naming a topic: whether the caller may describe it; a refusal is audited. */
    boolean allowsDescribe(Principal caller, String topic, String clientId) {
        return access.allows(caller, Operation.DESCRIBE, Resource.topic(topic), "kafka Metadata client=" + clientId);
    }

    /** For a streams group's internal topics, created by the service on the caller's behalf; a refusal is audited. */
    boolean allowsCreate(Principal caller, String topic, String clientId) {
        return access.allows(caller, Operation.CREATE, Resource.topic(topic),
                "kafka StreamsGroupHeartbeat client=" + clientId);
    }

    /** For ListGroups: whether the caller may see the group (read). */
    boolean mayReadGroup(Principal caller, String group) {
        return caller.allows(Operation.READ, Resource.group(group));
    }

    private record Need(Operation op, Resource resource) {
    }

    private void collect(AbstractRequest request, Consumer<Need> needs, boolean mayReadVolume) {
        TopicNeeds topic = (name, id, op, sink) -> topic(name, id, op, sink, mayReadVolume);
        Consumer<Need> out = needs;
        switch (request.apiKey()) {
            case PRODUCE -> {
                var data = ((ProduceRequest) request).data();
                data.topicData().forEach(t -> topic.accept(t.name(), t.topicId(), Operation.PRODUCE, out));
                // Kafka: WRITE on the transactional id for a transactional produce.
                transaction(data.transactionalId(), Operation.PRODUCE, out);
            }
            case INIT_PRODUCER_ID -> transaction(((org.apache.kafka.common.requests.InitProducerIdRequest) request)
                    .data().transactionalId(), Operation.PRODUCE, out);
            case ADD_PARTITIONS_TO_TXN -> {
                var data = ((org.apache.kafka.common.requests.AddPartitionsToTxnRequest) request).data();
                transaction(data.v3AndBelowTransactionalId(), Operation.PRODUCE, out);
                data.v3AndBelowTopics().forEach(t -> topic.accept(t.name(), null, Operation.PRODUCE, out));
            }
            case ADD_OFFSETS_TO_TXN -> {
                // Kafka: WRITE on the transactional id, READ on the group; the group's positions are written at
                // commit, so Tierlog asks commit on it, as for OffsetCommit.
                var data = ((org.apache.kafka.common.requests.AddOffsetsToTxnRequest) request).data();
                transaction(data.transactionalId(), Operation.PRODUCE, out);
                group(data.groupId(), Operation.COMMIT, out);
            }
            case TXN_OFFSET_COMMIT -> {
                var data = ((org.apache.kafka.common.requests.TxnOffsetCommitRequest) request).data();
                transaction(data.transactionalId(), Operation.PRODUCE, out);
                group(data.groupId(), Operation.COMMIT, out);
                data.topics().forEach(t -> topic.accept(t.name(), null, Operation.FETCH, out));
            }
            case END_TXN -> transaction(((org.apache.kafka.common.requests.EndTxnRequest) request).data()
                    .transactionalId(), Operation.PRODUCE, out);
            case DESCRIBE_TRANSACTIONS -> ((org.apache.kafka.common.requests.DescribeTransactionsRequest) request)
                    .data().transactionalIds().forEach(id -> transaction(id, Operation.DESCRIBE, out));
            case FETCH -> ((FetchRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.topic(), t.topicId(), Operation.FETCH, out));
            case LIST_OFFSETS -> ((ListOffsetsRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.name(), null, Operation.FETCH, out));
            case CREATE_TOPICS -> ((CreateTopicsRequest) request).data().topics()
                    .forEach(t -> out.accept(new Need(Operation.CREATE, Resource.topic(t.name()))));
            case DELETE_TOPICS -> {
                var data = ((DeleteTopicsRequest) request).data();
                data.topicNames().forEach(n -> topic.accept(n, null, Operation.DELETE, out));
                data.topics().forEach(t -> topic.accept(t.name(), t.topicId(), Operation.DELETE, out));
            }
            case CREATE_PARTITIONS -> ((CreatePartitionsRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.name(), null, Operation.ALTER, out));
            case INCREMENTAL_ALTER_CONFIGS -> ((IncrementalAlterConfigsRequest) request).data().resources()
                    .forEach(r -> alterConfigs(r.resourceType(), r.resourceName(), topic, out));
            case ALTER_CONFIGS -> ((AlterConfigsRequest) request).data().resources()
                    .forEach(r -> alterConfigs(r.resourceType(), r.resourceName(), topic, out));
            case DESCRIBE_CONFIGS -> {
                for (DescribeConfigsRequestData.DescribeConfigsResource r
                        : ((DescribeConfigsRequest) request).data().resources()) {
                    if (r.resourceType() == ConfigResource.Type.TOPIC.id()) {
                        topic.accept(r.resourceName(), null, Operation.DESCRIBE, out);
                    } else if (r.resourceType() == ConfigResource.Type.GROUP.id()) {
                        group(r.resourceName(), Operation.READ, out);
                    } else if (r.resourceType() == ConfigResource.Type.CLIENT_METRICS.id()
                            || r.resourceType() == ConfigResource.Type.BROKER_LOGGER.id()) {
                        out.accept(new Need(Operation.ADMIN, Resource.CLUSTER));
                    }
                }
            }
            case OFFSET_COMMIT -> {
                // As over HTTP: committing a position in a topic needs fetch on it, or a group's committer could
                // probe and move positions in topics it may not read.
                var data = ((OffsetCommitRequest) request).data();
                group(data.groupId(), Operation.COMMIT, out);
                data.topics().forEach(t -> topic.accept(t.name(), t.topicId(), Operation.FETCH, out));
            }
            case OFFSET_FETCH -> {
                for (OffsetFetchRequestData.OffsetFetchRequestGroup g : ((OffsetFetchRequest) request).groups()) {
                    group(g.groupId(), Operation.READ, out);
                }
            }
            case OFFSET_DELETE -> group(((OffsetDeleteRequest) request).data().groupId(), Operation.DELETE, out);
            case DELETE_GROUPS -> ((DeleteGroupsRequest) request).data().groupsNames()
                    .forEach(g -> group(g, Operation.DELETE, out));
            case OFFSET_FOR_LEADER_EPOCH -> ((OffsetsForLeaderEpochRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.topic(), null, Operation.DESCRIBE, out));
            case CONSUMER_GROUP_HEARTBEAT -> group(((ConsumerGroupHeartbeatRequest) request).data().groupId(),
                    Operation.READ, out);
            case JOIN_GROUP -> group(((JoinGroupRequest) request).data().groupId(), Operation.READ, out);
            case SYNC_GROUP -> group(((SyncGroupRequest) request).data().groupId(), Operation.READ, out);
            case HEARTBEAT -> group(((HeartbeatRequest) request).data().groupId(), Operation.READ, out);
            case LEAVE_GROUP -> group(((LeaveGroupRequest) request).data().groupId(), Operation.READ, out);
            case CONSUMER_GROUP_DESCRIBE -> ((ConsumerGroupDescribeRequest) request).data().groupIds()
                    .forEach(g -> group(g, Operation.READ, out));
            case STREAMS_GROUP_HEARTBEAT -> {
                // Kafka: read on the group, describe on every topic of the topology a joining member sends (creating
                // its internal topics needs create on each, checked where they are created: KafkaStreamsGroups).
                var data = ((StreamsGroupHeartbeatRequest) request).data();
                group(data.groupId(), Operation.READ, out);
                if (data.topology() != null) {
                    for (var s : data.topology().subtopologies()) {
                        s.sourceTopics().forEach(t -> topic.accept(t, null, Operation.DESCRIBE, out));
                        s.repartitionSinkTopics().forEach(t -> topic.accept(t, null, Operation.DESCRIBE, out));
                        s.repartitionSourceTopics().forEach(t -> topic.accept(t.name(), null, Operation.DESCRIBE, out));
                        s.stateChangelogTopics().forEach(t -> topic.accept(t.name(), null, Operation.DESCRIBE, out));
                    }
                }
            }
            case STREAMS_GROUP_DESCRIBE -> ((StreamsGroupDescribeRequest) request).data().groupIds()
                    .forEach(g -> group(g, Operation.READ, out));
            case DESCRIBE_GROUPS -> ((DescribeGroupsRequest) request).data().groups()
                    .forEach(g -> group(g, Operation.READ, out));
            case SHARE_GROUP_HEARTBEAT -> group(((org.apache.kafka.common.requests.ShareGroupHeartbeatRequest) request)
                    .data().groupId(), Operation.READ, out);
            case SHARE_GROUP_DESCRIBE -> ((org.apache.kafka.common.requests.ShareGroupDescribeRequest) request).data()
                    .groupIds().forEach(g -> group(g, Operation.READ, out));
            case DESCRIBE_SHARE_GROUP_OFFSETS -> ((org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest)
                    request).data().groups().forEach(g -> group(g.groupId(), Operation.READ, out));
            case ALTER_SHARE_GROUP_OFFSETS -> {
                // Kafka: READ on the group and on each topic, as for OffsetCommit; mapped as OffsetCommit is: commit
                // on the group (a write to its positions), fetch on each topic it moves a position in.
                var data = ((org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest) request).data();
                group(data.groupId(), Operation.COMMIT, out);
                data.topics().forEach(t -> topic.accept(t.topicName(), null, Operation.FETCH, out));
            }
            case DELETE_SHARE_GROUP_OFFSETS -> {
                // Kafka: DELETE on the group (as OffsetDelete and DeleteGroups) and READ on each topic.
                var data = ((org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest) request).data();
                group(data.groupId(), Operation.DELETE, out);
                data.topics().forEach(t -> topic.accept(t.topicName(), null, Operation.FETCH, out));
            }
            case SHARE_FETCH -> {
                // As HTTP's lease: read on the group, fetch on every topic.
                var data = ((org.apache.kafka.common.requests.ShareFetchRequest) request).data();
                group(data.groupId(), Operation.READ, out);
                data.topics().forEach(t -> topic.accept(null, t.topicId(), Operation.FETCH, out));
            }
            case SHARE_ACKNOWLEDGE -> {
                var data = ((org.apache.kafka.common.requests.ShareAcknowledgeRequest) request).data();
                group(data.groupId(), Operation.READ, out);
                data.topics().forEach(t -> topic.accept(null, t.topicId(), Operation.FETCH, out));
            }
            // Kafka needs read on the topic to list its producers; fetch is Tierlog's read of a topic's records.
            case DESCRIBE_PRODUCERS -> ((DescribeProducersRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.name(), null, Operation.FETCH, out));
            case DELETE_RECORDS -> ((DeleteRecordsRequest) request).data().topics()
                    .forEach(t -> topic.accept(t.name(), null, Operation.DELETE, out));
            case DESCRIBE_LOG_DIRS -> {
                // Naming topics needs describe on each; a request for all of them lists only those (KafkaLogDirs).
                var named = ((DescribeLogDirsRequest) request).data().topics();
                if (named != null) {
                    named.forEach(t -> topic.accept(t.topic(), null, Operation.DESCRIBE, out));
                }
            }
            // Kafka's DESCRIBE(_CONFIGS) and ALTER(_CONFIGS) on the cluster: who may use what, how fast, with
            // which password, and where replicas live, is the administrator's.
            case DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS, DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS,
                 DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS, ELECT_LEADERS,
                 LIST_PARTITION_REASSIGNMENTS, ALTER_PARTITION_REASSIGNMENTS, LIST_CONFIG_RESOURCES ->
                    out.accept(new Need(Operation.ADMIN, Resource.CLUSTER));
            default -> {
                // ApiVersions, SASL, an idempotent InitProducerId, FindCoordinator, DescribeCluster, ListGroups and
                // ListTransactions (both filtered), and a client's own metrics (GetTelemetrySubscriptions,
                // PushTelemetry, as in Kafka): any authenticated caller. Metadata and DescribeTopicPartitions
                // check each topic themselves (a listing leaves out what the caller may not describe).
            }
        }
    }

    @FunctionalInterface
    private interface TopicNeeds {
        void accept(String name, Uuid id, Operation op, Consumer<Need> out);
    }

    /** A topic named by name, or by id (an id no topic has needs nothing: the API answers it unknown). */
    /**
     * What altering a config resource needs: {@code alter} on a topic; {@code commit} on a group (as HTTP's share-group
     * config); for broker (and logger) configs, the cluster's administrator, as in Kafka (none can be altered here,
     * but only the administrator is told so).
     */
    private void alterConfigs(byte type, String name, TopicNeeds topic, Consumer<Need> out) {
        if (type == ConfigResource.Type.TOPIC.id()) {
            topic.accept(name, null, Operation.ALTER, out);
        } else if (type == ConfigResource.Type.GROUP.id()) {
            group(name, Operation.COMMIT, out);
        } else {
            out.accept(new Need(Operation.ADMIN, Resource.CLUSTER));
        }
    }

    private void topic(String name, Uuid id, Operation op, Consumer<Need> out, boolean mayReadVolume) {
        String resolved = name;
        if (resolved == null || resolved.isEmpty()) {
            if (id == null || Uuid.ZERO_UUID.equals(id)) {
                return;
            }
            resolved = KafkaTopics.knownName(id).orElse(null);
            if (resolved == null) {
                if (!mayReadVolume) {
                    throw NeedsLookup.INSTANCE;
                }
                try {
                    resolved = topics.resolve(null, id).name();
                } catch (RuntimeException unknown) {
                    return;
                }
            }
        }
        out.accept(new Need(op, Resource.topic(resolved)));
    }

    /** A transactional id's need; none for a request without one (an idempotent producer). */
    private static void transaction(String transactionalId, Operation op, Consumer<Need> out) {
        if (transactionalId != null) {
            out.accept(new Need(op, Resource.transaction(transactionalId)));
        }
    }

    /** For ListTransactions: whether the caller may see the transactional id (describe). */
    boolean mayDescribeTransaction(Principal caller, String transactionalId) {
        return caller.allows(Operation.DESCRIBE, Resource.transaction(transactionalId));
    }

    private static void group(String group, Operation op, Consumer<Need> out) {
        out.accept(new Need(op, Resource.group(group == null ? "" : group)));
    }
}
