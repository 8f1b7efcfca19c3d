package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.Map;
import java.util.Set;

/**
 * What each member keeps of tasks' state without running them, for placing tasks nobody kept: the copies it keeps
 * up to date (a streams member's standby and warm-up tasks) and the state it reports on its disk
 * (StreamsGroupHeartbeat's TaskOffsets: a restarted Kafka Streams process joins under new member ids, with the stores
 * its earlier members left).
 * Ranked as Kafka's streams task assignor ranks a task's candidates: a kept copy before reported state alone, then the
 * most caught-up. Consumers keep none ({@link #NONE}).
 *
 * @param copies   member id → the tasks it keeps copies of
 * @param reported member id → task → the changelog offset it reports for its state of the task
 *                 ({@link WarmupTasks#LATEST} for a task it runs)
 */
record WarmState(Map<String, Set<TopicPartition>> copies, Map<String, Map<TopicPartition, Long>> reported) {
    static final WarmState NONE = new WarmState(Map.of(), Map.of());

    /** How warm a member's state of a task is; the greater, the sooner the task restarts there. */
    record Warmth(boolean copy, long offset) implements Comparable<Warmth> {
        @Override
        public int compareTo(Warmth o) {
            return copy != o.copy ? Boolean.compare(copy, o.copy) : Long.compare(offset, o.offset);
        }
    }

    /** Whether no member keeps anything (a consumer group): nothing to rank. */
    boolean isEmpty() {
        return copies.values().stream().allMatch(Set::isEmpty) && reported.values().stream().allMatch(Map::isEmpty);
    }

    /** {@code member}'s warmth for {@code task}, or null when it keeps nothing of it. */
    Warmth warmth(String member, TopicPartition task) {
        Long offset = reported.getOrDefault(member, Map.of()).get(task);
        boolean copy = copies.getOrDefault(member, Set.of()).contains(task);
        if (!copy && offset == null) {
            return null;
        }
        // An offset unknown to the member (below 0) says it has no state to speak of; a running task is caught up.
        long rank = offset == null || offset < 0 ? -1 : offset;
        return new Warmth(copy, offset != null && offset == WarmupTasks.LATEST ? Long.MAX_VALUE : rank);
    }
}
