package io.tierlog.service.cold;

import io.micrometer.core.instrument.Timer;
import io.tierlog.log.BatchRead;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.service.metrics.Meters;
import io.tierlog.tiering.ColdReader;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.tiering.PartitionTiers;
import io.tierlog.tiering.TieredStorage;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The cold tier as the service's read path sees it: reads below the hot tier (timed), a partition's tiers,
 * timestamps in cold segments, and the deletion of a topic's objects. Which tier serves a read is decided by
 * {@link io.tierlog.service.read.PartitionReads}, not here. A thin adapter over {@link TieredStorage}; thread-safe.
 */
public final class ColdTier {
    private final TieredStorage storage;
    private final Timer coldReads;

    public ColdTier(TieredStorage storage, Meters meters) {
        this.storage = storage;
        this.coldReads = meters.coldReads();
    }

    public TieredStorage storage() {
        return storage;
    }

    /**
     * Records from {@code offset}, which the caller has found below the hot tier; see {@link ColdReader#read}.
     * Timed as {@code tierlog_cold_read}.
     */
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        return timed(() -> storage.reader().read(tp, offset, maxRecords, maxBytes));
    }

    /** Whole batches from {@code offset}, below the hot tier, copied into {@code memory}; see {@link ColdReader#readBatches}. */
    public BatchRead readBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, ReadMemory memory) {
        return timed(() -> storage.reader().readBatches(tp, offset, maxRecords, maxBytes, memory));
    }

    /**
     * The aborted transactions the cold segments' sidecars list for {@code [fromOffset, toOffsetExclusive)}; see
     * {@link ColdReader#abortedTransactions}.
     */
    public List<AbortedTransaction> abortedTransactions(TopicPartition tp, long fromOffset, long toOffsetExclusive) {
        return storage.reader().abortedTransactions(tp, fromOffset, toOffsetExclusive);
    }

    private <T> T timed(Supplier<T> read) {
        long started = System.nanoTime();
        T result = read.get();
        coldReads.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        return result;
    }

    /** @param hotBases all of the partition's hot segment bases, ascending, as just listed (empty: none) */
    public PartitionTiers tiers(TopicPartition tp, List<Long> hotBases) {
        return storage.tiers(tp, hotBases);
    }

    public Optional<OffsetAndTimestamp> offsetForTimestamp(TopicPartition tp, long timestamp) {
        return storage.reader().offsetForTimestamp(tp, timestamp);
    }

    public void deleteTopicDescriptor(String topic) {
        storage.deleteTopicDescriptor(topic);
    }

    public int deleteTopic(String topic) {
        return storage.deleteTopic(topic);
    }
}
