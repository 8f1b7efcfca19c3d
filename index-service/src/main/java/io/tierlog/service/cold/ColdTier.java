package io.tierlog.service.cold;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tierlog.log.BatchRead;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.tiering.PartitionTiers;
import io.tierlog.tiering.TieredStorage;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The cold tier as the service's read path sees it: routes a read to the tier holding its offset (timing the
 * cold ones), answers a partition's tiers, finds timestamps in cold segments and deletes a topic's objects.
 * A thin adapter over {@link TieredStorage}; thread-safe.
 */
public final class ColdTier {
    private final TieredStorage storage;
    private final Timer coldReads;

    public ColdTier(TieredStorage storage, MeterRegistry registry) {
        this.storage = storage;
        this.coldReads = Timer.builder("tierlog_cold_read")
                .description("Latency of reads served from the cold tier (ranged GETs through the chunk cache)")
                .publishPercentileHistogram()
                .register(registry);
    }

    public TieredStorage storage() {
        return storage;
    }

    /** Reads from the tier holding {@code offset}; see {@link TieredStorage#read}. */
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes, TieredStorage.HotRead hot) {
        return timed(hotServed -> storage.read(tp, offset, maxRecords, maxBytes, (o, n, b) -> {
            hotServed.run();
            return hot.read(o, n, b);
        }));
    }

    /** Whole batches from the tier holding {@code offset}; see {@link TieredStorage#readBatches}. */
    public BatchRead readBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, ReadMemory memory,
                                 TieredStorage.TierRead<BatchRead> hot) {
        return timed(hotServed -> storage.readBatches(tp, offset, maxRecords, maxBytes, memory, (o, n, b) -> {
            hotServed.run();
            return hot.read(o, n, b);
        }));
    }

    /** Runs a routed read (given a callback its hot read calls), timing it as a cold read unless the hot tier served it. */
    private <T> T timed(Function<Runnable, T> read) {
        long started = System.nanoTime();
        boolean[] hotServed = {false};
        T result = read.apply(() -> hotServed[0] = true);
        if (!hotServed[0]) {
            coldReads.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
        return result;
    }

    /** @param oldestHotBase the oldest hot segment's base offset, or -1 if the partition has no hot segment */
    public PartitionTiers tiers(TopicPartition tp, long oldestHotBase) {
        return storage.tiers(tp, oldestHotBase < 0 ? List.of() : List.of(oldestHotBase));
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
