package io.tierlog.log.internal.producer;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Expiry of idempotent producers: remembered for the expiration after they were last seen, then forgotten. */
class ProducerStateTableTest {
    private static final long EXPIRATION_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L;

    private final ProducerStateTable table = new ProducerStateTable(Duration.ofMillis(EXPIRATION_MS));

    @Test
    void aRetryIsADuplicateUntilTheProducerExpiresAndAFirstRequestAfter() {
        table.apply(batch(7, 0, 0, 1, T0), T0);

        assertThat(table.check(request(7, 0), 2, T0 + EXPIRATION_MS - 1))
                .isEqualTo(new ProducerStateTable.Duplicate(new ProducerStateTable.AppendedBatch(0, 1, 0, 1)));
        assertThat(table.check(request(7, 5), 1, T0 + EXPIRATION_MS - 1))
                .isEqualTo(new ProducerStateTable.OutOfOrder(2));
        // Forgotten: any sequence is a first request again, and the entry is gone.
        assertThat(table.check(request(7, 5), 1, T0 + EXPIRATION_MS)).isEqualTo(new ProducerStateTable.Append());
        assertThat(table.size()).isZero();
    }

    @Test
    void eachBatchRenewsTheProducer() {
        table.apply(batch(7, 0, 0, 0, T0), T0);
        table.apply(batch(7, 1, 1, 1, T0), T0 + EXPIRATION_MS - 1);

        assertThat(table.expire(T0 + EXPIRATION_MS)).isZero();
        assertThat(table.check(request(7, 1), 1, T0 + 2 * EXPIRATION_MS - 2))
                .isInstanceOf(ProducerStateTable.Duplicate.class);
    }

    @Test
    void expireForgetsOnlyTheIdleProducers() {
        table.apply(batch(1, 0, 0, 0, T0), T0);
        table.apply(batch(2, 0, 1, 1, T0), T0 + 30_000);
        table.apply(batch(3, 0, 2, 2, T0), T0 + 59_999);

        assertThat(table.expire(T0 + EXPIRATION_MS + 30_000)).isEqualTo(2);
        assertThat(table.entries()).containsOnlyKeys(3L);
    }

    @Test
    void lastSeenIsTheWritersClockNotTheBatchTimestamp() {
        // A producer backfilling week-old events: its batches carry old CreateTime timestamps.
        long weekAgo = T0 - Duration.ofDays(7).toMillis();
        table.apply(batch(7, 0, 0, 0, weekAgo), T0);

        assertThat(table.check(request(7, 0), 1, T0 + 1)).isInstanceOf(ProducerStateTable.Duplicate.class);
        assertThat(table.entries().get(7L).lastSeenMs()).isEqualTo(T0);
    }

    @Test
    void aCheckpointEntryWithoutALastSightingCountsAsSeenWhenLoaded() {
        Map<Long, ProducerStateTable.Entry> old = Map.of(
                7L, new ProducerStateTable.Entry((short) 0, ProducerStateTable.UNKNOWN_LAST_SEEN, false,
                        List.of(new ProducerStateTable.AppendedBatch(3, 5, 10, 12))),
                8L, new ProducerStateTable.Entry((short) 0, T0 - EXPIRATION_MS, false,
                        List.of(new ProducerStateTable.AppendedBatch(0, 0, 13, 13))));

        table.load(old, T0);

        assertThat(table.entries()).containsOnlyKeys(7L);
        assertThat(table.entries().get(7L).lastSeenMs()).isEqualTo(T0);
        assertThat(table.check(request(7, 3), 3, T0 + EXPIRATION_MS - 1)).isInstanceOf(ProducerStateTable.Duplicate.class);
    }

    @Test
    void aSequenceCountsRecordsAsInKafka() {
        table.apply(batch(7, 0, 0, 2, T0), T0); // three records: sequences 0, 1, 2

        assertThat(table.check(request(7, 1), 1, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(3));
        assertThat(table.check(request(7, 4), 1, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(3));
        assertThat(table.check(request(7, 3), 5, T0)).isEqualTo(new ProducerStateTable.Append());
        // A duplicate is a batch with the same first and last sequence; same first sequence, other count, is not.
        assertThat(table.check(request(7, 0), 3, T0)).isInstanceOf(ProducerStateTable.Duplicate.class);
        assertThat(table.check(request(7, 0), 2, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(3));
    }

    @Test
    void aNewEpochStartsAtSequenceZeroAndFencesTheOld() {
        table.apply(batch(7, 0, 0, 0, T0), T0);

        assertThat(table.check(new ProducerIdentity(7, (short) 1, 5), 1, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(0));
        assertThat(table.check(new ProducerIdentity(7, (short) 1, 0), 1, T0)).isEqualTo(new ProducerStateTable.Append());
        table.apply(new BatchInfo(0, 0, 100, 1, 1, T0, 7, (short) 1, 0), T0);
        assertThat(table.check(request(7, 1), 1, T0)).isEqualTo(new ProducerStateTable.Fenced((short) 1));
    }

    @Test
    void sequencesWrapFromIntegerMaxValueToZero() {
        assertThat(ProducerStateTable.incrementSequence(Integer.MAX_VALUE, 1)).isZero();
        assertThat(ProducerStateTable.incrementSequence(Integer.MAX_VALUE - 1, 3)).isEqualTo(1);
        // Three records from MAX-1: MAX-1, MAX, 0; the next batch starts at 1.
        table.apply(batch(7, Integer.MAX_VALUE - 1, 0, 2, T0), T0);
        assertThat(table.check(request(7, 1), 1, T0)).isEqualTo(new ProducerStateTable.Append());
        assertThat(table.check(request(7, Integer.MAX_VALUE - 1), 3, T0))
                .isEqualTo(new ProducerStateTable.Duplicate(
                        new ProducerStateTable.AppendedBatch(Integer.MAX_VALUE - 1, 0, 0, 2)));
    }

    @Test
    void aLegacyEntryAnswersRetriesAndTakesItsNextBatchAsANewStartOnce() {
        // From a checkpoint of per-request numbering: request 5 carried two records.
        table.load(Map.of(7L, new ProducerStateTable.Entry((short) 0, T0, true,
                List.of(new ProducerStateTable.AppendedBatch(5, 6, 10, 11)))), T0);

        assertThat(table.check(request(7, 5), 2, T0)).isInstanceOf(ProducerStateTable.Duplicate.class);
        assertThat(table.check(request(7, 6), 1, T0)).as("the old client's next request")
                .isEqualTo(new ProducerStateTable.Append());
        table.apply(batch(7, 6, 12, 12, T0), T0);
        assertThat(table.entries().get(7L).legacy()).isFalse();
        assertThat(table.check(request(7, 9), 1, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(7));
    }

    @Test
    void batchesReplayedWithoutAKnownCheckpointMakeTheirProducersLegacy() {
        table.replayingLegacy(true);
        table.apply(batch(7, 0, 0, 2, T0), T0);
        table.replayingLegacy(false);
        table.apply(batch(8, 0, 3, 5, T0), T0);

        assertThat(table.check(request(7, 1), 1, T0)).isEqualTo(new ProducerStateTable.Append());
        assertThat(table.check(request(8, 1), 1, T0)).isEqualTo(new ProducerStateTable.OutOfOrder(3));
    }

    @Test
    void theExpirationMustBePositive() {
        assertThatThrownBy(() -> new ProducerStateTable(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    private static ProducerIdentity request(long id, int sequence) {
        return new ProducerIdentity(id, (short) 0, sequence);
    }

    private static BatchInfo batch(long id, int sequence, long firstOffset, long lastOffset, long maxTimestamp) {
        return new BatchInfo(0, 0, 100, firstOffset, lastOffset, maxTimestamp, id, (short) 0, sequence);
    }
}
