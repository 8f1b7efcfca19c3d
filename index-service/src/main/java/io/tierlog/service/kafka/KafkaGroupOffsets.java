package io.tierlog.service.kafka;

import io.tierlog.service.groups.CommittedOffset;
import io.tierlog.service.groups.GroupOffsets;
import jakarta.inject.Singleton;
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

/**
 * OffsetCommit and OffsetFetch on the same committed offsets as HTTP's {@code /v1/groups/{group}/offsets}
 * ({@link GroupOffsets}): what a Kafka consumer commits, HTTP reads, and the reverse. For consumers that
 * {@code assign()} partitions themselves: group membership (Join/Sync/Heartbeat, ConsumerGroupHeartbeat) is not
 * served, so the generation and member id of a commit are not checked. Commit metadata and leader epochs are not
 * stored (fetched back as empty and -1). A commit is all-or-nothing, as over HTTP: one bad partition fails every
 * partition of the request with that partition's error.
 */
@Singleton
public class KafkaGroupOffsets {
    private final GroupOffsets offsets;

    public KafkaGroupOffsets(GroupOffsets offsets) {
        this.offsets = offsets;
    }

    OffsetCommitResponse commit(OffsetCommitRequest request) {
        OffsetCommitRequestData data = request.data();
        List<CommittedOffset> entries = new ArrayList<>();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                entries.add(new CommittedOffset(t.name(), p.partitionIndex(), p.committedOffset()));
            }
        }
        Errors error = Errors.NONE;
        try {
            offsets.commit(data.groupId(), entries);
        } catch (RuntimeException e) {
            error = KafkaErrors.of(e);
        }
        OffsetCommitResponseData out = new OffsetCommitResponseData();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
            OffsetCommitResponseData.OffsetCommitResponseTopic topic =
                    new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(t.name());
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                topic.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
            }
            out.topics().add(topic);
        }
        return new OffsetCommitResponse(out);
    }

    OffsetFetchResponse fetch(OffsetFetchRequest request, short version) {
        List<OffsetFetchResponseData.OffsetFetchResponseGroup> groups = new ArrayList<>();
        for (OffsetFetchRequestData.OffsetFetchRequestGroup g : request.groups()) {
            groups.add(fetchGroup(g));
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
                            .setCommittedLeaderEpoch(-1).setMetadata("").setErrorCode(p.errorCode()));
                }
                out.topics().add(flat);
            }
        }
        return new OffsetFetchResponse(out, version);
    }

    private OffsetFetchResponseData.OffsetFetchResponseGroup fetchGroup(OffsetFetchRequestData.OffsetFetchRequestGroup g) {
        OffsetFetchResponseData.OffsetFetchResponseGroup out =
                new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId());
        Map<String, Map<Integer, Long>> committed = new LinkedHashMap<>();
        try {
            for (CommittedOffset o : offsets.offsets(g.groupId())) {
                committed.computeIfAbsent(o.topic(), k -> new LinkedHashMap<>()).put(o.partition(), o.offset());
            }
        } catch (RuntimeException e) {
            return out.setErrorCode(KafkaErrors.of(e).code());
        }
        if (g.topics() == null) {
            committed.forEach((topic, partitions) -> {
                OffsetFetchResponseData.OffsetFetchResponseTopics t =
                        new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic);
                partitions.forEach((p, offset) -> t.partitions().add(partition(p, offset)));
                out.topics().add(t);
            });
            return out;
        }
        for (OffsetFetchRequestData.OffsetFetchRequestTopics asked : g.topics()) {
            OffsetFetchResponseData.OffsetFetchResponseTopics t =
                    new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(asked.name());
            Map<Integer, Long> known = committed.getOrDefault(asked.name(), Map.of());
            for (int p : asked.partitionIndexes()) {
                t.partitions().add(partition(p, known.getOrDefault(p, -1L)));
            }
            out.topics().add(t);
        }
        return out;
    }

    private static OffsetFetchResponseData.OffsetFetchResponsePartitions partition(int p, long offset) {
        return new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(p)
                .setCommittedOffset(offset).setCommittedLeaderEpoch(-1).setMetadata("");
    }
}
