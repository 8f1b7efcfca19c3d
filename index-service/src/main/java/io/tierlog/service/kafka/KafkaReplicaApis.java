package io.tierlog.service.kafka;

import io.tierlog.log.topic.TopicMetadata;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ElectLeadersResponseData.PartitionResult;
import org.apache.kafka.common.message.ElectLeadersResponseData.ReplicaElectionResult;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Kafka's replica administration, answered for a log with one copy of each partition on the shared volume
 * (ElectLeaders, ListPartitionReassignments, AlterPartitionReassignments): every live instance serves every
 * partition and the advertised leader is a function of the live set ({@link KafkaCluster}), so there is never a
 * leader to elect or a replica to move. The answers say so in Kafka's terms, so that {@code kafka-leader-election},
 * {@code kafka-reassign-partitions --list} and the Admin calls of cluster tools succeed where nothing needs doing and
 * name why where something was asked that cannot be. Blocking (a topic lookup): runs on a pool thread. Stateless.
 */
final class KafkaReplicaApis {
    static final String ONE_COPY = "Tierlog keeps one copy of each partition on the shared volume: every live "
            + "instance serves it, and the advertised leader follows the live instances";

    private final KafkaTopics topics;

    KafkaReplicaApis(KafkaTopics topics) {
        this.topics = topics;
    }

    /**
     * Each named partition: ELECTION_NOT_NEEDED (its advertised leader is its first replica, Kafka's preferred one,
     * and no replica is out of sync), UNKNOWN_TOPIC_OR_PARTITION when it does not exist. All partitions (none named):
     * no results, as Kafka leaves out those that needed no election.
     */
    ElectLeadersResponse electLeaders(ElectLeadersRequest request) {
        ElectLeadersRequestData data = request.data();
        List<ReplicaElectionResult> results = new ArrayList<>();
        if (data.topicPartitions() != null) {
            for (ElectLeadersRequestData.TopicPartitions asked : data.topicPartitions()) {
                ReplicaElectionResult topic = new ReplicaElectionResult().setTopic(asked.topic());
                int partitions = partitionsOf(asked.topic());
                for (int p : asked.partitions()) {
                    boolean exists = p >= 0 && p < partitions;
                    topic.partitionResult().add(new PartitionResult().setPartitionId(p)
                            .setErrorCode((exists ? Errors.ELECTION_NOT_NEEDED : Errors.UNKNOWN_TOPIC_OR_PARTITION)
                                    .code())
                            .setErrorMessage(exists ? ONE_COPY : "no partition " + p + " of topic " + asked.topic()));
                }
                results.add(topic);
            }
        }
        return new ElectLeadersResponse(new ElectLeadersResponseData().setErrorCode(Errors.NONE.code())
                .setReplicaElectionResults(results));
    }

    /** No reassignment is ever in progress. */
    ListPartitionReassignmentsResponse listReassignments(ListPartitionReassignmentsRequest request) {
        return new ListPartitionReassignmentsResponse(new ListPartitionReassignmentsResponseData()
                .setErrorCode(Errors.NONE.code()));
    }

    /**
     * Each partition: done at once (NONE) when its target is its replica set as it is (every live instance, in any
     * order); NO_REASSIGNMENT_IN_PROGRESS for a cancellation; INVALID_REPLICA_ASSIGNMENT for any other target, with
     * why; UNKNOWN_TOPIC_OR_PARTITION when it does not exist.
     */
    AlterPartitionReassignmentsResponse alterReassignments(AlterPartitionReassignmentsRequest request,
                                                           KafkaCluster cluster) {
        AlterPartitionReassignmentsRequestData data = request.data();
        Set<Integer> live = new HashSet<>();
        cluster.live().forEach(b -> live.add(b.nodeId()));
        List<ReassignableTopicResponse> responses = new ArrayList<>();
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic asked : data.topics()) {
            ReassignableTopicResponse topic = new ReassignableTopicResponse().setName(asked.name());
            int partitions = partitionsOf(asked.name());
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition p : asked.partitions()) {
                ReassignablePartitionResponse answer = new ReassignablePartitionResponse()
                        .setPartitionIndex(p.partitionIndex());
                if (p.partitionIndex() < 0 || p.partitionIndex() >= partitions) {
                    answer.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("no partition " + p.partitionIndex() + " of topic " + asked.name());
                } else if (p.replicas() == null) {
                    answer.setErrorCode(Errors.NO_REASSIGNMENT_IN_PROGRESS.code())
                            .setErrorMessage("no reassignment is ever in progress: " + ONE_COPY);
                } else if (p.replicas().size() != live.size() || !live.equals(new HashSet<>(p.replicas()))) {
                    answer.setErrorCode(Errors.INVALID_REPLICA_ASSIGNMENT.code())
                            .setErrorMessage("replicas must be every live instance " + live + ", not "
                                    + p.replicas() + ": " + ONE_COPY);
                }
                topic.partitions().add(answer);
            }
            responses.add(topic);
        }
        return new AlterPartitionReassignmentsResponse(new AlterPartitionReassignmentsResponseData()
                .setErrorCode(Errors.NONE.code()).setResponses(responses)
                .setAllowReplicationFactorChange(data.allowReplicationFactorChange()));
    }

    /** The topic's partition count; 0 when there is no such public topic. */
    private int partitionsOf(String name) {
        try {
            TopicMetadata t = topics.resolve(name, null);
            return t.partitions();
        } catch (RuntimeException unknown) {
            return 0;
        }
    }
}
