package io.tierlog.service.kafka;

import io.tierlog.log.topic.TopicStore;
import io.tierlog.sharegroups.ShareDescription;
import io.tierlog.sharegroups.ShareGroupMembers;
import io.tierlog.sharegroups.ShareGroups;
import io.tierlog.sharegroups.ShareMembersDescription;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsResponse;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The administration of Kafka share groups that the tools use ({@code kafka-share-groups --describe} and
 * {@code --delete}): DescribeShareGroupOffsets from the share-group engine's own description (each share-partition's
 * start offset and lag, as {@code GET /v1/share-groups/{g}} shows them), and DeleteGroups of a share group, which is
 * HTTP's {@code DELETE /v1/share-groups/{g}} once no share consumer is a member. Blocking: run on a worker thread.
 */
@Singleton
public class KafkaShareGroupAdmin {
    private final ShareGroups shares;
    private final ShareGroupMembers members;
    private final TopicStore topicStore;

    public KafkaShareGroupAdmin(ShareGroups shares, ShareGroupMembers members, TopicStore topicStore) {
        this.shares = shares;
        this.members = members;
        this.topicStore = topicStore;
    }

    /**
     * Each named share-partition's start offset and lag; every share-partition the group has state for when a group
     * names no topics. A partition the group never touched has start offset and lag -1, as Kafka answers an
     * uninitialized one; a topic the caller may not describe is TOPIC_AUTHORIZATION_FAILED.
     */
    DescribeShareGroupOffsetsResponse describeOffsets(DescribeShareGroupOffsetsRequest request,
                                                      Predicate<String> mayDescribeTopic) {
        DescribeShareGroupOffsetsResponseData out = new DescribeShareGroupOffsetsResponseData();
        for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup asked : request.data().groups()) {
            DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup groupOut =
                    new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup()
                            .setGroupId(asked.groupId());
            out.groups().add(groupOut);
            try {
                Map<String, Map<Integer, ShareDescription.Partition>> known = new TreeMap<>();
                shares.describe(asked.groupId()).ifPresent(d -> d.topics().forEach(t -> {
                    Map<Integer, ShareDescription.Partition> byPartition = new TreeMap<>();
                    t.partitions().forEach(p -> byPartition.put(p.partition(), p));
                    known.put(t.topic(), byPartition);
                }));
                if (asked.topics() == null) {
                    known.forEach((topic, partitions) -> {
                        if (mayDescribeTopic.test(topic)) {
                            groupOut.topics().add(topic(topic, List.copyOf(partitions.keySet()), partitions));
                        }
                    });
                    continue;
                }
                for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic t : asked.topics()) {
                    DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic topicOut =
                            topic(t.topicName(), t.partitions(), known.getOrDefault(t.topicName(), Map.of()));
                    if (!mayDescribeTopic.test(t.topicName())) {
                        topicOut.partitions().forEach(p -> p.setStartOffset(-1).setLag(-1)
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    }
                    groupOut.topics().add(topicOut);
                }
            } catch (RuntimeException e) {
                groupOut.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
            }
        }
        return new DescribeShareGroupOffsetsResponse(out);
    }

    private DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic topic(
            String topic, List<Integer> partitions, Map<Integer, ShareDescription.Partition> known) {
        DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic out =
                new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic().setTopicName(topic)
                        .setTopicId(topicStore.find(topic).map(KafkaTopics::idOf).orElse(Uuid.ZERO_UUID));
        for (int partition : partitions) {
            ShareDescription.Partition p = known.get(partition);
            out.partitions().add(new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition()
                    .setPartitionIndex(partition).setLeaderEpoch(-1)
                    .setStartOffset(p == null ? -1 : p.startOffset()).setLag(p == null ? -1 : p.lag()));
        }
        return out;
    }

    /**
     * DeleteGroups of a group that is a share group: NON_EMPTY_GROUP while a share consumer is a member, else the
     * group's state, config and membership are deleted (GROUP_ID_NOT_FOUND when it had none).
     */
    Errors delete(String group) {
        Optional<ShareMembersDescription> d = members.describe(group);
        if (d.isPresent() && !d.get().members().isEmpty()) {
            return Errors.NON_EMPTY_GROUP;
        }
        return shares.delete(group) ? Errors.NONE : Errors.GROUP_ID_NOT_FOUND;
    }
}
