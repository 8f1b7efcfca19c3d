package io.tierlog.service.groups;

import io.tierlog.groups.ClassicGroupCoordinator;
import io.tierlog.groups.GroupCoordinator;
import io.tierlog.groups.GroupStateStore;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.service.config.TierlogConfig;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Clock;

/**
 * Wires the storage layer's {@link GroupCoordinator} into the service: its state lives on the hot volume
 * ({@code <data-dir>/__groups/}), and it sees topics' partition counts through the {@link TopicStore} (internal
 * topics count as absent: they cannot be subscribed to).
 */
@Singleton
public class GroupMembership {

    @Produces
    @Singleton
    GroupCoordinator coordinator(TierlogConfig config, TopicStore topics, Clock clock) {
        return new GroupCoordinator(new GroupStateStore(config.dataDir()),
                topic -> TopicAdmin.isInternal(topic) ? 0 : topics.find(topic).map(TopicMetadata::partitions).orElse(0),
                clock, config.groups().maxClockSkew(), GroupCoordinator.monotonicOf(clock),
                config.kafka().streamsInitialRebalanceDelay());
    }

    /** Kafka's classic rounds for groups whose members assign among themselves, on the same state files. */
    @Produces
    @Singleton
    ClassicGroupCoordinator classicCoordinator(GroupCoordinator coordinator, TierlogConfig config) {
        return new ClassicGroupCoordinator(coordinator, config.kafka().groupInitialRebalanceDelay());
    }
}
