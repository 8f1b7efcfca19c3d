package io.tierlog.groups;

import io.tierlog.log.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.IntSummaryStatistics;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

class RangeAssignorTest {
    static final Set<String> BOTH = Set.of("orders", "payments");

    @Test
    void coPartitionedTopicsGoTogetherInRanges() {
        Map<String, Set<String>> subs = members(3, BOTH);
        Map<String, Set<TopicPartition>> target =
                GroupAssignor.RANGE.assign(subs, Map.of("orders", 8, "payments", 8), Map.of(), WarmState.NONE);
        // 8 over 3: 3, 3, 2, in member order, the same numbers from each topic.
        assertThat(numbers(target.get("m0"), "orders")).containsExactly(0, 1, 2);
        assertThat(numbers(target.get("m1"), "orders")).containsExactly(3, 4, 5);
        assertThat(numbers(target.get("m2"), "orders")).containsExactly(6, 7);
        target.forEach((m, tps) -> assertThat(numbers(tps, "payments")).isEqualTo(numbers(tps, "orders")));
    }

    @Test
    void theUniformAssignorDoesNotKeepTopicsTogether() {
        // Why a group may ask for range: uniform balances the group's partitions as one pool.
        Map<String, Set<TopicPartition>> target =
                GroupAssignor.UNIFORM.assign(members(2, BOTH), Map.of("orders", 4, "payments", 4), Map.of(),
                        WarmState.NONE);
        assertThat(target.values()).anyMatch(tps -> !numbers(tps, "orders").equals(numbers(tps, "payments")));
    }

    @Test
    void joinsAndLeavesKeepCoPartitioningAndMoveLittle() {
        Random random = new Random(20261207);
        for (int trial = 0; trial < 300; trial++) {
            int partitions = 1 + random.nextInt(64);
            Map<String, Integer> counts = Map.of("orders", partitions, "payments", partitions);
            Map<String, Set<String>> subs = members(1 + random.nextInt(20), BOTH);
            Map<String, Set<TopicPartition>> target =
                    GroupAssignor.RANGE.assign(subs, counts, Map.of(), WarmState.NONE);
            for (int step = 0; step < 10; step++) {
                Map<String, Set<String>> next = new TreeMap<>(subs);
                if (next.size() > 1 && random.nextBoolean()) {
                    next.remove(next.keySet().stream().skip(random.nextInt(next.size())).findFirst().orElseThrow());
                } else {
                    next.put("j" + trial + "-" + step, BOTH);
                }
                Map<String, Set<TopicPartition>> after =
                        GroupAssignor.RANGE.assign(next, counts, target, WarmState.NONE);
                String what = "trial " + trial + " step " + step + ": " + next.size() + " members, " + partitions;
                assertPerTopicRanges(after, next, counts, what);
                after.forEach((m, tps) -> assertThat(numbers(tps, "payments")).as(what)
                        .isEqualTo(numbers(tps, "orders")));
                // Sticky: a member that stays keeps its partitions of each topic up to the new quota.
                int quota = partitions / next.size();
                for (String m : next.keySet()) {
                    Set<TopicPartition> before = target.getOrDefault(m, Set.of());
                    Set<TopicPartition> kept = new HashSet<>(before);
                    kept.retainAll(after.get(m));
                    assertThat(kept.size()).as(what).isGreaterThanOrEqualTo(2 * Math.min(before.size() / 2, quota));
                }
                subs = next;
                target = after;
            }
        }
    }

    @Test
    void eachTopicIsDividedAmongItsOwnSubscribers() {
        Random random = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            Map<String, Set<String>> subs = new TreeMap<>();
            int members = 1 + random.nextInt(12);
            for (int i = 0; i < members; i++) {
                subs.put("m" + i, random.nextBoolean() ? BOTH : Set.of(random.nextBoolean() ? "orders" : "payments"));
            }
            Map<String, Integer> counts = Map.of("orders", random.nextInt(20), "payments", 1 + random.nextInt(20));
            Map<String, Set<TopicPartition>> target =
                    GroupAssignor.RANGE.assign(subs, counts, Map.of(), WarmState.NONE);
            assertPerTopicRanges(target, subs, counts, "trial " + trial);
        }
    }

    @Test
    void anOrphanedPartitionGoesToAMemberKeepingItsStateWarm() {
        // m2 leaves; m1 keeps partition 4 warm and m0 partition 5 (standby copies), against range's order of filling.
        Map<String, Set<TopicPartition>> previous = Map.of("m0", orders(0, 1), "m1", orders(2, 3), "m2", orders(4, 5));
        Map<String, Set<TopicPartition>> warm = Map.of("m0", orders(2, 5), "m1", orders(0, 4));
        Map<String, Set<TopicPartition>> target = GroupAssignor.RANGE.assign(members(2, Set.of("orders")),
                Map.of("orders", 6), previous, new WarmState(warm, Map.of()));
        assertThat(numbers(target.get("m0"), "orders")).containsExactly(0, 1, 5);
        assertThat(numbers(target.get("m1"), "orders")).containsExactly(2, 3, 4);
    }

    @Test
    void aRestartedApplicationsTasksGoBackToTheStoresItsMembersReport() {
        // Every member is new (a whole application restarted); each reports the stores its process left on disk,
        // in an order range's filling would not give them: m0 has 4 and 5, m1 has 0 and 1, m2 has 2 and 3.
        Map<String, Map<TopicPartition, Long>> reported = Map.of(
                "m0", Map.of(order(4), 90L, order(5), 80L),
                "m1", Map.of(order(0), 70L, order(1), 60L),
                "m2", Map.of(order(2), 50L, order(3), 40L));
        Map<String, Set<TopicPartition>> target = GroupAssignor.RANGE.assign(members(3, Set.of("orders")),
                Map.of("orders", 6), Map.of(), new WarmState(Map.of(), reported));
        assertThat(numbers(target.get("m0"), "orders")).containsExactly(4, 5);
        assertThat(numbers(target.get("m1"), "orders")).containsExactly(0, 1);
        assertThat(numbers(target.get("m2"), "orders")).containsExactly(2, 3);
    }

    @Test
    void aKeptCopyOutranksReportedStateAndTheMostCaughtUpReportWins() {
        // m2 leaves with 4 and 5. For 4: m0 reports more of it than m1, but m1 keeps a standby copy: m1 takes it.
        // For 5: neither keeps a copy; m1 reports 300, m0 200 (and m0 is first by id): m1 takes it, then is full.
        Map<String, Set<TopicPartition>> previous = Map.of("m0", orders(0, 1), "m1", orders(2, 3), "m2", orders(4, 5));
        Map<String, Map<TopicPartition, Long>> reported = Map.of(
                "m0", Map.of(order(4), 500L, order(5), 200L),
                "m1", Map.of(order(4), 100L, order(5), 300L));
        WarmState warm = new WarmState(Map.of("m1", orders(4)), reported);
        Map<String, Set<TopicPartition>> target = GroupAssignor.RANGE.assign(members(2, Set.of("orders")),
                Map.of("orders", 6), previous, warm);
        assertThat(numbers(target.get("m1"), "orders")).containsExactly(2, 3, 4);
        assertThat(numbers(target.get("m0"), "orders")).containsExactly(0, 1, 5);

        // Kafka Streams reports a task it runs as LATEST (-2): caught up, ahead of any offset.
        Map<String, Map<TopicPartition, Long>> running = Map.of(
                "m0", Map.of(order(4), WarmupTasks.LATEST), "m1", Map.of(order(4), 1_000_000L));
        Map<String, Set<TopicPartition>> again = GroupAssignor.RANGE.assign(members(2, Set.of("orders")),
                Map.of("orders", 6), Map.of("m0", orders(0, 1), "m1", orders(2, 3)),
                new WarmState(Map.of(), running));
        assertThat(numbers(again.get("m0"), "orders")).contains(4);
    }

    @Test
    void warmStateNeverUnbalancesTheRanges() {
        Random random = new Random(1207);
        for (int trial = 0; trial < 300; trial++) {
            int partitions = 1 + random.nextInt(40);
            Map<String, Integer> counts = Map.of("orders", partitions, "payments", partitions);
            Map<String, Set<String>> before = members(1 + random.nextInt(10), BOTH);
            Map<String, Set<TopicPartition>> previous = GroupAssignor.RANGE.assign(before, counts, Map.of(),
                    WarmState.NONE);
            Map<String, Set<String>> after = members(1 + random.nextInt(10), BOTH);
            Map<String, Set<TopicPartition>> warm = new TreeMap<>();
            after.keySet().forEach(m -> {
                Set<TopicPartition> w = new TreeSet<>(StickyBalancedAssignor.ORDER);
                for (int i = random.nextInt(partitions + 1); i > 0; i--) {
                    w.add(new TopicPartition(random.nextBoolean() ? "orders" : "payments", random.nextInt(partitions)));
                }
                warm.put(m, w);
            });
            assertPerTopicRanges(GroupAssignor.RANGE.assign(after, counts, previous, new WarmState(warm, Map.of())),
                    after, counts,
                    "trial " + trial);
        }
    }

    private static TopicPartition order(int partition) {
        return new TopicPartition("orders", partition);
    }

    private static Set<TopicPartition> orders(int... partitions) {
        Set<TopicPartition> out = new TreeSet<>(StickyBalancedAssignor.ORDER);
        for (int p : partitions) {
            out.add(new TopicPartition("orders", p));
        }
        return out;
    }

    @Test
    void aPartitionClaimedTwiceGoesToOneMember() {
        TopicPartition zero = new TopicPartition("orders", 0);
        Map<String, Set<TopicPartition>> target = GroupAssignor.RANGE.assign(members(2, Set.of("orders")),
                Map.of("orders", 2), Map.of("m0", Set.of(zero), "m1", Set.of(zero)), WarmState.NONE);
        assertThat(target.get("m0")).containsExactly(zero);
        assertThat(target.get("m1")).containsExactly(new TopicPartition("orders", 1));
    }

    @Test
    void theGroupRunsTheAssignorMostMembersName() {
        assertThat(GroupAssignor.preferred(java.util.List.of())).isEqualTo(GroupAssignor.UNIFORM);
        assertThat(GroupAssignor.preferred(java.util.List.of("range"))).isEqualTo(GroupAssignor.RANGE);
        assertThat(GroupAssignor.preferred(java.util.List.of("range", "uniform", "range")))
                .isEqualTo(GroupAssignor.RANGE);
        assertThat(GroupAssignor.preferred(java.util.List.of("range", "uniform"))).as("a tie")
                .isEqualTo(GroupAssignor.UNIFORM);
    }

    /** Every partition of a subscribed topic to exactly one subscriber; subscribers' counts differ by at most 1. */
    private static void assertPerTopicRanges(Map<String, Set<TopicPartition>> target, Map<String, Set<String>> subs,
                                             Map<String, Integer> counts, String what) {
        for (String topic : BOTH) {
            Set<Integer> seen = new HashSet<>();
            IntSummaryStatistics perMember = new IntSummaryStatistics();
            target.forEach((m, tps) -> {
                Set<Integer> mine = numbers(tps, topic);
                if (!mine.isEmpty()) {
                    assertThat(subs.get(m)).as(what).contains(topic);
                }
                mine.forEach(p -> assertThat(seen.add(p)).as("%s: %s-%d twice", what, topic, p).isTrue());
                if (subs.get(m).contains(topic)) {
                    perMember.accept(mine.size());
                }
            });
            boolean subscribed = subs.values().stream().anyMatch(s -> s.contains(topic));
            assertThat(seen).as(what).hasSize(subscribed ? counts.get(topic) : 0);
            if (perMember.getCount() > 0) {
                assertThat(perMember.getMax() - perMember.getMin()).as(what).isLessThanOrEqualTo(1);
            }
        }
    }

    private static Map<String, Set<String>> members(int n, Set<String> topics) {
        Map<String, Set<String>> subs = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            subs.put("m" + i, topics);
        }
        return subs;
    }

    private static Set<Integer> numbers(Set<TopicPartition> tps, String topic) {
        Set<Integer> out = new TreeSet<>();
        tps.stream().filter(tp -> tp.topic().equals(topic)).forEach(tp -> out.add(tp.partition()));
        return out;
    }
}
