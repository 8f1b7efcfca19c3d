package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where a streams group's standby tasks go: for each task of a subtopology with state, up to {@code replicas} members
 * of processes other than the one running it (a standby beside its active copy in one process would keep no state the
 * process does not already have), never two in one process; a member that had the standby keeps it unless it is more
 * than one task above the least loaded candidate, else the least loaded member (active plus standby tasks) takes it.
 * Where members name their places, a task's standbys go first, however loaded, to the members that differ from every
 * copy of it so far in the most dimensions: the rack (availability zone) and each client tag the group lists
 * ({@code streams.rack.aware.assignment.tags}, Kafka Streams' {@code client.tag.<key>}), so losing a zone, or any
 * value of a tag, leaves each task a warm copy elsewhere; with no such member, the rule above alone.
 * A pure function of the group's state, so every instance computes the same. When a task's active owner leaves, the
 * task goes to the member keeping its standby if that member has room ({@link RangeAssignor}'s warm state).
 */
final class StandbyTasks {
    private StandbyTasks() {
    }

    /**
     * @param replicas       standbys wanted per task
     * @param stateful       the subtopologies that keep state (a changelog): only their tasks have standbys
     * @param active         each member's active target
     * @param processOf      each member's process (a member without one is its own process)
     * @param placeOf        each member's place: its value in each dimension it names (rack, client tags)
     * @param previous       each member's standby target before
     * @return each member's standby target (every member present, possibly empty)
     */
    static Map<String, Set<TopicPartition>> assign(int replicas, Set<String> stateful,
                                                   Map<String, Set<TopicPartition>> active,
                                                   Map<String, String> processOf,
                                                   Map<String, Map<String, String>> placeOf,
                                                   Map<String, Set<TopicPartition>> previous) {
        Map<String, Set<TopicPartition>> out = new TreeMap<>();
        Map<String, Integer> load = new HashMap<>();
        Map<TopicPartition, String> activeOwner = new TreeMap<>(StickyBalancedAssignor.ORDER);
        active.forEach((member, tasks) -> {
            out.put(member, new TreeSet<>(StickyBalancedAssignor.ORDER));
            load.put(member, tasks.size());
            tasks.forEach(t -> activeOwner.put(t, member));
        });
        if (replicas <= 0) {
            return out;
        }
        for (Map.Entry<TopicPartition, String> e : activeOwner.entrySet()) {
            TopicPartition task = e.getKey();
            if (!stateful.contains(task.topic())) {
                continue; // a stateless task has nothing to keep warm
            }
            Set<String> processes = new HashSet<>(Set.of(process(processOf, e.getValue())));
            Map<String, Set<String>> used = new HashMap<>();
            place(used, placeOf.get(e.getValue()));
            for (int r = 0; r < replicas; r++) {
                String chosen = null;
                List<String> candidates = new ArrayList<>();
                List<String> elsewhere = new ArrayList<>();
                int farthest = 0;
                for (String member : out.keySet()) {
                    if (!processes.contains(process(processOf, member))) {
                        candidates.add(member);
                        int apart = apart(used, placeOf.get(member));
                        if (apart > farthest) {
                            farthest = apart;
                            elsewhere.clear();
                        }
                        if (apart == farthest && apart > 0) {
                            elsewhere.add(member);
                        }
                    }
                }
                if (!elsewhere.isEmpty()) {
                    candidates = elsewhere; // another zone or tag value first, however loaded
                }
                String least = null;
                for (String member : candidates) {
                    if (least == null || load.get(member) < load.get(least)) {
                        least = member;
                    }
                }
                for (String member : candidates) {
                    // Sticky while that keeps the loads within one of each other.
                    if (previous.getOrDefault(member, Set.of()).contains(task)
                            && load.get(member) <= load.get(least) + 1) {
                        chosen = member;
                        break;
                    }
                }
                if (chosen == null) {
                    chosen = least;
                }
                if (chosen == null) {
                    break; // fewer other processes than replicas: as many standbys as there are
                }
                out.get(chosen).add(task);
                load.merge(chosen, 1, Integer::sum);
                processes.add(process(processOf, chosen));
                place(used, placeOf.get(chosen));
            }
        }
        return out;
    }

    /** Adds a copy's place to the values each dimension holds copies in. */
    private static void place(Map<String, Set<String>> used, Map<String, String> place) {
        if (place != null) {
            place.forEach((dimension, value) -> used.computeIfAbsent(dimension, d -> new HashSet<>()).add(value));
        }
    }

    /** In how many dimensions holding copies a member's place has a value none of them has. */
    private static int apart(Map<String, Set<String>> used, Map<String, String> place) {
        if (place == null) {
            return 0;
        }
        int n = 0;
        for (Map.Entry<String, String> e : place.entrySet()) {
            Set<String> values = used.get(e.getKey());
            if (values != null && !values.contains(e.getValue())) {
                n++;
            }
        }
        return n;
    }

    private static String process(Map<String, String> processOf, String member) {
        String p = processOf.get(member);
        return p == null ? "member:" + member : p;
    }
}
