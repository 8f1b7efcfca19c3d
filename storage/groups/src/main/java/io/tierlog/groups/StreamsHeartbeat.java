package io.tierlog.groups;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One heartbeat of a streams group's member, protocol-neutral (Kafka's StreamsGroupHeartbeat).
 *
 * @param memberId            the member's own id (Kafka Streams chooses it)
 * @param memberEpoch         0 to join, the member's epoch, -1 to leave, -2 for a static member leaving for a while
 * @param topology            the application's topology: required to join, else null
 * @param activeTasks         the tasks the member still runs, each subtopology's as partitions of a topic named by
 *                            its id; null when unchanged since its last heartbeat
 * @param processId           the application process the member runs in; null: unchanged
 * @param rackId              the rack (availability zone) the member runs in; null: unchanged, empty: none
 * @param userEndpoint        its endpoint for interactive queries; null: unchanged (or none), an empty host: none
 * @param endpointEpoch       the endpoint epoch the member last heard: the endpoint map comes when it differs
 * @param shutdownApplication the member asks every member of the application to shut down
 * @param clientTags          the member's client tags (Kafka Streams' {@code client.tag.<key>}), which its standbys
 *                            spread over where the group lists their keys; null: unchanged
 */
public record StreamsHeartbeat(String memberId, int memberEpoch, String instanceId, long sessionTimeoutMs,
                               StreamsTopology topology, List<TopicPartitions> activeTasks, String processId,
                               StreamsTopology.Endpoint userEndpoint, int endpointEpoch, String clientId,
                               boolean shutdownApplication, String rackId, Map<String, String> clientTags) {
    public StreamsHeartbeat {
        activeTasks = activeTasks == null ? null : List.copyOf(activeTasks);
        clientTags = clientTags == null ? null : Map.copyOf(clientTags);
    }

    /**
     * The membership part, subscribed to {@code subtopologies} (each one a "topic" of tasks), divided by
     * {@link GroupAssignor#RANGE}: every member gets its share of each subtopology's tasks, as Kafka's task assignor
     * spreads them (a subtopology's tasks cost alike; two subtopologies may not).
     */
    Heartbeat membership(Set<String> subtopologies) {
        return new Heartbeat(memberId, memberEpoch, memberEpoch < 0 ? Set.of() : subtopologies,
                memberEpoch < 0 ? 0 : sessionTimeoutMs, activeTasks, clientId, instanceId)
                .withAssignor(GroupAssignor.RANGE.wireName());
    }
}
