package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BatchPositions} holds one contiguous run of the newest segment's batches, bounded: what it cannot vouch for
 * (another segment, a gap, batches it dropped, the log past its last batch) it answers null, so the reader walks.
 */
class BatchPositionsTest {
    private static final int SIZE = 100;

    /** Batch {@code i} of segment {@code base}: 2 records at {@code base + 2i}, {@value #SIZE} bytes at 100i. */
    private static BatchInfo batch(long base, int i) {
        return new BatchInfo(base, (long) i * SIZE, SIZE, base + 2L * i, base + 2L * i + 1, 0, -1, (short) -1, -1);
    }

    @Test
    void aSpanFollowsTheSlicingRule() {
        BatchPositions known = new BatchPositions(new BatchPositions.Budget(Long.MAX_VALUE));
        for (int i = 0; i < 10; i++) {
            known.add(batch(0, i));
        }
        // From the middle of batch 3, within 250 bytes: batches 3 and 4 (the first always, then while within), and
        // 50 bytes of batch 5, which does not fit.
        assertThat(known.span(0, 7, 1_000, 250, 1_000)).isEqualTo(
                new BatchPositions.Span(300, 200, 10, 3, 6, SIZE, 8, 400, SIZE, 50));
        assertThat(known.span(0, 7, 1_000, 1, 1_000).length()).as("the first batch whatever maxBytes").isEqualTo(SIZE);
        assertThat(known.span(0, 7, 1_000, 1, 1_000).partialBatch()).as("nothing left of the limit").isZero();
        assertThat(known.span(0, 7, 2, 1_000, 1_000).nextOffset()).as("maxRecords").isEqualTo(10);
        assertThat(known.span(0, 7, 2, 1_000, 1_000).partialBatch()).as("not cut by bytes").isZero();
        assertThat(known.span(0, 0, 1_000, 1_000, 500).length()).as("never past the limit").isEqualTo(500);
        assertThat(known.span(0, 0, 1_000, 1_000, 500).partialBatch()).as("nor partly past it").isZero();
        assertThat(known.span(0, 0, 1_000, 10_000, 1_000).nextOffset()).isEqualTo(20);
        assertThat(known.span(0, 0, 1_000, 10_000, 1_100)).as("the log goes on past what it holds").isNull();
        assertThat(known.span(0, 20, 1_000, 10_000, 1_000)).as("at its end").isNull();
        assertThat(known.span(5, 7, 1_000, 10_000, 1_000)).as("another segment").isNull();
    }

    @Test
    void aBatchThatDoesNotContinueTheRunStartsANewOne() {
        BatchPositions known = new BatchPositions(new BatchPositions.Budget(Long.MAX_VALUE));
        for (int i = 0; i < 5; i++) {
            known.add(batch(0, i));
        }
        known.add(batch(0, 2)); // a retried catch-up walks them again
        assertThat(known.span(0, 0, 1_000, 10_000, 500).nextOffset()).isEqualTo(10);
        known.add(new BatchInfo(0, 150, SIZE, 4, 5, 0, -1, (short) -1, -1)); // another log at that offset
        assertThat(known.span(0, 0, 1_000, 10_000, 500)).isNull();
        for (int i = 0; i < 5; i++) {
            known.add(batch(0, i));
        }
        assertThat(known.span(0, 0, 1_000, 10_000, 500).nextOffset()).isEqualTo(10);
        known.add(batch(0, 7)); // a gap: batches 5 and 6 were not seen
        assertThat(known.span(0, 0, 1_000, 10_000, 500)).isNull();
        assertThat(known.span(0, 14, 1_000, 10_000, 800).length()).isEqualTo(SIZE);
        known.add(new BatchInfo(16, 0, SIZE, 16, 17, 0, -1, (short) -1, -1)); // rolled
        assertThat(known.span(0, 14, 1_000, 10_000, 800)).isNull();
        assertThat(known.span(16, 16, 1_000, 10_000, SIZE).nextOffset()).isEqualTo(18);
        known.clear();
        assertThat(known.span(16, 16, 1_000, 10_000, SIZE)).isNull();
    }

    @Test
    void aFullMapKeepsItsNewerHalf() {
        BatchPositions known = new BatchPositions(new BatchPositions.Budget(Long.MAX_VALUE));
        int added = BatchPositions.MAX_BATCHES + 1;
        for (int i = 0; i < added; i++) {
            known.add(batch(0, i));
        }
        long end = (long) added * SIZE;
        assertThat(known.span(0, 0, 1_000, SIZE, end)).as("dropped").isNull();
        int oldestKept = added - 1 - BatchPositions.MAX_BATCHES / 2;
        assertThat(known.span(0, 2L * oldestKept, 1_000, SIZE, end).position()).isEqualTo((long) oldestKept * SIZE);
        assertThat(known.span(0, 2L * oldestKept - 1, 1_000, SIZE, end)).isNull();
    }

    @Test
    void theMapsOfOneBudgetHoldNoMoreThanItTogether() {
        BatchPositions.Budget budget = new BatchPositions.Budget(300);
        BatchPositions first = new BatchPositions(budget);
        BatchPositions second = new BatchPositions(budget);
        for (int i = 0; i < 1_000; i++) {
            first.add(batch(0, i));
        }
        assertThat(budget.left()).isEqualTo(300 - 256);
        assertThat(first.holds(2 * 999)).as("the newest").isTrue();
        assertThat(first.holds(2 * (999 - 256))).as("no more than its 256").isFalse();
        second.add(batch(0, 0));
        assertThat(second.holds(0)).as("no room left").isFalse();
        assertThat(second.span(0, 0, 1_000, 10_000, SIZE)).isNull();
        first.release();
        first.add(batch(0, 1_000)); // a catch-up still adding after the release takes nothing
        assertThat(budget.left()).isEqualTo(300);
        second.add(batch(0, 0));
        assertThat(second.span(0, 0, 1_000, 10_000, SIZE).nextOffset()).isEqualTo(2);
    }
}
