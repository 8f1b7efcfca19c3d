package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Warm-up tasks of a streams group (KIP-1071, as Kafka 4.4's assignment refiner): a task of a subtopology with state
 * that the assignor moves to a member whose copy of its state is not caught up stays with its current owner, and the
 * new owner gets it as a warm-up task, restoring the state in the background, while the group runs fewer than
 * {@code streams.num.warmup.replicas} of them; once the member reports its copy within
 * {@code streams.acceptable.recovery.lag} records of the changelog's end, the next target moves the task. So a
 * member joining a stateful application takes tasks over without stopping them while it restores. Moves within one
 * process (its members share the state directory), of stateless tasks, of tasks whose owner left, and to members
 * that report no offsets go at once. A pure function of the group's state, so every instance computes the same.
 */
final class WarmupTasks {
    /** The offset Kafka Streams reports for a task it runs as active: caught up by definition. */
    static final long LATEST = -2;

    private WarmupTasks() {
    }

    /** Each member's active and warm-up targets after refinement. */
    record Refined(Map<String, Set<TopicPartition>> active, Map<String, Set<TopicPartition>> warmup) {
    }

    /**
     * How far members' copies of tasks' state are: the reported offsets of each member that reports them (a member
     * absent from {@code offsets} does not, as clients of StreamsGroupHeartbeat version 0), each task's changelog end
     * as far as reported, and the lag below which a copy is caught up.
     */
    record Progress(Map<String, Map<TopicPartition, Long>> offsets, Map<TopicPartition, Long> endOffsets,
                    long acceptableLag) {
        /**
         * Whether {@code member}'s copy of {@code task} is caught up: it runs it, or lags the end by at most the
         * acceptable lag. A member without a copy is caught up only with a changelog known to be that short; a copy
         * whose end nobody reported counts as caught up; a member that reports no offsets cannot be waited for.
         */
        boolean caughtUp(String member, TopicPartition task) {
            Map<TopicPartition, Long> copies = offsets.get(member);
            if (copies == null) {
                return true;
            }
            Long offset = copies.get(task);
            if (offset != null && offset == LATEST) {
                return true;
            }
            Long end = endOffsets.get(task);
            if (offset == null || offset < 0) {
                return end != null && end <= acceptableLag;
            }
            return end == null || end - offset <= acceptableLag;
        }
    }

    /**
     * @param ideal           each member's active target as the assignor computed it
     * @param previous        each member's tasks now: those it runs, else those it was to run (each task once)
     * @param stateful        the subtopologies that keep state
     * @param processOf       each member's process (a member without one is its own process)
     * @param progress        the members' copies of the tasks' state
     * @param budget          warm-up tasks the group may run at once
     * @param previousWarmups each member's warm-up target before: those still needed keep their place in the budget
     */
    static Refined refine(Map<String, Set<TopicPartition>> ideal, Map<String, Set<TopicPartition>> previous,
                          Set<String> stateful, Map<String, String> processOf, Progress progress, int budget,
                          Map<String, Set<TopicPartition>> previousWarmups) {
        Map<TopicPartition, String> owner = new TreeMap<>(StickyBalancedAssignor.ORDER);
        previous.forEach((member, tasks) -> {
            if (ideal.containsKey(member)) {
                tasks.forEach(t -> owner.put(t, member));
            }
        });
        Map<String, Set<TopicPartition>> active = new TreeMap<>();
        Map<String, Set<TopicPartition>> warmup = new TreeMap<>();
        ideal.forEach((member, tasks) -> {
            Set<TopicPartition> copy = new TreeSet<>(StickyBalancedAssignor.ORDER);
            copy.addAll(tasks);
            active.put(member, copy);
            warmup.put(member, new TreeSet<>(StickyBalancedAssignor.ORDER));
        });
        List<Held> held = new ArrayList<>();
        for (Map.Entry<String, Set<TopicPartition>> e : ideal.entrySet()) {
            String to = e.getKey();
            for (TopicPartition task : e.getValue()) {
                String from = owner.get(task);
                if (from == null || from.equals(to) || !stateful.contains(task.topic())
                        || process(processOf, from).equals(process(processOf, to))
                        || progress.caughtUp(to, task)) {
                    continue;
                }
                active.get(to).remove(task);
                active.get(from).add(task);
                held.add(new Held(to, task, previousWarmups.getOrDefault(to, Set.of()).contains(task)));
            }
        }
        // Warm-ups already restoring keep their place; the budget's rest goes in task order.
        held.sort(Comparator.comparing((Held h) -> !h.warming()).thenComparing(Held::task, StickyBalancedAssignor.ORDER)
                .thenComparing(Held::member));
        for (Held h : held.subList(0, Math.min(Math.max(0, budget), held.size()))) {
            warmup.get(h.member()).add(h.task());
        }
        return new Refined(active, warmup);
    }

    /** A move held back: the task, the member it waits for, and whether that member was warming it up already. */
    private record Held(String member, TopicPartition task, boolean warming) {
    }

    private static String process(Map<String, String> processOf, String member) {
        String p = processOf.get(member);
        return p == null ? "member:" + member : p;
    }
}
