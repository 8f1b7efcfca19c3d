package io.tierlog.groups;

import java.util.List;

/** Partitions of one topic, ascending: the shape of assignments and owned partitions on the wire. */
public record TopicPartitions(String topic, List<Integer> partitions) {
    public TopicPartitions {
        partitions = List.copyOf(partitions);
    }
}
