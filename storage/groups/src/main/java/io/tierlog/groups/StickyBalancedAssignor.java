package io.tierlog.groups;

import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Computes a group's target assignment: every partition of every subscribed topic goes to exactly one member
 * subscribed to its topic, balanced and sticky.
 *
 * <ul>
 *   <li><b>Balanced:</b> when all members subscribe to the same topics, partition counts per member differ by at
 *       most 1. With different subscriptions that is not always possible (a member alone on a one-partition
 *       topic); partitions then go to the least-loaded eligible member and are moved while that narrows a gap
 *       of 2 or more.</li>
 *   <li><b>Sticky:</b> a member keeps as many of its previous partitions as its quota allows, so a join moves
 *       only the partitions the newcomer gets, and a leave moves only the leaver's partitions.</li>
 * </ul>
 * A pure function of its inputs (same inputs, same answer), so every instance computes the same target.
 */
public final class StickyBalancedAssignor {
    static final Comparator<TopicPartition> ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    private StickyBalancedAssignor() {
    }

    /**
     * @param subscriptions   member id → the topics it subscribes to
     * @param partitionCounts topic → number of partitions (a topic missing or at 0 has nothing to assign)
     * @param previous        member id → its previous target (members absent here start empty)
     * @return member id → its new target, for every member of {@code subscriptions}
     */
    public static Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions,
                                                          Map<String, Integer> partitionCounts,
                                                          Map<String, Set<TopicPartition>> previous) {
        Map<String, Set<TopicPartition>> out = new TreeMap<>();
        subscriptions.keySet().forEach(m -> out.put(m, new TreeSet<>(ORDER)));
        if (subscriptions.isEmpty()) {
            return out;
        }
        // Every partition that exists and some member subscribes to.
        Set<String> topics = new TreeSet<>();
        subscriptions.values().forEach(topics::addAll);
        TreeSet<TopicPartition> all = new TreeSet<>(ORDER);
        for (String t : topics) {
            int n = partitionCounts.getOrDefault(t, 0);
            for (int p = 0; p < n; p++) {
                all.add(new TopicPartition(t, p));
            }
        }
        // Each member's valid previous partitions; a partition claimed twice (cannot happen from our own output)
        // stays with the first member by id.
        Map<String, List<TopicPartition>> kept = new TreeMap<>();
        Set<TopicPartition> claimed = new HashSet<>();
        for (String m : out.keySet()) {
            List<TopicPartition> mine = new ArrayList<>();
            for (TopicPartition tp : new TreeSet<>(sorted(previous.getOrDefault(m, Set.of())))) {
                if (all.contains(tp) && subscriptions.get(m).contains(tp.topic()) && claimed.add(tp)) {
                    mine.add(tp);
                }
            }
            kept.put(m, mine);
        }
        boolean homogeneous = new HashSet<>(subscriptions.values()).size() == 1;
        if (homogeneous) {
            assignHomogeneous(all, kept, out);
        } else {
            assignHeterogeneous(all, kept, subscriptions, out);
        }
        return out;
    }

    private static TreeSet<TopicPartition> sorted(Set<TopicPartition> s) {
        TreeSet<TopicPartition> t = new TreeSet<>(ORDER);
        t.addAll(s);
        return t;
    }

    /** Exact quotas: the members that already hold the most get the {@code N % n} slots of one extra. */
    private static void assignHomogeneous(TreeSet<TopicPartition> all, Map<String, List<TopicPartition>> kept,
                                          Map<String, Set<TopicPartition>> out) {
        int n = out.size();
        int base = all.size() / n;
        int extra = all.size() % n;
        List<String> byHeld = new ArrayList<>(out.keySet());
        byHeld.sort(Comparator.comparingInt((String m) -> kept.get(m).size()).reversed()
                .thenComparing(Comparator.naturalOrder()));
        Map<String, Integer> quota = new HashMap<>();
        for (int i = 0; i < byHeld.size(); i++) {
            quota.put(byHeld.get(i), base + (i < extra ? 1 : 0));
        }
        TreeSet<TopicPartition> pool = new TreeSet<>(all);
        for (String m : byHeld) {
            List<TopicPartition> mine = kept.get(m);
            for (TopicPartition tp : mine.subList(0, Math.min(mine.size(), quota.get(m)))) {
                out.get(m).add(tp);
                pool.remove(tp);
            }
        }
        for (String m : byHeld) {
            while (out.get(m).size() < quota.get(m)) {
                out.get(m).add(pool.pollFirst());
            }
        }
    }

    private static void assignHeterogeneous(TreeSet<TopicPartition> all, Map<String, List<TopicPartition>> kept,
                                            Map<String, Set<String>> subscriptions,
                                            Map<String, Set<TopicPartition>> out) {
        TreeSet<TopicPartition> pool = new TreeSet<>(all);
        kept.forEach((m, mine) -> {
            out.get(m).addAll(mine);
            mine.forEach(pool::remove);
        });
        for (TopicPartition tp : pool) {
            String best = null;
            for (String m : out.keySet()) {
                if (subscriptions.get(m).contains(tp.topic())
                        && (best == null || out.get(m).size() < out.get(best).size())) {
                    best = m;
                }
            }
            out.get(best).add(tp); // some member subscribes, or tp would not be in the pool
        }
        // Narrow gaps of 2 or more by single moves; each move lowers the sum of squared counts, so this ends.
        boolean moved = true;
        while (moved) {
            moved = false;
            for (String from : out.keySet()) {
                for (TopicPartition tp : out.get(from)) {
                    String to = null;
                    for (String m : out.keySet()) {
                        if (subscriptions.get(m).contains(tp.topic())
                                && out.get(m).size() < out.get(from).size() - 1
                                && (to == null || out.get(m).size() < out.get(to).size())) {
                            to = m;
                        }
                    }
                    if (to != null) {
                        out.get(from).remove(tp);
                        out.get(to).add(tp);
                        moved = true;
                        break;
                    }
                }
            }
        }
    }
}
