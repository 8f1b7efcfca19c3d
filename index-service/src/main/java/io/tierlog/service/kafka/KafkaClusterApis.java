package io.tierlog.service.kafka;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsResponse;
import org.apache.kafka.common.requests.MetadataResponse;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Metadata, CreateTopics, DeleteTopics and DescribeConfigs over the same {@link TopicStore} and {@link TopicAdmin} as HTTP.
 * Metadata lists the live instances on the hot volume as brokers and spreads partition leadership over them
 * ({@link KafkaCluster}), in the client's rack when its client id names one; every live broker is a replica of every
 * partition (each serves it from the shared volume), all in sync; leader epoch unknown (-1, so clients skip epoch
 * validation); topics are never created by Metadata (auto-create is off). Blocking: runs on a pool thread.
 */
@Singleton
public class KafkaClusterApis {
    private final TopicStore topics;
    private final TopicAdmin admin;
    private final KafkaTopics kafkaTopics;
    private final KafkaGroupConfigs groupConfigs;
    private final KafkaClientTelemetry clientMetrics;
    private final KafkaBrokerLoggers brokerLoggers = new KafkaBrokerLoggers();
    private volatile java.util.function.Supplier<KafkaCluster> cluster = () -> new KafkaCluster(
            new Broker(0, "localhost", -1), List.of(new Broker(0, "localhost", -1)));
    private volatile String clusterId = "";
    /** Kafka's {@code max.request.partition.size.limit} default: the most partitions one page describes. */
    static final int MAX_PARTITIONS_PER_DESCRIBE = 2000;

    public KafkaClusterApis(TopicStore topics, TopicAdmin admin, KafkaGroupConfigs groupConfigs,
                            KafkaClientTelemetry clientMetrics) {
        this.topics = topics;
        this.admin = admin;
        this.groupConfigs = groupConfigs;
        this.clientMetrics = clientMetrics;
        this.kafkaTopics = new KafkaTopics(topics);
    }

    void serveAs(java.util.function.Supplier<KafkaCluster> cluster, String clusterId) {
        this.cluster = cluster;
        this.clusterId = clusterId;
    }

    /**
     * @param visible the topics a listing of all topics shows (the caller may describe them)
     * @param allowed whether a topic named in the request may be described (TOPIC_AUTHORIZATION_FAILED if not)
     */
    MetadataResponse metadata(MetadataRequest request, short version, String clientId,
                              java.util.function.Predicate<String> visible,
                              java.util.function.Predicate<String> allowed) {
        KafkaCluster c = cluster.get();
        String rack = KafkaCluster.rackOf(clientId);
        MetadataResponseData out = new MetadataResponseData().setClusterId(clusterId)
                .setControllerId(c.controller().nodeId());
        for (Broker b : c.live()) {
            out.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(b.nodeId()).setHost(b.host())
                    .setPort(b.port()).setRack(b.rack()));
        }
        MetadataRequestData data = request.data();
        if (data.topics() == null) {
            for (TopicMetadata t : admin.listPublic()) {
                if (visible.test(t.name())) {
                    out.topics().add(describe(t, version, c, rack));
                }
            }
        } else {
            for (MetadataRequestData.MetadataRequestTopic asked : data.topics()) {
                try {
                    // Checked by name before the topic is looked up: an unknown topic must not tell a caller
                    // without the scope whether it exists.
                    boolean byName = asked.name() != null && !asked.name().isEmpty();
                    if (byName && !allowed.test(asked.name())) {
                        throw new org.apache.kafka.common.errors.TopicAuthorizationException(
                                "not allowed to describe topic:" + asked.name());
                    }
                    TopicMetadata topic = kafkaTopics.resolve(asked.name(), asked.topicId());
                    if (!byName && !allowed.test(topic.name())) {
                        throw new org.apache.kafka.common.errors.TopicAuthorizationException(
                                "not allowed to describe topic:" + topic.name());
                    }
                    out.topics().add(describe(topic, version, c, rack));
                } catch (RuntimeException e) {
                    // Before version 12 an answer's topic name is not nullable; Kafka answers "" as well.
                    String name = asked.name() == null && version < 12 ? "" : asked.name();
                    MetadataResponseData.MetadataResponseTopic missing = new MetadataResponseData.MetadataResponseTopic()
                            .setName(name).setErrorCode(KafkaErrors.of(e).code());
                    if (version >= 10 && asked.topicId() != null) {
                        missing.setTopicId(asked.topicId());
                    }
                    out.topics().add(missing);
                }
            }
        }
        return new MetadataResponse(out, version);
    }

    private MetadataResponseData.MetadataResponseTopic describe(TopicMetadata t, short version, KafkaCluster c,
                                                                String rack) {
        MetadataResponseData.MetadataResponseTopic topic = new MetadataResponseData.MetadataResponseTopic()
                .setName(t.name()).setIsInternal(false);
        if (version >= 10) {
            topic.setTopicId(KafkaTopics.idOf(t));
        }
        for (int p = 0; p < t.partitions(); p++) {
            Broker leader = c.leaderOf(t.name(), p, rack);
            List<Integer> replicas = c.replicas(leader);
            topic.partitions().add(new MetadataResponseData.MetadataResponsePartition().setPartitionIndex(p)
                    .setLeaderId(leader.nodeId()).setLeaderEpoch(-1).setReplicaNodes(replicas).setIsrNodes(replicas)
                    .setOfflineReplicas(List.of()));
        }
        return topic;
    }

    /**
     * DescribeTopicPartitions (KIP-966), what Admin's {@code describeTopics} asks before Metadata: the topics named
     * (every topic the caller may see when none is), in name order, from the request's cursor, with at most its
     * partition limit (capped at {@value #MAX_PARTITIONS_PER_DESCRIBE}) of partitions, and the cursor of the next page
     * when more remain. Partitions as Metadata describes them; no eligible leader replicas (empty: one copy of each
     * partition).
     * A cursor naming a topic the request does not name is INVALID_REQUEST, as Kafka answers.
     *
     * @param visible the topics a listing of all topics shows (the caller may describe them)
     * @param allowed whether a topic named in the request may be described (TOPIC_AUTHORIZATION_FAILED if not)
     */
    DescribeTopicPartitionsResponse describeTopicPartitions(DescribeTopicPartitionsRequest request, String clientId,
                                                            java.util.function.Predicate<String> visible,
                                                            java.util.function.Predicate<String> allowed) {
        DescribeTopicPartitionsRequestData data = request.data();
        DescribeTopicPartitionsRequestData.Cursor cursor = data.cursor();
        java.util.TreeSet<String> names = new java.util.TreeSet<>();
        boolean listing = data.topics().isEmpty();
        if (listing) {
            admin.listPublic().stream().map(TopicMetadata::name).filter(visible).forEach(names::add);
        } else {
            data.topics().forEach(t -> names.add(t.name()));
            if (cursor != null && !names.contains(cursor.topicName())) {
                throw Errors.INVALID_REQUEST.exception("the cursor's topic " + cursor.topicName()
                        + " is not among the topics requested");
            }
        }
        KafkaCluster c = cluster.get();
        String rack = KafkaCluster.rackOf(clientId);
        DescribeTopicPartitionsResponseData out = new DescribeTopicPartitionsResponseData();
        int left = Math.max(1, Math.min(data.responsePartitionLimit(), MAX_PARTITIONS_PER_DESCRIBE));
        for (String name : cursor == null ? names : names.tailSet(cursor.topicName(), true)) {
            if (left == 0) {
                out.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name)
                        .setPartitionIndex(0));
                break;
            }
            DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic topic =
                    new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setName(name);
            out.topics().add(topic);
            try {
                // By name before the lookup: an unknown topic must not tell a caller without the scope it exists.
                if (!listing && !allowed.test(name)) {
                    throw new org.apache.kafka.common.errors.TopicAuthorizationException(
                            "not allowed to describe topic:" + name);
                }
                TopicMetadata t = kafkaTopics.resolve(name, null);
                topic.setTopicId(KafkaTopics.idOf(t));
                int from = cursor != null && name.equals(cursor.topicName())
                        ? Math.min(Math.max(0, cursor.partitionIndex()), t.partitions()) : 0;
                int to = Math.min(t.partitions(), from + left);
                for (int p = from; p < to; p++) {
                    Broker leader = c.leaderOf(name, p, rack);
                    List<Integer> replicas = c.replicas(leader);
                    topic.partitions().add(new DescribeTopicPartitionsResponseData
                            .DescribeTopicPartitionsResponsePartition().setPartitionIndex(p)
                            .setLeaderId(leader.nodeId()).setLeaderEpoch(-1).setReplicaNodes(replicas)
                            .setIsrNodes(replicas).setEligibleLeaderReplicas(List.of()).setLastKnownElr(List.of())
                            .setOfflineReplicas(List.of()));
                }
                left -= to - from;
                if (to < t.partitions()) {
                    out.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name)
                            .setPartitionIndex(to));
                    break;
                }
            } catch (RuntimeException e) {
                topic.setErrorCode(KafkaErrors.of(e).code());
                left--; // an error counts as one partition, so a page of unknown names still ends
            }
        }
        return new DescribeTopicPartitionsResponse(out);
    }

    CreateTopicsResponse createTopics(CreateTopicsRequest request, short version, KafkaQuotas.Mutations quota) {
        CreateTopicsRequestData data = request.data();
        CreateTopicsResponseData out = new CreateTopicsResponseData();
        for (CreateTopicsRequestData.CreatableTopic asked : data.topics()) {
            CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult()
                    .setName(asked.name());
            int partitions = asked.numPartitions() == -1 ? 1 : asked.numPartitions();
            try {
                if (asked.replicationFactor() != 1 && asked.replicationFactor() != -1) {
                    result.setErrorCode(Errors.INVALID_REPLICATION_FACTOR.code()).setErrorMessage(
                            "replication factor must be 1 or -1: durability is the volume's and the object store's");
                } else if (!asked.assignments().isEmpty()) {
                    result.setErrorCode(Errors.INVALID_REQUEST.code())
                            .setErrorMessage("manual replica assignment is not supported");
                } else if (partitions < 1 || partitions > TopicMetadata.MAX_PARTITIONS) {
                    result.setErrorCode(Errors.INVALID_PARTITIONS.code())
                            .setErrorMessage("partitions must be in 1.." + TopicMetadata.MAX_PARTITIONS + ": " + partitions);
                } else {
                    Map<String, String> config = new LinkedHashMap<>();
                    asked.configs().forEach(c -> config.put(c.name(), c.value()));
                    long waitMs = data.validateOnly() ? 0 : quota.refusedForMs();
                    if (waitMs > 0) {
                        result.setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code())
                                .setErrorMessage(quota.refusal(waitMs));
                        out.topics().add(result);
                        continue;
                    }
                    if (data.validateOnly()) {
                        TopicAdmin.requirePublic(asked.name());
                        TopicConfig.DEFAULTS.with(config);
                        if (topics.find(asked.name()).isPresent()) {
                            throw new TierlogException(ErrorType.TOPIC_EXISTS, "topic '" + asked.name() + "' exists");
                        }
                    } else {
                        TopicMetadata created = admin.create(asked.name(), partitions, config);
                        quota.mutated(partitions);
                        if (version >= 7) {
                            result.setTopicId(KafkaTopics.idOf(created));
                        }
                    }
                    result.setNumPartitions(partitions).setReplicationFactor((short) 1);
                }
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.topics().add(result);
        }
        return new CreateTopicsResponse(out.setThrottleTimeMs(quota.throttleMs()));
    }

    DeleteTopicsResponse deleteTopics(DeleteTopicsRequest request, short version, KafkaQuotas.Mutations quota) {
        DeleteTopicsRequestData data = request.data();
        List<DeleteTopicsRequestData.DeleteTopicState> asked = new ArrayList<>(data.topics());
        data.topicNames().forEach(n -> asked.add(new DeleteTopicsRequestData.DeleteTopicState().setName(n)));
        DeleteTopicsResponseData out = new DeleteTopicsResponseData();
        for (DeleteTopicsRequestData.DeleteTopicState one : asked) {
            DeleteTopicsResponseData.DeletableTopicResult result = new DeleteTopicsResponseData.DeletableTopicResult()
                    .setName(one.name());
            if (version >= 6 && one.topicId() != null && !Uuid.ZERO_UUID.equals(one.topicId())) {
                result.setTopicId(one.topicId());
            }
            try {
                TopicMetadata topic = kafkaTopics.resolve(one.name(), one.topicId());
                result.setName(topic.name());
                if (version >= 6) {
                    result.setTopicId(KafkaTopics.idOf(topic));
                }
                long waitMs = quota.refusedForMs();
                if (waitMs > 0) {
                    result.setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code()).setErrorMessage(quota.refusal(waitMs));
                    out.responses().add(result);
                    continue;
                }
                admin.delete(topic.name());
                quota.mutated(topic.partitions());
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code());
                if (version >= 5) {
                    result.setErrorMessage(KafkaErrors.message(e));
                }
            }
            out.responses().add(result);
        }
        return new DeleteTopicsResponse(out.setThrottleTimeMs(quota.throttleMs()));
    }

    /**
     * Grows topics' partition counts, as HTTP has no door for yet: the count must be above the current one (else
     * INVALID_PARTITIONS); manual replica assignments are refused (INVALID_REQUEST). Consumer groups subscribed to
     * the topic pick the new partitions up at their members' next heartbeats.
     */
    CreatePartitionsResponse createPartitions(CreatePartitionsRequest request, KafkaQuotas.Mutations quota) {
        CreatePartitionsRequestData data = request.data();
        CreatePartitionsResponseData out = new CreatePartitionsResponseData();
        for (CreatePartitionsRequestData.CreatePartitionsTopic asked : data.topics()) {
            CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(asked.name());
            try {
                TopicMetadata topic = kafkaTopics.byName(asked.name());
                if (asked.assignments() != null && !asked.assignments().isEmpty()) {
                    result.setErrorCode(Errors.INVALID_REQUEST.code())
                            .setErrorMessage("manual replica assignment is not supported");
                } else if (asked.count() <= topic.partitions() || asked.count() > TopicMetadata.MAX_PARTITIONS) {
                    result.setErrorCode(Errors.INVALID_PARTITIONS.code()).setErrorMessage("topic " + asked.name()
                            + " has " + topic.partitions() + " partitions; the new count must be above that and at most "
                            + TopicMetadata.MAX_PARTITIONS + ": " + asked.count());
                } else if (!data.validateOnly()) {
                    long waitMs = quota.refusedForMs();
                    if (waitMs > 0) {
                        result.setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code())
                                .setErrorMessage(quota.refusal(waitMs));
                    } else {
                        admin.increasePartitions(topic.name(), asked.count());
                        quota.mutated(asked.count() - topic.partitions());
                    }
                }
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.results().add(result);
        }
        return new CreatePartitionsResponse(out.setThrottleTimeMs(quota.throttleMs()));
    }

    /**
     * Topic config changes, the same as HTTP's {@code PATCH /v1/topics/{topic}/config}: SET a key, or DELETE it (back
     * to its default); APPEND and SUBTRACT (list configs, which Tierlog has none of) are INVALID_REQUEST, and so are
     * broker configs. Group configs go to {@link KafkaGroupConfigs}, client-metrics subscriptions to
     * {@link KafkaClientTelemetry}, this instance's log levels to {@link KafkaBrokerLoggers}. A resource's changes
     * apply together or not at all (INVALID_CONFIG naming the key).
     */
    IncrementalAlterConfigsResponse incrementalAlterConfigs(IncrementalAlterConfigsRequest request) {
        IncrementalAlterConfigsRequestData data = request.data();
        IncrementalAlterConfigsResponseData out = new IncrementalAlterConfigsResponseData();
        Map<String, Object> defaults = TopicConfig.DEFAULTS.toMap();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource asked : data.resources()) {
            IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse result =
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(asked.resourceType()).setResourceName(asked.resourceName());
            try {
                if (asked.resourceType() == ConfigResource.Type.GROUP.id()) {
                    groupConfigs.alter(asked, data.validateOnly());
                    out.responses().add(result);
                    continue;
                }
                if (asked.resourceType() == ConfigResource.Type.CLIENT_METRICS.id()) {
                    clientMetrics.alter(asked, data.validateOnly());
                    out.responses().add(result);
                    continue;
                }
                if (asked.resourceType() == ConfigResource.Type.BROKER_LOGGER.id()) {
                    brokerLoggers.alter(asked, cluster.get().self().nodeId(), data.validateOnly());
                    out.responses().add(result);
                    continue;
                }
                if (asked.resourceType() != ConfigResource.Type.TOPIC.id()) {
                    throw Errors.INVALID_REQUEST.exception("only topic, group, client-metrics and broker-logger "
                            + "configs can be changed");
                }
                TopicMetadata topic = kafkaTopics.byName(asked.resourceName());
                Map<String, Object> changes = new LinkedHashMap<>();
                for (IncrementalAlterConfigsRequestData.AlterableConfig c : asked.configs()) {
                    AlterConfigOp.OpType op = AlterConfigOp.OpType.forId(c.configOperation());
                    if (op == AlterConfigOp.OpType.SET) {
                        changes.put(c.name(), c.value() == null ? "" : c.value());
                    } else if (op == AlterConfigOp.OpType.DELETE) {
                        Object original = defaults.get(c.name());
                        if (original == null) {
                            throw new TierlogException(ErrorType.INVALID_CONFIG, "unknown config key '" + c.name() + "'",
                                    Map.of("key", c.name()));
                        }
                        changes.put(c.name(), original);
                    } else {
                        throw Errors.INVALID_REQUEST.exception("operation " + op + " on " + c.name()
                                + ": Tierlog has no list configs; use SET or DELETE");
                    }
                }
                topic.config().with(changes);
                if (!data.validateOnly() && !changes.isEmpty()) {
                    admin.updateConfig(topic.name(), changes);
                }
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.responses().add(result);
        }
        return new IncrementalAlterConfigsResponse(out);
    }

    /**
     * AlterConfigs, the API IncrementalAlterConfigs replaced (still sent by librdkafka's {@code AlterConfigs}, Sarama
     * and older tools): a topic's configs become exactly those named, every other one back to its default, as
     * Kafka's broker applies it. All of a topic's values are checked before any is kept; {@code validateOnly}
     * keeps none. Broker configs cannot be changed (INVALID_REQUEST), as with IncrementalAlterConfigs.
     */
    AlterConfigsResponse alterConfigs(AlterConfigsRequest request) {
        AlterConfigsRequestData data = request.data();
        AlterConfigsResponseData out = new AlterConfigsResponseData();
        Map<String, Object> defaults = TopicConfig.DEFAULTS.toMap();
        for (AlterConfigsRequestData.AlterConfigsResource asked : data.resources()) {
            AlterConfigsResponseData.AlterConfigsResourceResponse result =
                    new AlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(asked.resourceType()).setResourceName(asked.resourceName());
            try {
                if (asked.resourceType() == ConfigResource.Type.CLIENT_METRICS.id()) {
                    clientMetrics.replace(asked, data.validateOnly());
                    out.responses().add(result);
                    continue;
                }
                if (asked.resourceType() != ConfigResource.Type.TOPIC.id()) {
                    throw Errors.INVALID_REQUEST.exception("only topic and client-metrics configs can be changed");
                }
                TopicMetadata topic = kafkaTopics.byName(asked.resourceName());
                Map<String, Object> changes = new LinkedHashMap<>(defaults);
                for (AlterConfigsRequestData.AlterableConfig c : asked.configs()) {
                    if (!defaults.containsKey(c.name())) {
                        throw new TierlogException(ErrorType.INVALID_CONFIG, "unknown config key '" + c.name() + "'",
                                Map.of("key", c.name()));
                    }
                    changes.put(c.name(), c.value() == null ? "" : c.value());
                }
                topic.config().with(changes);
                if (!data.validateOnly()) {
                    admin.updateConfig(topic.name(), changes);
                }
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.responses().add(result);
        }
        return new AlterConfigsResponse(out);
    }

    /**
     * Every topic config with its value and whether it is the default, as Kafka lists them, every group config
     * ({@link KafkaGroupConfigs}) and client-metrics subscription config ({@link KafkaClientTelemetry}), and this
     * instance's log levels ({@link KafkaBrokerLoggers}); a broker (this instance) has no configs to list. Other
     * resource types are INVALID_REQUEST.
     */
    DescribeConfigsResponse describeConfigs(DescribeConfigsRequest request) {
        DescribeConfigsResponseData out = new DescribeConfigsResponseData();
        for (DescribeConfigsRequestData.DescribeConfigsResource asked : request.data().resources()) {
            DescribeConfigsResponseData.DescribeConfigsResult result = new DescribeConfigsResponseData.DescribeConfigsResult()
                    .setResourceType(asked.resourceType()).setResourceName(asked.resourceName());
            try {
                if (asked.resourceType() == ConfigResource.Type.TOPIC.id()) {
                    Map<String, Object> values = kafkaTopics.byName(asked.resourceName()).config().toMap();
                    Map<String, Object> defaults = TopicConfig.DEFAULTS.toMap();
                    values.forEach((key, value) -> {
                        if (asked.configurationKeys() == null || asked.configurationKeys().contains(key)) {
                            boolean isDefault = value.equals(defaults.get(key));
                            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                                    .setName(key).setValue(String.valueOf(value)).setReadOnly(false)
                                    .setConfigSource(isDefault ? DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id()
                                            : DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG.id())
                                    .setConfigType(configType(key))
                                    .setIsSensitive(false));
                        }
                    });
                } else if (asked.resourceType() == ConfigResource.Type.GROUP.id()) {
                    groupConfigs.describe(asked, result, request.data().includeDocumentation());
                } else if (asked.resourceType() == ConfigResource.Type.CLIENT_METRICS.id()) {
                    clientMetrics.describe(asked, result, request.data().includeDocumentation());
                } else if (asked.resourceType() == ConfigResource.Type.BROKER_LOGGER.id()) {
                    brokerLoggers.describe(asked, cluster.get().self().nodeId(), result);
                } else if (asked.resourceType() != ConfigResource.Type.BROKER.id()) {
                    result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(
                            "only topic, group, client-metrics, broker and broker-logger configs are described");
                }
            } catch (RuntimeException e) {
                result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
            out.results().add(result);
        }
        return new DescribeConfigsResponse(out);
    }

    /** Kafka's type of each topic config key. */
    private static byte configType(String key) {
        return switch (key) {
            case TopicConfig.MAX_MESSAGE_BYTES -> DescribeConfigsResponse.ConfigType.INT.id();
            case TopicConfig.CLEANUP_POLICY -> DescribeConfigsResponse.ConfigType.LIST.id();
            case TopicConfig.MIN_CLEANABLE_DIRTY_RATIO -> DescribeConfigsResponse.ConfigType.DOUBLE.id();
            case TopicConfig.MESSAGE_TIMESTAMP_TYPE -> DescribeConfigsResponse.ConfigType.STRING.id();
            default -> DescribeConfigsResponse.ConfigType.LONG.id();
        };
    }
}
