package io.tierlog.service.kafka;

import io.tierlog.log.topic.TopicStore;
import io.tierlog.sharegroups.ShareDescription;
import io.tierlog.sharegroups.ShareGroupMembers;
import io.tierlog.sharegroups.ShareGroups;
import io.tierlog.sharegroups.ShareMembersDescription;
import jakarta.inject.Singleton;
import io.tierlog.log.Names;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The administration of Kafka share groups that the tools use ({@code kafka-share-groups --describe}, {@code --delete},
 * {@code --reset-offsets} and {@code --delete-offsets}): DescribeShareGroupOffsets from the share-group engine's own
 * description (each share-partition's start offset and lag, as {@code GET /v1/share-groups/{g}} shows them),
 * DeleteGroups of a share group, which is HTTP's {@code DELETE /v1/share-groups/{g}} once no share consumer is a
 * member, and AlterShareGroupOffsets and DeleteShareGroupOffsets, which change the engine's share-partition state
 * while no share consumer is a member (ADR 0054). Blocking: run on a worker thread.
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
     * group's state, config and membership are deleted (GROUP_ID_NOT_FOUND when it had none), under the members lock,
     * so no share consumer joins half-way.
     */
    Errors delete(String group) {
        return members.deleteWhileEmpty(group, () -> shares.deleteStateAndConfig(group))
                .map(existed -> existed ? Errors.NONE : Errors.GROUP_ID_NOT_FOUND).orElse(Errors.NON_EMPTY_GROUP);
    }

    /**
     * AlterShareGroupOffsets: each named share-partition starts at the offset asked, its in-flight state forgotten
     * ({@link ShareGroups#resetStart}); the group need not exist. NON_EMPTY_GROUP for the whole request while a share
     * consumer is a member, checked under the members lock the change holds, so none joins half-way. Per partition:
     * UNKNOWN_TOPIC_OR_PARTITION, and INVALID_REQUEST for a negative offset. An offset outside the log is taken as
     * Kafka takes it (ADR 0054).
     */
    AlterShareGroupOffsetsResponse alterOffsets(AlterShareGroupOffsetsRequest request) {
        AlterShareGroupOffsetsRequestData in = request.data();
        try {
            Optional<AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection> done =
                    members.whileEmpty(in.groupId(), () -> {
                        var topics = new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection();
                        for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic t : in.topics()) {
                            topics.add(alterTopic(in.groupId(), t));
                        }
                        return topics;
                    });
            if (done.isEmpty()) {
                return new AlterShareGroupOffsetsResponse(AlterShareGroupOffsetsRequest.getErrorResponseData(
                        Errors.NON_EMPTY_GROUP, "share group " + in.groupId() + " has members: its offsets can only "
                                + "be altered while no share consumer is a member"));
            }
            return new AlterShareGroupOffsetsResponse(new AlterShareGroupOffsetsResponseData().setResponses(done.get()));
        } catch (RuntimeException e) {
            return new AlterShareGroupOffsetsResponse(AlterShareGroupOffsetsRequest.getErrorResponseData(
                    KafkaErrors.of(e), KafkaErrors.message(e)));
        }
    }

    private AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic alterTopic(
            String group, AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic t) {
        Optional<TopicMetadata> meta = existing(t.topicName());
        var out = new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic().setTopicName(t.topicName())
                .setTopicId(meta.map(KafkaTopics::idOf).orElse(Uuid.ZERO_UUID));
        for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition p : t.partitions()) {
            var result = new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition()
                    .setPartitionIndex(p.partitionIndex());
            if (meta.isEmpty() || p.partitionIndex() < 0 || p.partitionIndex() >= meta.get().partitions()) {
                result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                        .setErrorMessage("no partition " + p.partitionIndex() + " of topic " + t.topicName());
            } else if (p.startOffset() < 0) {
                result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("a start offset must not be negative: " + p.startOffset());
            } else {
                try {
                    shares.resetStart(group, new TopicPartition(t.topicName(), p.partitionIndex()), p.startOffset());
                } catch (RuntimeException e) { // the topic deleted meanwhile, or the volume failing
                    result.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
                }
            }
            out.partitions().add(result);
        }
        return out;
    }

    /**
     * DeleteShareGroupOffsets: the group's state of each named topic is deleted ({@link ShareGroups#deleteTopic}), so
     * it starts again where {@code share.auto.offset.reset} says. NON_EMPTY_GROUP for the whole request while a share
     * consumer is a member (checked as for {@link #alterOffsets}); GROUP_ID_NOT_FOUND for a group with neither state,
     * config nor members; UNKNOWN_TOPIC_OR_PARTITION per topic that does not exist.
     */
    DeleteShareGroupOffsetsResponse deleteOffsets(DeleteShareGroupOffsetsRequest request) {
        DeleteShareGroupOffsetsRequestData in = request.data();
        try {
            if (shares.describe(in.groupId()).isEmpty() && members.describe(in.groupId()).isEmpty()) {
                return new DeleteShareGroupOffsetsResponse(DeleteShareGroupOffsetsRequest.getErrorDeleteResponseData(
                        Errors.GROUP_ID_NOT_FOUND, "share group " + in.groupId() + " does not exist"));
            }
            Optional<List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic>> done =
                    members.whileEmpty(in.groupId(), () -> in.topics().stream()
                            .map(t -> deleteTopic(in.groupId(), t.topicName())).toList());
            if (done.isEmpty()) {
                return new DeleteShareGroupOffsetsResponse(DeleteShareGroupOffsetsRequest.getErrorDeleteResponseData(
                        Errors.NON_EMPTY_GROUP, "share group " + in.groupId() + " has members: its offsets can only "
                                + "be deleted while no share consumer is a member"));
            }
            return new DeleteShareGroupOffsetsResponse(new DeleteShareGroupOffsetsResponseData()
                    .setResponses(new ArrayList<>(done.get())));
        } catch (RuntimeException e) {
            return new DeleteShareGroupOffsetsResponse(DeleteShareGroupOffsetsRequest.getErrorDeleteResponseData(
                    KafkaErrors.of(e), KafkaErrors.message(e)));
        }
    }

    private DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic deleteTopic(String group,
                                                                                             String topic) {
        Optional<TopicMetadata> meta = existing(topic);
        var out = new DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic().setTopicName(topic)
                .setTopicId(meta.map(KafkaTopics::idOf).orElse(Uuid.ZERO_UUID));
        if (meta.isEmpty()) {
            return out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage("topic " + topic + " does not exist");
        }
        try {
            shares.deleteTopic(group, topic);
        } catch (RuntimeException e) {
            out.setErrorCode(KafkaErrors.of(e).code()).setErrorMessage(KafkaErrors.message(e));
        }
        return out;
    }

    /** The topic, or empty when none has that name (a name no topic can have included, as Kafka treats one). */
    private Optional<TopicMetadata> existing(String topic) {
        return topic != null && Names.isValid(topic) ? topicStore.find(topic) : Optional.empty();
    }
}
