package io.tierlog.service.kafka;

import io.tierlog.access.Principal;
import io.tierlog.log.ReadMemory;
import io.tierlog.service.PooledDirectMemory;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.security.AccessControl;
import io.tierlog.service.ServiceThreads;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.quota.Quotas;
import io.vertx.core.Vertx;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.StreamsGroupDescribeRequest;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListConfigResourcesRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.PushTelemetryRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.jboss.logging.Logger;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Parses one Kafka request frame with kafka-clients' own classes, answers it, and encodes the answer
 * ({@link Frames}). Every API and version listed in {@link KafkaApiVersions} is answered; any other known API is answered
 * with {@code UNSUPPORTED_VERSION} (ApiVersions at a version above ours with its version-0 answer, as Kafka does),
 * so a client never loses its connection over an API it probes.
 *
 * <p>Threads: called on a connection's event loop. Nothing here blocks it: reads (fetch, list offsets, metadata)
 * run on {@link ServiceThreads#reads()}, appends, topic changes and group calls on Quarkus' worker pool; a classic
 * group's JoinGroup or SyncGroup that waits for its round holds no thread ({@link KafkaClassicGroups}). The
 * returned future completes on whichever thread finished the work, with the encoded response frame, or {@code null}
 * when Kafka sends none (produce with acks=0). Thread-safe.
 */
@Singleton
public class KafkaApis {
    private static final Logger LOG = Logger.getLogger(KafkaApis.class);

    private final KafkaApiVersions versions;

    private final KafkaProduce produce;
    private final KafkaFetch fetch;
    private final KafkaClusterApis clusterApis;
    private final KafkaLogDirs logDirs;
    private final KafkaDeleteRecords deleteRecords;
    private final KafkaGroupOffsets groupOffsets;
    private final KafkaGroups groups;
    private final KafkaClassicGroups classicGroups;
    private final KafkaStreamsGroups streamsGroups;
    private final KafkaAccess kafkaAccess;
    private final KafkaShareGroups shareGroups;
    private final KafkaShareFetch shareFetch;
    private final KafkaShareGroupAdmin shareAdmin;
    private final KafkaTransactions transactions;
    private final KafkaAcls acls;
    private final KafkaClientQuotas clientQuotas;
    private final KafkaClientTelemetry clientTelemetry;
    private final KafkaConfigResources configResources;
    private final KafkaSasl sasl;
    private final KafkaScram scram;
    private final KafkaDelegationTokens delegationTokens;
    private final KafkaReplicaApis replicaApis;
    private final KafkaQuotas quotas;
    private final Clock clock;
    private final Executor reads;
    private final Executor workers;
    private final String clusterId;
    private final ReadMemory memory;
    private volatile Supplier<KafkaCluster> cluster = () -> new KafkaCluster(new Broker(0, "localhost", -1),
            List.of(new Broker(0, "localhost", -1)));

    public KafkaApis(KafkaProduce produce, KafkaFetch fetch, KafkaClusterApis cluster, KafkaGroupOffsets groupOffsets,
                     KafkaGroups groups, KafkaClassicGroups classicGroups, KafkaStreamsGroups streamsGroups,
                     KafkaLogDirs logDirs,
                     KafkaDeleteRecords deleteRecords, KafkaShareGroups shareGroups, KafkaShareFetch shareFetch,
                     KafkaShareGroupAdmin shareAdmin, KafkaTransactions transactions, KafkaAcls acls,
                     KafkaClientQuotas clientQuotas, KafkaClientTelemetry clientTelemetry,
                     KafkaGroupConfigs groupConfigs, AccessControl access, Clock clock, ServiceThreads threads,
                     Vertx vertx, TierlogConfig config, TopicStore topics, PooledDirectMemory memory, Quotas quotas) {
        this.memory = memory;
        this.versions = new KafkaApiVersions(config.kafka().transactionVersion());
        this.quotas = new KafkaQuotas(quotas);
        this.shareGroups = shareGroups;
        this.shareFetch = shareFetch;
        this.shareAdmin = shareAdmin;
        this.transactions = transactions;
        this.acls = acls;
        this.clientQuotas = clientQuotas;
        this.clientTelemetry = clientTelemetry;
        this.configResources = new KafkaConfigResources(topics, () -> this.cluster.get(),
                clientTelemetry::subscriptionNames, () -> allGroups(groups, shareGroups, groupConfigs));
        this.groups = groups;
        this.classicGroups = classicGroups;
        this.streamsGroups = streamsGroups;
        this.logDirs = logDirs;
        this.deleteRecords = deleteRecords;
        this.kafkaAccess = new KafkaAccess(access, new KafkaTopics(topics));
        this.replicaApis = new KafkaReplicaApis(new KafkaTopics(topics));
        this.scram = new KafkaScram(access);
        this.delegationTokens = new KafkaDelegationTokens(access, kafkaAccess);
        this.sasl = new KafkaSasl(access, scram, clock);
        this.clock = clock;
        this.produce = produce;
        this.fetch = fetch;
        this.clusterApis = cluster;
        this.groupOffsets = groupOffsets;
        this.reads = threads.reads();
        this.workers = task -> vertx.executeBlocking(() -> {
            task.run();
            return null;
        }, false);
        // Stable for a data directory, so clients that remember a cluster id see the same one after a restart.
        UUID id = UUID.nameUUIDFromBytes(config.dataDir().toAbsolutePath().normalize().toString()
                .getBytes(StandardCharsets.UTF_8));
        this.clusterId = new Uuid(id.getMostSignificantBits(), id.getLeastSignificantBits()).toString();
    }

    /** Answers as {@code cluster.get().self()}, advertising the brokers {@code cluster} names at each request. */
    void serveAs(Supplier<KafkaCluster> cluster) {
        this.cluster = cluster;
        this.clusterApis.serveAs(cluster, clusterId);
    }

    /** A frame that is not a Kafka request this listener can read: its connection is closed. */
    static final class MalformedRequest extends Exception {
        MalformedRequest(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * @param frame one request without its size prefix; a produce's records are appended from it, so it must stay
     *              unchanged until the returned future completes
     * @return the response frame, or null when Kafka sends none; its writer releases it once written
     */
    CompletableFuture<Frames.Frame> handle(ByteBuffer frame, KafkaSession session) throws MalformedRequest {
        RequestHeader header;
        try {
            header = RequestHeader.parse(frame);
        } catch (RuntimeException e) {
            throw new MalformedRequest("unreadable request header: " + e.getMessage());
        }
        ApiKeys api = header.apiKey();
        short version = header.apiVersion();
        if (api == ApiKeys.API_VERSIONS && !versions.supports(api, version)) {
            // Kafka's rule (KIP-511): an unknown ApiVersions version is answered at version 0, listing ours.
            return CompletableFuture.completedFuture(Frames.gathering(header.toResponseHeader(),
                    versions.response(Errors.UNSUPPORTED_VERSION), (short) 0, memory, () -> { }));
        }
        if (!api.isVersionSupported(version)) {
            throw new MalformedRequest(api + " version " + version + " is unknown to this listener's kafka-clients");
        }
        AbstractRequest request;
        try {
            request = AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(frame)).request;
        } catch (RuntimeException e) {
            throw new MalformedRequest("unreadable " + api + " v" + version + " request: " + e.getMessage());
        }
        CompletableFuture<Reply> reply;
        if (!versions.supports(api, version)) {
            reply = CompletableFuture.completedFuture(new Reply(errorAnswer(request,
                    new UnsupportedVersionException(api + " v" + version + " is not supported by Tierlog"))));
        } else {
            Principal caller = session.principal();
            boolean saslApi = api == ApiKeys.API_VERSIONS || api == ApiKeys.SASL_HANDSHAKE
                    || api == ApiKeys.SASL_AUTHENTICATE;
            if (caller != null && !saslApi && clock.millis() > session.authenticatedUntilMs()) {
                // KIP-368: a client that did not re-authenticate in time loses its connection, as with Kafka.
                throw new MalformedRequest("SASL session of " + caller.name() + " expired");
            }
            try {
                if (saslApi) {
                    reply = dispatch(request, version, session, header.clientId());
                } else if (caller == null) {
                    reply = refused(request, new SaslAuthenticationException(
                            "authenticate first (SASL PLAIN or OAUTHBEARER with a Tierlog token, or SCRAM)"));
                } else if (api == ApiKeys.PRODUCE) {
                    reply = session.inProduceOrder(() -> authorized(request, version, session, caller, header.clientId()));
                } else {
                    reply = authorized(request, version, session, caller, header.clientId());
                }
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
        }
        boolean answered = !(request instanceof ProduceRequest produceRequest && produceRequest.acks() == 0);
        return reply.handle((r, error) -> {
            if (error != null && !answered) {
                // acks=0: the client reads no answer, so an error answer would break its response order.
                LOG.warnf(error, "Kafka produce with acks=0 from %s failed", header.clientId());
                return null;
            }
            if (error != null) {
                if (!(KafkaErrors.unwrap(error) instanceof org.apache.kafka.common.errors.ApiException)
                        && !(KafkaErrors.unwrap(error) instanceof io.tierlog.log.TierlogException)) {
                    LOG.warnf(error, "Kafka %s v%d from %s failed", api, version, header.clientId());
                }
                r = new Reply(errorAnswer(request, KafkaErrors.exception(error)));
            }
            if (r.body() == null) {
                r.release().run();
                return null;
            }
            // The fetched batches go out as they are; the connection releases their memory once they are written.
            return Frames.gathering(header.toResponseHeader(), r.body(), version, memory, r.release());
        });
    }

    /**
     * Serves {@code request} if {@code caller}'s scopes allow it ({@link KafkaAccess}). The check runs here when it
     * needs no I/O, else (a topic id this process has not seen) on the read pool. Does not touch the session's
     * produce chain, so it may run on any thread.
     */
    private CompletableFuture<Reply> authorized(AbstractRequest request, short version, KafkaSession session,
                                                Principal caller, String clientId) {
        try {
            ApiException refusal = kafkaAccess.refusal(request, caller, clientId, false);
            return refusal == null ? dispatch(request, version, session, clientId) : refused(request, refusal);
        } catch (KafkaAccess.NeedsLookup lookup) {
            return CompletableFuture.supplyAsync(() -> kafkaAccess.refusal(request, caller, clientId, true), reads)
                    .thenCompose(refusal -> refusal == null ? dispatch(request, version, session, clientId)
                            : refused(request, refusal));
        }
    }

    /** The request's own error answer, on every part of it; none for a produce with acks=0 (the client reads none). */
    private static CompletableFuture<Reply> refused(AbstractRequest request, ApiException why) {
        if (request instanceof ProduceRequest produceRequest && produceRequest.acks() == 0) {
            return CompletableFuture.completedFuture(new Reply((ApiMessage) null, () -> {
            }));
        }
        return done(errorAnswer(request, why));
    }

    /** {@code request}'s answer with {@code error} on every part of it. */
    private static AbstractResponse errorAnswer(AbstractRequest request, ApiException error) {
        return request instanceof ProduceRequest produce ? KafkaProduce.refused(produce, error)
                : request.getErrorResponse(0, error);
    }

    private CompletableFuture<Reply> dispatch(AbstractRequest request, short version, KafkaSession session,
                                              String clientId) {
        ChargedWork charged = new ChargedWork(session, clientId);
        return switch (request.apiKey()) {
            case API_VERSIONS -> {
                ApiVersionsRequest asked = (ApiVersionsRequest) request;
                if (!asked.isValid()) {
                    // Kafka's check (v3+): a software name and version of letters, digits, '.' and '-'.
                    yield done(asked.getErrorResponse(0, Errors.INVALID_REQUEST.exception()));
                }
                session.clientSoftware(asked.data().clientSoftwareName(), asked.data().clientSoftwareVersion());
                yield done(new ApiVersionsResponse(versions.response(Errors.NONE)));
            }
            case GET_TELEMETRY_SUBSCRIPTIONS -> charged.on(workers, () -> clientTelemetry.subscriptions(
                    (GetTelemetrySubscriptionsRequest) request, session, clientId));
            case PUSH_TELEMETRY -> charged.on(workers, () -> clientTelemetry.push((PushTelemetryRequest) request,
                    session, clientId));
            case LIST_CONFIG_RESOURCES -> charged.on(workers, () -> configResources.list(
                    ((ListConfigResourcesRequest) request).data(), version));
            case METADATA -> charged.on(reads, () -> clusterApis.metadata((MetadataRequest) request, version, clientId,
                    topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic),
                    topic -> kafkaAccess.allowsDescribe(session.principal(), topic, clientId)));
            case DESCRIBE_TOPIC_PARTITIONS -> charged.on(reads, () -> clusterApis.describeTopicPartitions(
                    (DescribeTopicPartitionsRequest) request, clientId,
                    topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic),
                    topic -> kafkaAccess.allowsDescribe(session.principal(), topic, clientId)));
            case PRODUCE -> charged.timed(workers, pool -> produce.produce((ProduceRequest) request, version, pool)
                    .thenApply(reply -> quotas.produced((ProduceRequest) request, reply, session, clientId)));
            case SASL_HANDSHAKE -> done(sasl.handshake((SaslHandshakeRequest) request, session));
            // Not charged, as Kafka's authenticator is not: no caller's rate applies before it is known.
            case SASL_AUTHENTICATE -> CompletableFuture.supplyAsync(() -> new Reply(
                    sasl.authenticate((SaslAuthenticateRequest) request, session, clientId)), workers);
            case INIT_PRODUCER_ID -> ((InitProducerIdRequest) request).data().transactionalId() == null
                    ? done(produce.initProducerId((InitProducerIdRequest) request))
                    : charged.on(workers, () -> transactions.initProducerId((InitProducerIdRequest) request));
            case ADD_PARTITIONS_TO_TXN -> charged.on(workers, () -> transactions.addPartitions(
                    (org.apache.kafka.common.requests.AddPartitionsToTxnRequest) request));
            case ADD_OFFSETS_TO_TXN -> charged.on(workers, () -> transactions.addOffsets(
                    (org.apache.kafka.common.requests.AddOffsetsToTxnRequest) request));
            case TXN_OFFSET_COMMIT -> charged.on(workers, () -> transactions.txnOffsetCommit(
                    (org.apache.kafka.common.requests.TxnOffsetCommitRequest) request, version));
            case END_TXN -> charged.on(workers,
                    () -> transactions.endTxn((org.apache.kafka.common.requests.EndTxnRequest) request, version));
            case DESCRIBE_TRANSACTIONS -> charged.on(workers, () -> transactions.describe(
                    (org.apache.kafka.common.requests.DescribeTransactionsRequest) request));
            case LIST_TRANSACTIONS -> charged.on(workers, () -> transactions.list(
                    (org.apache.kafka.common.requests.ListTransactionsRequest) request,
                    id -> kafkaAccess.mayDescribeTransaction(session.principal(), id)));
            case DESCRIBE_PRODUCERS -> charged.on(workers,
                    () -> produce.describeProducers((DescribeProducersRequest) request));
            case FETCH -> {
                long throttleMs = quotas.fetchThrottleMs(session, clientId);
                yield throttleMs > 0
                        ? CompletableFuture.completedFuture(new Reply(quotas.throttledFetch((FetchRequest) request,
                                version, throttleMs, session), () -> { }))
                        : charged.timed(reads, pool -> fetch.fetch((FetchRequest) request, version,
                                session.principal().name(), session.fileSlices(),
                                readReplicas(((FetchRequest) request).data().rackId()), pool)
                        .thenApply(reply -> quotas.fetched(reply, session, clientId)));
            }
            case LIST_OFFSETS -> charged.on(reads, () -> fetch.listOffsets((ListOffsetsRequest) request));
            // KIP-599: THROTTLING_QUOTA_EXCEEDED from CreateTopics v6, DeleteTopics v5 and CreatePartitions v3 on.
            case CREATE_TOPICS -> charged.on(workers,
                    () -> clusterApis.createTopics((CreateTopicsRequest) request, version,
                            quotas.mutations(session, clientId, version >= 6)));
            case DELETE_TOPICS -> charged.on(workers,
                    () -> clusterApis.deleteTopics((DeleteTopicsRequest) request, version,
                            quotas.mutations(session, clientId, version >= 5)));
            case DESCRIBE_CONFIGS -> charged.on(reads,
                    () -> clusterApis.describeConfigs((DescribeConfigsRequest) request));
            case CREATE_PARTITIONS -> charged.on(workers,
                    () -> clusterApis.createPartitions((CreatePartitionsRequest) request,
                            quotas.mutations(session, clientId, version >= 3)));
            case ALTER_CONFIGS -> charged.on(workers, () -> clusterApis.alterConfigs((AlterConfigsRequest) request));
            case INCREMENTAL_ALTER_CONFIGS -> charged.on(workers,
                    () -> clusterApis.incrementalAlterConfigs((IncrementalAlterConfigsRequest) request));
            case DESCRIBE_CLUSTER -> done(describeCluster());
            case DELETE_RECORDS -> charged.on(workers,
                    () -> deleteRecords.deleteRecords((DeleteRecordsRequest) request));
            case DESCRIBE_LOG_DIRS -> charged.on(reads, () -> logDirs.describe((DescribeLogDirsRequest) request,
                    cluster.get(), topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic)));
            case FIND_COORDINATOR -> done(findCoordinator((FindCoordinatorRequest) request, version));
            case OFFSET_COMMIT -> charged.on(workers, () -> groupOffsets.commit((OffsetCommitRequest) request,
                    version));
            case CONSUMER_GROUP_HEARTBEAT -> charged.on(workers,
                    () -> groups.consumerGroupHeartbeat((ConsumerGroupHeartbeatRequest) request, clientId,
                            topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic)));
            case CONSUMER_GROUP_DESCRIBE -> charged.on(workers,
                    () -> groups.consumerGroupDescribe((ConsumerGroupDescribeRequest) request));
            case STREAMS_GROUP_HEARTBEAT -> charged.on(workers,
                    () -> streamsGroups.heartbeat((StreamsGroupHeartbeatRequest) request, clientId,
                            topic -> kafkaAccess.allowsCreate(session.principal(), topic, clientId)));
            case STREAMS_GROUP_DESCRIBE -> charged.on(workers,
                    () -> streamsGroups.describe((StreamsGroupDescribeRequest) request));
            case JOIN_GROUP -> charged.timed(workers, pool -> classicGroups.joinGroup((JoinGroupRequest) request,
                    version, clientId, "/" + session.address(), pool, () -> groups.joinGroup(
                            (JoinGroupRequest) request, version, clientId)).thenApply(Reply::new));
            case SYNC_GROUP -> charged.timed(workers, pool -> classicGroups.syncGroup((SyncGroupRequest) request, pool,
                    () -> groups.syncGroup((SyncGroupRequest) request)).thenApply(Reply::new));
            case HEARTBEAT -> charged.on(workers, () -> orElse(classicGroups.heartbeat((HeartbeatRequest) request),
                    () -> groups.heartbeat((HeartbeatRequest) request, clientId)));
            case LEAVE_GROUP -> charged.on(workers, () -> orElse(classicGroups.leaveGroup((LeaveGroupRequest) request),
                    () -> groups.leaveGroup((LeaveGroupRequest) request)));
            case LIST_GROUPS -> charged.on(workers, () -> {
                java.util.function.Predicate<String> visible = group -> kafkaAccess.mayReadGroup(session.principal(), group);
                ListGroupsResponse listed = groups.listGroups((ListGroupsRequest) request, visible);
                shareGroups.listGroups(((ListGroupsRequest) request).data(), visible, listed.data());
                return listed;
            });
            case DESCRIBE_GROUPS -> charged.on(workers, () -> groups.describeGroups((DescribeGroupsRequest) request));
            case OFFSET_DELETE -> charged.on(workers, () -> groups.offsetDelete((OffsetDeleteRequest) request));
            case DELETE_GROUPS -> charged.on(workers, () -> {
                DeleteGroupsResponse deleted = groups.deleteGroups((DeleteGroupsRequest) request);
                // A group no consumer group has may be a share group.
                deleted.data().results().forEach(r -> {
                    if (r.errorCode() == Errors.GROUP_ID_NOT_FOUND.code()) {
                        r.setErrorCode(shareAdmin.delete(r.groupId()).code());
                    }
                });
                return deleted;
            });
            case DESCRIBE_SHARE_GROUP_OFFSETS -> charged.on(workers, () -> shareAdmin.describeOffsets(
                    (org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest) request,
                    topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic)));
            case ALTER_SHARE_GROUP_OFFSETS -> charged.on(workers, () -> shareAdmin.alterOffsets(
                    (org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest) request));
            case DELETE_SHARE_GROUP_OFFSETS -> charged.on(workers, () -> shareAdmin.deleteOffsets(
                    (org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest) request));
            case OFFSET_FOR_LEADER_EPOCH -> charged.on(reads,
                    () -> fetch.offsetForLeaderEpoch((OffsetsForLeaderEpochRequest) request));
            case OFFSET_FETCH -> charged.on(reads, () -> groupOffsets.fetch((OffsetFetchRequest) request, version));
            case SHARE_GROUP_HEARTBEAT -> charged.on(workers, () -> shareGroups.heartbeat(
                    (org.apache.kafka.common.requests.ShareGroupHeartbeatRequest) request, clientId,
                    topic -> kafkaAccess.mayDescribeTopic(session.principal(), topic)));
            case SHARE_GROUP_DESCRIBE -> charged.on(workers, () -> shareGroups.describe(
                    (org.apache.kafka.common.requests.ShareGroupDescribeRequest) request));
            case SHARE_FETCH -> charged.timed(reads, pool -> shareFetch.fetch(
                    (org.apache.kafka.common.requests.ShareFetchRequest) request, session.principal().name(),
                    session.fileSlices(), pool)
                    .thenApply(reply -> quotas.shareFetched(reply, session, clientId)));
            case SHARE_ACKNOWLEDGE -> charged.timed(reads, pool -> shareFetch.acknowledge(
                    (org.apache.kafka.common.requests.ShareAcknowledgeRequest) request, session.principal().name(),
                    pool));
            case DESCRIBE_ACLS -> charged.on(workers, () -> acls.describe((DescribeAclsRequest) request));
            case CREATE_ACLS -> charged.on(workers,
                    () -> acls.create((CreateAclsRequest) request, session.principal()));
            case DELETE_ACLS -> charged.on(workers,
                    () -> acls.delete((DeleteAclsRequest) request, session.principal()));
            case DESCRIBE_CLIENT_QUOTAS -> charged.on(workers,
                    () -> clientQuotas.describe((DescribeClientQuotasRequest) request));
            case ALTER_CLIENT_QUOTAS -> charged.on(workers,
                    () -> clientQuotas.alter((AlterClientQuotasRequest) request, session.principal()));
            case DESCRIBE_USER_SCRAM_CREDENTIALS -> charged.on(workers,
                    () -> scram.describe((DescribeUserScramCredentialsRequest) request));
            case ALTER_USER_SCRAM_CREDENTIALS -> charged.on(workers,
                    () -> scram.alter((AlterUserScramCredentialsRequest) request, session.principal()));
            case CREATE_DELEGATION_TOKEN -> charged.on(workers, () -> delegationTokens.create(
                    (org.apache.kafka.common.requests.CreateDelegationTokenRequest) request, session, clientId, version));
            case RENEW_DELEGATION_TOKEN -> charged.on(workers, () -> delegationTokens.renew(
                    (org.apache.kafka.common.requests.RenewDelegationTokenRequest) request, session));
            case EXPIRE_DELEGATION_TOKEN -> charged.on(workers, () -> delegationTokens.expire(
                    (org.apache.kafka.common.requests.ExpireDelegationTokenRequest) request, session));
            case DESCRIBE_DELEGATION_TOKEN -> charged.on(workers, () -> delegationTokens.describe(
                    (org.apache.kafka.common.requests.DescribeDelegationTokenRequest) request, session, version));
            case ELECT_LEADERS -> charged.on(reads, () -> replicaApis.electLeaders((ElectLeadersRequest) request));
            case LIST_PARTITION_REASSIGNMENTS -> charged.on(reads,
                    () -> replicaApis.listReassignments((ListPartitionReassignmentsRequest) request));
            case ALTER_PARTITION_REASSIGNMENTS -> charged.on(reads, () -> replicaApis.alterReassignments(
                    (AlterPartitionReassignmentsRequest) request, cluster.get()));
            default -> throw new UnsupportedVersionException(request.apiKey() + " is not supported by Tierlog");
        };
    }

    private static AbstractResponse orElse(AbstractResponse first, Supplier<AbstractResponse> otherwise) {
        return first != null ? first : otherwise.get();
    }

    private static CompletableFuture<Reply> done(AbstractResponse response) {
        return CompletableFuture.completedFuture(new Reply(response));
    }

    /**
     * Runs one request's work on the worker or read pool, its time there charged to the caller's
     * {@code request_percentage} (Kafka's request quota): the answer carries the throttle when the caller is over it,
     * and the session mutes for as long ({@link KafkaQuotas#requested}). Produce, Fetch and the share-group fetches
     * count under the byte rates too. SaslAuthenticate and the event-loop answers (ApiVersions, SaslHandshake,
     * FindCoordinator, DescribeCluster, an idempotent InitProducerId, a throttled fetch) are not charged.
     */
    private final class ChargedWork {
        private final KafkaSession session;
        private final String clientId;

        ChargedWork(KafkaSession session, String clientId) {
            this.session = session;
            this.clientId = clientId;
        }

        CompletableFuture<Reply> on(Executor executor, Supplier<AbstractResponse> work) {
            return CompletableFuture.supplyAsync(() -> {
                long start = System.nanoTime();
                AbstractResponse response = work.get();
                int throttleMs = quotas.requested(session, clientId, System.nanoTime() - start);
                if (response != null && throttleMs > response.throttleTimeMs()) {
                    response.maybeSetThrottleTimeMs(throttleMs);
                }
                return new Reply(response);
            }, executor);
        }

        /**
         * Work whose steps run on {@code executor} with waits between them that hold no thread (a fetch's long poll,
         * a join waiting for the group): charges the time its steps ran, not the waits, once it is answered.
         */
        CompletableFuture<Reply> timed(Executor executor, Function<Executor, CompletableFuture<Reply>> work) {
            PoolTime time = new PoolTime(executor);
            return work.apply(time).thenApply(reply -> {
                KafkaQuotas.raiseThrottle(reply.body(), quotas.requested(session, clientId, time.nanos()));
                return reply;
            });
        }
    }

    /**
     * Runs tasks on a pool and adds up how long they ran: one request's share of that pool. A task may complete the
     * request, and the charge then runs inside it, so a task still running counts up to the moment of asking.
     */
    static final class PoolTime implements Executor {
        private final Executor pool;
        private long completedNanos;
        /** The tasks running now (a group wait's polls may overlap) and the sum of their start times. */
        private int running;
        private long runningStartSum;

        PoolTime(Executor pool) {
            this.pool = pool;
        }

        @Override
        public void execute(Runnable task) {
            pool.execute(() -> {
                long start = started();
                try {
                    task.run();
                } finally {
                    ended(start);
                }
            });
        }

        private synchronized long started() {
            long now = System.nanoTime();
            running++;
            runningStartSum += now;
            return now;
        }

        private synchronized void ended(long start) {
            completedNanos += System.nanoTime() - start;
            running--;
            runningStartSum -= start;
        }

        synchronized long nanos() {
            return completedNanos + running * System.nanoTime() - runningStartSum;
        }
    }

    /** Every group's name, as an administrator's ListGroups lists them, and those with only configs set. */
    private static Collection<String> allGroups(KafkaGroups groups, KafkaShareGroups shareGroups,
                                                KafkaGroupConfigs groupConfigs) {
        ListGroupsRequestData all = new ListGroupsRequestData();
        ListGroupsResponse listed = groups.listGroups(new ListGroupsRequest(all, ApiKeys.LIST_GROUPS.latestVersion()),
                group -> true);
        shareGroups.listGroups(all, group -> true, listed.data());
        Set<String> names = groupConfigs.configuredGroups();
        listed.data().groups().forEach(g -> names.add(g.groupId()));
        return names;
    }

    private DescribeClusterResponse describeCluster() {
        KafkaCluster c = cluster.get();
        DescribeClusterResponseData.DescribeClusterBrokerCollection brokers =
                new DescribeClusterResponseData.DescribeClusterBrokerCollection();
        for (Broker b : c.live()) {
            brokers.add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(b.nodeId())
                    .setHost(b.host()).setPort(b.port()).setRack(b.rack()));
        }
        return new DescribeClusterResponse(new DescribeClusterResponseData().setClusterId(clusterId)
                .setControllerId(c.controller().nodeId()).setBrokers(brokers));
    }

    /**
     * Where a consumer in {@code rack} (its {@code client.rack}, sent in Fetch v11+) should read each partition
     * instead of here (KIP-392): null when it should read here, as it should for every partition when this broker
     * is in its rack, it names none, or no live broker is in it.
     */
    private KafkaFetch.ReadReplicas readReplicas(String rack) {
        KafkaCluster c = cluster.get();
        if (c.readReplicaFor("", 0, rack) == null) {
            return null;
        }
        return (topic, partition) -> c.readReplicaFor(topic, partition, rack).nodeId();
    }

    /**
     * The broker asked coordinates every group and every transactional id it is asked about: their state lives on the
     * shared volume and any instance answers any member or producer, so none needs a home. Other key types (the
     * share coordinator's, broker-to-broker in Kafka) have none here.
     */
    private FindCoordinatorResponse findCoordinator(FindCoordinatorRequest request, short version) {
        Broker b = cluster.get().self();
        FindCoordinatorRequestData data = request.data();
        boolean known = data.keyType() == FindCoordinatorRequest.CoordinatorType.GROUP.id()
                || data.keyType() == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id();
        if (version < 4) {
            FindCoordinatorResponseData out = new FindCoordinatorResponseData();
            if (!known) {
                out.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()).setNodeId(-1).setHost("").setPort(-1);
            } else {
                out.setErrorCode(Errors.NONE.code()).setNodeId(b.nodeId()).setHost(b.host()).setPort(b.port());
            }
            return new FindCoordinatorResponse(out);
        }
        List<FindCoordinatorResponseData.Coordinator> coordinators = new ArrayList<>();
        for (String key : data.coordinatorKeys()) {
            FindCoordinatorResponseData.Coordinator c = new FindCoordinatorResponseData.Coordinator().setKey(key);
            if (!known) {
                c.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()).setNodeId(-1).setHost("").setPort(-1);
            } else {
                c.setNodeId(b.nodeId()).setHost(b.host()).setPort(b.port());
            }
            coordinators.add(c);
        }
        return new FindCoordinatorResponse(new FindCoordinatorResponseData().setCoordinators(coordinators));
    }

    /** A response and what to give back once it is written (the pooled memory of fetched batches). */
    record Reply(ApiMessage body, Runnable release) {
        Reply(AbstractResponse response) {
            this(response == null ? null : response.data(), () -> {
            });
        }
    }
}
