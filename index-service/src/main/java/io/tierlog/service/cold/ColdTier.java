package io.tierlog.service.cold;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.tiering.PartitionTiers;
import io.tierlog.tiering.TieredStorage;

import java.util.List;
import java.util.Optional;

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
        long started = System.nanoTime();
        boolean[] hotServed = {false};
        ReadResult result = storage.read(tp, offset, maxRecords, maxBytes, (o, n, b) -> {
            hotServed[0] = true;
            return hot.read(o, n, b);
        });
        if (!hotServed[0]) {
            coldReads.record(System.nanoTime() - started, java.util.concurrent.TimeUnit.NANOSECONDS);
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
