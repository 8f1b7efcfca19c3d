package io.tierlog.service.sharegroups;

import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.sharegroups.ShareGroupMembers;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.time.Clock;
import java.util.Optional;

/**
 * Builds {@link ShareGroupMembers}, the members of share groups that Kafka's share consumers join, on the hot volume
 * beside the share groups' state ({@code <data-dir>/__share_groups/<group>/members.json}), with the Kafka listener's
 * share session timeout and heartbeat interval and the groups' clock-skew allowance. Internal topics count as absent:
 * they cannot be subscribed to.
 */
@Singleton
public class ShareGroupMembership {

    @Produces
    @Singleton
    ShareGroupMembers shareGroupMembers(TierlogConfig config, TopicStore topics, Clock clock) {
        return new ShareGroupMembers(config.dataDir(),
                topic -> TopicAdmin.isInternal(topic) ? Optional.empty() : topics.find(topic), clock,
                config.kafka().shareSessionTimeout(), config.kafka().shareHeartbeatInterval(),
                config.groups().maxClockSkew());
    }
}
