package io.tierlog.groups;

import java.util.List;
import java.util.Map;

/**
 * A streams group as its describers show it.
 *
 * @param group      membership and tasks (each member's topics are subtopology ids, its partitions task numbers)
 * @param topology   the topology its first member set
 * @param taskCounts tasks per subtopology when last configured (0 while the topology cannot run)
 * @param members    the streams side of each member, by member id
 */
public record StreamsGroupDescription(GroupDescription group, StreamsTopology topology,
                                      Map<String, Integer> taskCounts, Map<String, StreamsMember> members) {
    public StreamsGroupDescription {
        taskCounts = Map.copyOf(taskCounts);
        members = Map.copyOf(members);
    }

    /**
     * @param rack          its rack (availability zone), or null
     * @param userEndpoint  where it answers interactive queries, or null
     * @param standby       the standby tasks it keeps, by subtopology id
     * @param standbyTarget where its standby tasks should be
     * @param warmup        the warm-up tasks it restores, and where they should be
     * @param taskOffsets   its reported offset of each task's state, by subtopology id and task
     * @param clientTags    its client tags
     */
    public record StreamsMember(String processId, String rack, StreamsTopology.Endpoint userEndpoint, int topologyEpoch,
                                List<TopicPartitions> standby, List<TopicPartitions> standbyTarget,
                                List<TopicPartitions> warmup, List<TopicPartitions> warmupTarget,
                                Map<String, Map<Integer, Long>> taskOffsets, Map<String, String> clientTags) {
    }
}
