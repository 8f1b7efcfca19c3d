package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kafka's {@code range} assignment: each topic's partitions are divided among the members subscribed to it in
 * contiguous ranges, members in id order, so with the same subscriptions and partition counts member <i>i</i> gets
 * the same partition numbers of every topic. Applications that join co-partitioned topics (the same key, the same
 * partition count) rely on that: partition 3 of {@code orders} and of {@code payments} reach the same consumer.
 *
 * <ul>
 *   <li><b>Per topic:</b> {@code n} partitions over {@code m} subscribers: each gets {@code n / m}, and
 *       {@code n % m} of them one more; a topic with fewer partitions than subscribers leaves some with none.</li>
 *   <li><b>Sticky within the ranges:</b> a member keeps its lowest previous partitions of the topic up to its quota
 *       (and one more while extra slots remain), the rest go out in ascending order to members in id order. Kept
 *       partitions are chosen the same way in every topic, so a co-partitioned assignment stays co-partitioned
 *       through joins and leaves.</li>
 *   <li><b>Warm state first:</b> a partition nobody kept goes to the member with room that keeps its state warmest
 *       ({@link WarmState}: a streams member's standby or warm-up copy of the task, else state it reports on its
 *       disk), before the rest go out in order: a dead member's tasks restart where their state is already restored,
 *       and a restarted application's tasks where it left their stores, as Kafka's streams task assignor places
 *       them.</li>
 * </ul>
 * A pure function of its inputs (members ordered by id), so every instance computes the same target.
 */
final class RangeAssignor {
    private RangeAssignor() {
    }

    /**
     * The same contract as {@link StickyBalancedAssignor#assign}, plus {@code warm}: the state each member keeps
     * of partitions it does not own ({@link WarmState#NONE} for consumers).
     */
    static Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions,
                                                   Map<String, Integer> partitionCounts,
                                                   Map<String, Set<TopicPartition>> previous,
                                                   WarmState warm) {
        Map<String, Set<TopicPartition>> out = new TreeMap<>();
        subscriptions.keySet().forEach(m -> out.put(m, new TreeSet<>(StickyBalancedAssignor.ORDER)));
        Map<String, List<String>> subscribersByTopic = new TreeMap<>();
        out.keySet().forEach(m -> subscriptions.get(m).forEach(
                t -> subscribersByTopic.computeIfAbsent(t, x -> new ArrayList<>()).add(m)));
        subscribersByTopic.forEach((topic, members) -> {
            int partitions = partitionCounts.getOrDefault(topic, 0);
            if (partitions > 0) {
                assignTopic(topic, partitions, members, previous, warm, out);
            }
        });
        return out;
    }

    /** {@code members} in id order, each subscribed to {@code topic}. */
    private static void assignTopic(String topic, int partitions, List<String> members,
                                    Map<String, Set<TopicPartition>> previous, WarmState warm,
                                    Map<String, Set<TopicPartition>> out) {
        int quota = partitions / members.size();
        int extras = partitions % members.size();
        boolean[] taken = new boolean[partitions];
        List<String> unfilled = new ArrayList<>();
        List<Integer> missing = new ArrayList<>();
        for (String m : members) {
            List<Integer> had = new ArrayList<>();
            for (TopicPartition tp : previous.getOrDefault(m, Set.of())) {
                // A partition another member kept already stays with it (cannot happen from this assignor's output).
                if (tp.topic().equals(topic) && tp.partition() < partitions && !taken[tp.partition()]) {
                    had.add(tp.partition());
                }
            }
            had.sort(null);
            int keep = Math.min(had.size(), quota);
            if (had.size() > quota && extras > 0) {
                keep++;
                extras--;
            }
            for (int p : had.subList(0, keep)) {
                taken[p] = true;
                out.get(m).add(new TopicPartition(topic, p));
            }
            if (keep <= quota) {
                unfilled.add(m);
                missing.add(quota - keep);
            }
        }
        boolean[] gotExtra = new boolean[unfilled.size()];
        boolean anyWarm = !warm.isEmpty();
        for (int p = 0; anyWarm && p < partitions; p++) {
            if (taken[p]) {
                continue;
            }
            // The warmest member with room takes it (Kafka's order of standby candidates; a tie to the first by id).
            TopicPartition tp = new TopicPartition(topic, p);
            int best = -1;
            WarmState.Warmth bestWarmth = null;
            for (int i = 0; i < unfilled.size(); i++) {
                WarmState.Warmth w = warm.warmth(unfilled.get(i), tp);
                boolean room = missing.get(i) > 0 || extras > 0 && !gotExtra[i];
                if (room && w != null && (bestWarmth == null || w.compareTo(bestWarmth) > 0)) {
                    best = i;
                    bestWarmth = w;
                }
            }
            if (best < 0) {
                continue;
            }
            if (missing.get(best) > 0) {
                missing.set(best, missing.get(best) - 1);
            } else {
                extras--;
                gotExtra[best] = true;
            }
            taken[p] = true;
            out.get(unfilled.get(best)).add(tp);
        }
        int next = 0;
        for (int i = 0; i < unfilled.size(); i++) {
            int wanted = missing.get(i);
            if (extras > 0 && !gotExtra[i]) {
                wanted++;
                extras--;
            }
            for (; wanted > 0; next++) {
                if (!taken[next]) {
                    taken[next] = true;
                    out.get(unfilled.get(i)).add(new TopicPartition(topic, next));
                    wanted--;
                }
            }
        }
    }
}
