package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.Map;

/**
 * What a streams member reports of its local task state with a heartbeat (Kafka's TaskOffsets and TaskEndOffsets),
 * each task by subtopology id as a topic's partition: its changelog offsets summed per task
 * ({@link WarmupTasks#LATEST} for a task it runs as active), and the changelogs' end offsets summed per task. Kafka
 * Streams sends them on joining and every {@code streams.task.offset.interval.ms}, or sooner when a warm-up task
 * caught up; either is null when not sent.
 */
public record TaskProgress(Map<TopicPartition, Long> offsets, Map<TopicPartition, Long> endOffsets) {
    /** A heartbeat reporting nothing. */
    public static final TaskProgress NONE = new TaskProgress(null, null);

    public TaskProgress {
        offsets = offsets == null ? null : Map.copyOf(offsets);
        endOffsets = endOffsets == null ? null : Map.copyOf(endOffsets);
    }
}
