package io.tierlog.service.kafka;

import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ListConfigResourcesRequestData;
import org.apache.kafka.common.message.ListConfigResourcesResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListConfigResourcesResponse;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * ListConfigResources (KIP-1000, KIP-1142): the names of the config resources of each type, for tools that describe
 * every one (`kafka-configs --describe --entity-type groups` without a name). Version 0 lists client-metrics
 * subscriptions only; version 1 lists the types it is asked for, or all it has when it is asked for none: topics
 * (not the service's internal ones, which Metadata hides), brokers and their loggers (the live instances' node ids),
 * client-metrics subscriptions and groups. Any other type asked for makes the whole answer UNSUPPORTED_VERSION, as
 * Kafka answers a type it lacks.
 */
final class KafkaConfigResources {
    private static final List<ConfigResource.Type> TYPES = List.of(ConfigResource.Type.TOPIC,
            ConfigResource.Type.BROKER, ConfigResource.Type.BROKER_LOGGER, ConfigResource.Type.CLIENT_METRICS,
            ConfigResource.Type.GROUP);

    private final TopicStore topics;
    private final Supplier<KafkaCluster> cluster;
    private final Supplier<Collection<String>> subscriptions;
    private final Supplier<Collection<String>> groups;

    /**
     * @param subscriptions the client-metrics subscriptions' names
     * @param groups        every group's name: those ListGroups lists and those with configs set
     */
    KafkaConfigResources(TopicStore topics, Supplier<KafkaCluster> cluster, Supplier<Collection<String>> subscriptions,
                         Supplier<Collection<String>> groups) {
        this.topics = topics;
        this.cluster = cluster;
        this.subscriptions = subscriptions;
        this.groups = groups;
    }

    ListConfigResourcesResponse list(ListConfigResourcesRequestData request, short version) {
        ListConfigResourcesResponseData out = new ListConfigResourcesResponseData();
        Set<ConfigResource.Type> asked = new LinkedHashSet<>();
        if (version == 0) {
            asked.add(ConfigResource.Type.CLIENT_METRICS);
        } else if (request.resourceTypes().isEmpty()) {
            asked.addAll(TYPES);
        } else {
            for (byte id : request.resourceTypes()) {
                ConfigResource.Type type = ConfigResource.Type.forId(id);
                if (!TYPES.contains(type)) {
                    // The answer has no message field: Admin reports UnsupportedVersionException.
                    return new ListConfigResourcesResponse(out.setErrorCode(Errors.UNSUPPORTED_VERSION.code()));
                }
                asked.add(type);
            }
        }
        for (ConfigResource.Type type : asked) {
            for (String name : names(type)) {
                out.configResources().add(new ListConfigResourcesResponseData.ConfigResource().setResourceName(name)
                        .setResourceType(type.id()));
            }
        }
        return new ListConfigResourcesResponse(out);
    }

    private Collection<String> names(ConfigResource.Type type) {
        return switch (type) {
            case TOPIC -> topics.names().stream().filter(t -> !TopicAdmin.isInternal(t)).sorted().toList();
            case BROKER, BROKER_LOGGER -> {
                List<String> ids = new ArrayList<>();
                cluster.get().live().forEach(b -> ids.add(String.valueOf(b.nodeId())));
                yield ids;
            }
            case CLIENT_METRICS -> subscriptions.get();
            case GROUP -> groups.get();
            default -> List.of();
        };
    }
}
