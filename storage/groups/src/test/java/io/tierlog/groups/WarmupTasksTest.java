package io.tierlog.groups;

import io.tierlog.log.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

class WarmupTasksTest {
    static final TopicPartition S0 = new TopicPartition("stateful", 0);
    static final TopicPartition S1 = new TopicPartition("stateful", 1);
    static final TopicPartition S2 = new TopicPartition("stateful", 2);
    static final TopicPartition L0 = new TopicPartition("stateless", 0);

    static Set<TopicPartition> set(TopicPartition... tasks) {
        Set<TopicPartition> s = new TreeSet<>(StickyBalancedAssignor.ORDER);
        s.addAll(Set.of(tasks));
        return s;
    }

    /** Every stateful task's changelog holds 1,000 records; every member reports, none has a copy. */
    static WarmupTasks.Progress nothingReported() {
        return new WarmupTasks.Progress(Map.of("a", Map.of(), "b", Map.of(), "c", Map.of()),
                Map.of(S0, 1_000L, S1, 1_000L, S2, 1_000L), 100);
    }

    @Test
    void aStatefulMoveToACopyBehindWaitsWhileStatelessAndSameProcessMovesGoAtOnce() {
        // a ran everything; the assignor gives b S0 and L0, and c (a's process) S1.
        WarmupTasks.Refined r = WarmupTasks.refine(
                Map.of("a", set(S2), "b", set(S0, L0), "c", set(S1)), Map.of("a", set(S0, S1, S2, L0)),
                Set.of("stateful"), Map.of("a", "p1", "c", "p1", "b", "p2"), nothingReported(), 2, Map.of());
        assertThat(r.active().get("a")).containsExactlyInAnyOrder(S0, S2);
        assertThat(r.active().get("b")).containsExactly(L0);
        assertThat(r.active().get("c")).as("same process: the state is on its disk").containsExactly(S1);
        assertThat(r.warmup().get("b")).containsExactly(S0);
        assertThat(r.warmup().get("a")).isEmpty();
    }

    @Test
    void aTaskWhoseOwnerLeftMovesAtOnceAndACaughtUpCopyTakesItsTask() {
        WarmupTasks.Refined gone = WarmupTasks.refine(Map.of("b", set(S0)), Map.of("a", set(S0)),
                Set.of("stateful"), Map.of(), nothingReported(), 2, Map.of());
        assertThat(gone.active().get("b")).as("a is no member any more").containsExactly(S0);

        WarmupTasks.Progress close = new WarmupTasks.Progress(Map.of("b", Map.of(S0, 950L, S1, 800L)),
                Map.of(S0, 1_000L, S1, 1_000L), 100);
        WarmupTasks.Refined r = WarmupTasks.refine(Map.of("a", set(), "b", set(S0, S1)), Map.of("a", set(S0, S1)),
                Set.of("stateful"), Map.of(), close, 2, Map.of());
        assertThat(r.active().get("b")).as("50 behind: caught up; 200 behind: not").containsExactly(S0);
        assertThat(r.warmup().get("b")).containsExactly(S1);
    }

    @Test
    void theBudgetGoesFirstToWarmUpsAlreadyRestoring() {
        Map<String, Set<TopicPartition>> ideal = Map.of("a", set(), "b", set(S0, S1, S2));
        Map<String, Set<TopicPartition>> previous = Map.of("a", set(S0, S1, S2));
        WarmupTasks.Refined first = WarmupTasks.refine(ideal, previous, Set.of("stateful"), Map.of(),
                nothingReported(), 1, Map.of());
        assertThat(first.warmup().get("b")).as("task order").containsExactly(S0);
        WarmupTasks.Refined kept = WarmupTasks.refine(ideal, previous, Set.of("stateful"), Map.of(),
                nothingReported(), 1, Map.of("b", set(S2)));
        assertThat(kept.warmup().get("b")).as("S2 was restoring already").containsExactly(S2);
        assertThat(kept.active().get("a")).containsExactlyInAnyOrder(S0, S1, S2);
    }

    @Test
    void aCopyIsCaughtUpWhenRunningOrWithinTheLagAndAMemberThatReportsNothingIsNotWaitedFor() {
        WarmupTasks.Progress p = new WarmupTasks.Progress(Map.of("b", Map.of(S0, WarmupTasks.LATEST, S1, -1L,
                L0, 10L)), Map.of(S0, 1_000L, S1, 50L, S2, 1_000L), 100);
        assertThat(p.caughtUp("b", S0)).as("runs it").isTrue();
        assertThat(p.caughtUp("b", S1)).as("no copy, but a changelog of 50").isTrue();
        assertThat(p.caughtUp("b", S2)).as("no copy of 1,000").isFalse();
        assertThat(p.caughtUp("b", L0)).as("a copy, no end reported").isTrue();
        assertThat(p.caughtUp("b", new TopicPartition("stateful", 9))).as("no copy, no end known").isFalse();
        assertThat(p.caughtUp("old-client", S2)).as("reports no offsets: cannot be waited for").isTrue();
    }
}
