package io.tierlog.groups;

import io.tierlog.log.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.IntSummaryStatistics;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

class StickyBalancedAssignorTest {

    @Test
    void balancedAndStickyOverRandomJoinsAndLeaves() {
        Random random = new Random(20261201);
        for (int trial = 0; trial < 300; trial++) {
            int members = 1 + random.nextInt(200);
            int partitions = 1 + random.nextInt(1000);
            Map<String, Integer> counts = Map.of("orders", partitions);
            Map<String, Set<String>> subs = new TreeMap<>();
            for (int i = 0; i < members; i++) {
                subs.put("m" + i, Set.of("orders"));
            }
            Map<String, Set<TopicPartition>> target = StickyBalancedAssignor.assign(subs, counts, Map.of());
            assertComplete(target, partitions);
            assertBalanced(target);

            // A join: only the newcomer's partitions move.
            Map<String, Set<String>> joined = new TreeMap<>(subs);
            joined.put("new", Set.of("orders"));
            Map<String, Set<TopicPartition>> afterJoin = StickyBalancedAssignor.assign(joined, counts, target);
            assertComplete(afterJoin, partitions);
            assertBalanced(afterJoin);
            assertThat(moved(target, afterJoin)).as("trial %d: %d members, %d partitions", trial, members, partitions)
                    .isEqualTo(afterJoin.get("new").size());
            target.forEach((m, before) -> assertThat(before).containsAll(afterJoin.get(m)));

            // A leave: only the leaver's partitions move.
            if (members > 1) {
                String leaver = "m" + random.nextInt(members);
                Map<String, Set<String>> left = new TreeMap<>(subs);
                left.remove(leaver);
                Map<String, Set<TopicPartition>> afterLeave = StickyBalancedAssignor.assign(left, counts, target);
                assertComplete(afterLeave, partitions);
                assertBalanced(afterLeave);
                afterLeave.forEach((m, after) -> assertThat(after).containsAll(target.get(m)));
            }
        }
    }

    @Test
    void newPartitionsAreSpreadWithoutMovingOldOnes() {
        Map<String, Set<String>> subs = Map.of("a", Set.of("t"), "b", Set.of("t"), "c", Set.of("t"));
        Map<String, Set<TopicPartition>> before = StickyBalancedAssignor.assign(subs, Map.of("t", 6), Map.of());
        Map<String, Set<TopicPartition>> after = StickyBalancedAssignor.assign(subs, Map.of("t", 12), before);
        assertComplete(after, 12);
        assertBalanced(after);
        before.forEach((m, old) -> assertThat(after.get(m)).containsAll(old));
    }

    @Test
    void differentSubscriptionsGetOnlyTheirTopicsAndAreSpread() {
        Random random = new Random(7);
        for (int trial = 0; trial < 50; trial++) {
            Map<String, Set<String>> subs = new TreeMap<>();
            int members = 2 + random.nextInt(20);
            for (int i = 0; i < members; i++) {
                subs.put("m" + i, random.nextBoolean() ? Set.of("a", "b") : Set.of(random.nextBoolean() ? "a" : "b"));
            }
            Map<String, Integer> counts = Map.of("a", 1 + random.nextInt(100), "b", 1 + random.nextInt(100));
            Map<String, Set<TopicPartition>> target = StickyBalancedAssignor.assign(subs, counts, Map.of());
            Set<TopicPartition> seen = new HashSet<>();
            target.forEach((m, tps) -> tps.forEach(tp -> {
                assertThat(subs.get(m)).contains(tp.topic());
                assertThat(seen.add(tp)).as("%s assigned twice", tp).isTrue();
            }));
            int expected = 0;
            for (String t : Set.of("a", "b")) {
                if (subs.values().stream().anyMatch(s -> s.contains(t))) {
                    expected += counts.get(t);
                }
            }
            assertThat(seen).hasSize(expected);
            // Members subscribed to both topics are balanced among themselves.
            IntSummaryStatistics both = target.entrySet().stream().filter(e -> subs.get(e.getKey()).size() == 2)
                    .mapToInt(e -> e.getValue().size()).summaryStatistics();
            if (both.getCount() > 0) {
                assertThat(both.getMax() - both.getMin()).isLessThanOrEqualTo(1);
            }
        }
    }

    @Test
    void unsubscribedAndMissingTopicsAreNotAssigned() {
        Map<String, Set<TopicPartition>> target = StickyBalancedAssignor.assign(
                Map.of("a", Set.of("gone")), Map.of("other", 3), Map.of("a", Set.of(new TopicPartition("gone", 0))));
        assertThat(target.get("a")).isEmpty();
    }

    private static int moved(Map<String, Set<TopicPartition>> before, Map<String, Set<TopicPartition>> after) {
        Map<TopicPartition, String> owner = new HashMap<>();
        before.forEach((m, tps) -> tps.forEach(tp -> owner.put(tp, m)));
        int moved = 0;
        for (Map.Entry<String, Set<TopicPartition>> e : after.entrySet()) {
            for (TopicPartition tp : e.getValue()) {
                if (!e.getKey().equals(owner.get(tp))) {
                    moved++;
                }
            }
        }
        return moved;
    }

    private static void assertComplete(Map<String, Set<TopicPartition>> target, int partitions) {
        Set<TopicPartition> seen = new HashSet<>();
        target.values().forEach(tps -> tps.forEach(tp -> assertThat(seen.add(tp)).as("%s twice", tp).isTrue()));
        assertThat(seen).hasSize(partitions);
    }

    private static void assertBalanced(Map<String, Set<TopicPartition>> target) {
        IntSummaryStatistics stats = target.values().stream().mapToInt(Set::size).summaryStatistics();
        assertThat(stats.getMax() - stats.getMin()).as("counts %s", stats).isLessThanOrEqualTo(1);
    }
}
