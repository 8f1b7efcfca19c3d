package io.tierlog.service.kafka;

import io.tierlog.groups.GroupCoordinator;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.groups.CommittedOffset;
import io.tierlog.service.groups.GroupOffsets;
import io.tierlog.log.topic.TopicStore;
import jakarta.inject.Singleton;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * OffsetCommit and OffsetFetch on the same committed offsets as HTTP's {@code /v1/groups/{group}/offsets}
 * ({@link GroupOffsets}): what a Kafka consumer commits, HTTP reads, and the reverse. Commits are checked by the
 * group's {@link GroupCoordinator}, the same one HTTP members and {@link KafkaGroups} use: a commit without a
 * member (an {@code assign()} consumer, Admin's offset changes) is taken only while the group has no members; a
 * member's commit (its id and its member epoch or classic generation) only for partitions it still holds
 * ({@link GroupCoordinator#commitHeld}), else ILLEGAL_GENERATION (UNKNOWN_MEMBER_ID for a member the group does not
 * have, FENCED_INSTANCE_ID for a static member another process took over). Commit metadata is kept with the offset
 * (at most {@link GroupOffsets#MAX_METADATA_CHARS}, else OFFSET_METADATA_TOO_LARGE, as Kafka's limit); leader epochs
 * are not (partitions have none: fetched back as -1). A commit is all-or-nothing, as over HTTP: one bad partition
 * fails every partition of the request with that partition's error.
 */
@Singleton
public class KafkaGroupOffsets {
    /** OffsetCommit and OffsetFetch name topics by id from this version on. */
    static final short TOPIC_IDS_VERSION = 10;

    private final GroupOffsets offsets;
    private final GroupCoordinator coordinator;
    private final KafkaTopics topics;

    public KafkaGroupOffsets(GroupOffsets offsets, GroupCoordinator coordinator, TopicStore topicStore) {
        this.offsets = offsets;
        this.coordinator = coordinator;
        this.topics = new KafkaTopics(topicStore);
    }

    /**
     * @param version from 10 on topics are named by id: an id that is not a live topic's (one deleted, or deleted and
     *                created again, since the client learned it) is UNKNOWN_TOPIC_ID, so a consumer of the old topic
     *                cannot move the new one's positions
     */
    OffsetCommitResponse commit(OffsetCommitRequest request, short version) {
        OffsetCommitRequestData data = request.data();
        List<CommittedOffset> entries = new ArrayList<>();
        boolean unknownId = false;
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
            String name = t.name();
            if (version >= TOPIC_IDS_VERSION) {
                Optional<String> named = nameOf(t.topicId());
                unknownId |= named.isEmpty();
                name = named.orElse("");
            }
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                entries.add(new CommittedOffset(name, p.partitionIndex(), p.committedOffset(),
                        p.committedMetadata()));
            }
        }
        Errors error;
        if (unknownId) {
            error = Errors.UNKNOWN_TOPIC_ID; // all-or-nothing, so none is committed
        } else if (entries.stream().anyMatch(o -> o.partition() < 0)) {
            error = Errors.UNKNOWN_TOPIC_OR_PARTITION; // no such partition; all-or-nothing, so none is committed
        } else if (entries.stream().anyMatch(o -> metadataTooLarge(o.metadata()))) {
            error = Errors.OFFSET_METADATA_TOO_LARGE;
        } else {
            List<TopicPartition> partitions = entries.stream()
                    .map(o -> new TopicPartition(o.topic(), o.partition())).toList();
            error = commitAsMember(coordinator, data.groupId(), data.memberId(), data.groupInstanceId(),
                    data.generationIdOrMemberEpoch(), partitions, () -> offsets.commit(data.groupId(), entries));
        }
        OffsetCommitResponseData out = new OffsetCommitResponseData();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
            OffsetCommitResponseData.OffsetCommitResponseTopic topic =
                    new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(t.name()).setTopicId(t.topicId());
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                topic.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
            }
            out.topics().add(topic);
        }
        return new OffsetCommitResponse(out);
    }

    /** Whether a commit's metadata is over Kafka's limit ({@code offset.metadata.max.bytes}, counted in chars). */
    static boolean metadataTooLarge(String metadata) {
        return metadata != null && metadata.length() > GroupOffsets.MAX_METADATA_CHARS;
    }

    /**
     * Runs {@code commit} under the group's lock if the group takes a commit of {@code partitions} from this member
     * (a member id and a generation or epoch >= 0: it holds them, at its current or an older epoch), or from outside
     * the group (no member: only while the group has none); else answers the error Kafka does. OffsetCommit's check,
     * and TxnOffsetCommit's (KIP-447).
     */
    static Errors commitAsMember(GroupCoordinator coordinator, String group, String memberId, String groupInstanceId,
                                 int generationOrEpoch, java.util.Collection<TopicPartition> partitions,
                                 Runnable commit) {
        boolean member = memberId != null && !memberId.isEmpty() && generationOrEpoch >= 0;
        try {
            if (member) {
                String instanceId = groupInstanceId == null || groupInstanceId.isEmpty() ? null : groupInstanceId;
                coordinator.commitHeld(group, memberId, instanceId, generationOrEpoch, partitions, commit);
            } else {
                coordinator.commitAs(group, null, null, partitions, commit);
            }
            return Errors.NONE;
        } catch (RuntimeException e) {
            // Not a member of a group that has members: Kafka's answer to a simple commit into an active group.
            return KafkaGroups.error(e, member ? Errors.ILLEGAL_GENERATION : Errors.UNKNOWN_MEMBER_ID);
        }
    }

    /** The live topic with this id, if any (OffsetCommit and OffsetFetch 10+ name topics by id). */
    private Optional<String> nameOf(Uuid id) {
        try {
            return Optional.of(topics.resolve(null, id).name());
        } catch (RuntimeException unknownOrGone) {
            return Optional.empty();
        }
    }

    OffsetFetchResponse fetch(OffsetFetchRequest request, short version) {
        List<OffsetFetchResponseData.OffsetFetchResponseGroup> groups = new ArrayList<>();
        for (OffsetFetchRequestData.OffsetFetchRequestGroup g : request.groups()) {
            groups.add(fetchGroup(g, version >= TOPIC_IDS_VERSION));
        }
        OffsetFetchResponseData out = new OffsetFetchResponseData();
        if (version >= OffsetFetchRequest.BATCH_MIN_VERSION) {
            out.setGroups(groups);
        } else {
            // Versions before 8 carry one group, flat.
            OffsetFetchResponseData.OffsetFetchResponseGroup g = groups.get(0);
            out.setErrorCode(g.errorCode());
            for (OffsetFetchResponseData.OffsetFetchResponseTopics t : g.topics()) {
                OffsetFetchResponseData.OffsetFetchResponseTopic flat =
                        new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(t.name());
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                    flat.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition()
                            .setPartitionIndex(p.partitionIndex()).setCommittedOffset(p.committedOffset())
                            .setCommittedLeaderEpoch(-1).setMetadata(p.metadata()).setErrorCode(p.errorCode()));
                }
                out.topics().add(flat);
            }
        }
        return new OffsetFetchResponse(out, version);
    }

    /** @param byId whether topics are named by id (version 10+): then each answered topic carries its id */
    private OffsetFetchResponseData.OffsetFetchResponseGroup fetchGroup(OffsetFetchRequestData.OffsetFetchRequestGroup g,
                                                                        boolean byId) {
        OffsetFetchResponseData.OffsetFetchResponseGroup out =
                new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId());
        Map<String, Map<Integer, CommittedOffset>> committed = new LinkedHashMap<>();
        try {
            for (CommittedOffset o : offsets.offsets(g.groupId())) {
                committed.computeIfAbsent(o.topic(), k -> new LinkedHashMap<>()).put(o.partition(), o);
            }
        } catch (RuntimeException e) {
            return out.setErrorCode(KafkaErrors.of(e).code());
        }
        if (g.topics() == null) {
            committed.forEach((topic, partitions) -> {
                OffsetFetchResponseData.OffsetFetchResponseTopics t =
                        new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic);
                if (byId) {
                    // A listed commit's topic is live (GroupOffsets leaves out those of gone topics).
                    Optional<Uuid> id = idOf(topic);
                    if (id.isEmpty()) {
                        return;
                    }
                    t.setTopicId(id.get());
                }
                partitions.forEach((p, o) -> t.partitions().add(partition(p, o)));
                out.topics().add(t);
            });
            return out;
        }
        for (OffsetFetchRequestData.OffsetFetchRequestTopics asked : g.topics()) {
            OffsetFetchResponseData.OffsetFetchResponseTopics t =
                    new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(asked.name())
                            .setTopicId(asked.topicId());
            Optional<String> name = byId ? nameOf(asked.topicId()) : Optional.of(asked.name());
            Map<Integer, CommittedOffset> known = committed.getOrDefault(name.orElse(""), Map.of());
            for (int p : asked.partitionIndexes()) {
                t.partitions().add(name.isEmpty() ? partition(p, null).setErrorCode(Errors.UNKNOWN_TOPIC_ID.code())
                        : partition(p, known.get(p)));
            }
            out.topics().add(t);
        }
        return out;
    }

    private Optional<Uuid> idOf(String topic) {
        try {
            return Optional.of(KafkaTopics.idOf(topics.byName(topic)));
        } catch (RuntimeException gone) {
            return Optional.empty();
        }
    }

    /** @param committed null: the group has no offset for the partition (-1, as Kafka answers) */
    private static OffsetFetchResponseData.OffsetFetchResponsePartitions partition(int p, CommittedOffset committed) {
        return new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(p)
                .setCommittedOffset(committed == null ? -1 : committed.offset()).setCommittedLeaderEpoch(-1)
                .setMetadata(committed == null || committed.metadata() == null ? "" : committed.metadata());
    }
}
