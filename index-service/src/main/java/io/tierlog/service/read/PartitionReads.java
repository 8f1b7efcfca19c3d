package io.tierlog.service.read;

import io.tierlog.log.BatchRead;
import io.tierlog.log.ErrorType;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.tiering.PartitionTiers;
import io.tierlog.tiering.TieredStorage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The one read path of the service, tier-agnostic: fetch, offset lookup and partition extent. Offsets at or above
 * the oldest hot segment are read hot; below it, from the cold tier ({@link ColdTier}); a read never spans the
 * boundary and the next one continues from {@code nextOffset}, so resources, long-polls, streams and consumer
 * groups never know which tier answered, and a replay crosses cold, hot and live with no gap or duplicate.
 *
 * <p>Range rule (api.md): an offset is fetchable when it lies in {@code [logStartOffset, highWatermark]};
 * anything else is {@code offset-out-of-range} carrying both bounds.
 *
 * <p>Thread-safe.
 */
public final class PartitionReads {
    /** Kafka's ListOffsets timestamp when no record matches. */
    public static final long NO_TIMESTAMP = -1;
    private final HotTier hot;
    /** Null when the service runs without a cold tier (hot-only tests). */
    private final ColdTier cold;
    private final ReadMemory memory;

    public PartitionReads(HotTier hot) {
        this(hot, null, ReadMemory.HEAP);
    }

    /** @param memory where batch fetches put their bytes */
    public PartitionReads(HotTier hot, ColdTier cold, ReadMemory memory) {
        this.hot = hot;
        this.cold = cold;
        this.memory = memory;
    }

    public HotTier hot() {
        return hot;
    }

    public long highWatermark(TopicPartition tp) {
        return hot.highWatermark(tp);
    }

    public long logStartOffset(TopicPartition tp) {
        long oldestHot = hot.oldestSegmentBase(tp);
        if (cold == null) {
            return Math.max(oldestHot, 0);
        }
        return cold.tiers(tp, oldestHot).logStartOffset();
    }

    public PartitionState state(TopicPartition tp) {
        long hw = hot.highWatermark(tp);
        HotTier.HotStats stats = hot.stats(tp);
        long hotStart = Math.min(stats.startOffset(), hw);
        if (cold == null) {
            return new PartitionState(tp.partition(), hotStart, hotStart, hw, stats.bytes(), 0, stats.segments(), 0);
        }
        PartitionTiers tiers = cold.tiers(tp, stats.segments() == 0 ? -1 : stats.startOffset());
        return new PartitionState(tp.partition(), Math.min(tiers.logStartOffset(), hw), hotStart, hw, stats.bytes(),
                tiers.coldBytes(), stats.segments(), tiers.coldSegments());
    }

    public List<PartitionState> states(TopicMetadata topic) {
        List<PartitionState> out = new ArrayList<>(topic.partitions());
        for (int p = 0; p < topic.partitions(); p++) {
            out.add(state(new TopicPartition(topic.name(), p)));
        }
        return out;
    }

    /**
     * Reads from {@code offset}. An empty result at {@code offset == highWatermark} is the caller's cue to
     * long-poll.
     *
     * @throws TierlogException {@code offset-out-of-range} outside {@code [logStartOffset, highWatermark]}
     */
    public FetchResult fetch(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        Routed<ReadResult> r = routed(tp, offset, maxRecords, maxBytes,
                (o, n, b) -> hot.read(tp, o, n, b),
                (o, n, b) -> cold.read(tp, o, n, b, (ho, hn, hb) -> hot.read(tp, ho, hn, hb)),
                () -> new ReadResult(List.of(), offset));
        // A record appended since the high watermark was sampled may be in the read: never answer an hw below it.
        return new FetchResult(r.read().records(), r.read().nextOffset(),
                Math.max(r.highWatermark(), r.read().nextOffset()), r.logStartOffset());
    }

    /**
     * Whole batches from {@code offset}, as stored (see {@link BatchRead}), under the same range rule and tier
     * routing as {@link #fetch}. Empty at {@code offset == highWatermark}. The batches are in this reader's
     * {@link ReadMemory}: the caller closes them once they are sent.
     *
     * @throws TierlogException {@code offset-out-of-range} outside {@code [logStartOffset, highWatermark]}
     */
    public BatchFetch fetchBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        Routed<BatchRead> r = routed(tp, offset, maxRecords, maxBytes,
                (o, n, b) -> hot.readBatches(tp, o, n, b, memory),
                (o, n, b) -> cold.readBatches(tp, o, n, b, memory,
                        (ho, hn, hb) -> hot.readBatches(tp, ho, hn, hb, memory)),
                () -> BatchRead.empty(offset));
        return new BatchFetch(r.read(), Math.max(r.highWatermark(), r.read().nextOffset()), r.logStartOffset());
    }

    /** A read and the partition's extent sampled before it. */
    private record Routed<R>(R read, long highWatermark, long logStartOffset) {
    }

    /** The range check, tier routing and error translation shared by record and batch fetches. */
    private <R> Routed<R> routed(TopicPartition tp, long offset, int maxRecords, int maxBytes,
                                 TieredStorage.TierRead<R> hotOnly, TieredStorage.TierRead<R> tiered,
                                 Supplier<R> atEnd) {
        long hw = hot.highWatermark(tp);
        long start = Math.min(logStartOffset(tp), hw);
        requireInRange(tp, offset, start, hw);
        if (offset == hw) {
            return new Routed<>(atEnd.get(), hw, start);
        }
        try {
            R read = (cold == null ? hotOnly : tiered).read(offset, maxRecords, maxBytes);
            return new Routed<>(read, hw, start);
        } catch (IllegalArgumentException e) {
            // Retention removed the segment between the range check and the read: answer with the new bounds.
            throw outOfRange(tp, offset, logStartOffset(tp), hot.highWatermark(tp));
        } catch (TierlogException e) {
            if (e.type() == ErrorType.OFFSET_OUT_OF_RANGE) {
                // Cold retention moved logStartOffset meanwhile; answer with both current bounds.
                throw outOfRange(tp, offset, logStartOffset(tp), hot.highWatermark(tp));
            }
            throw e;
        }
    }

    /** The first offset with a timestamp {@code >= timestamp}, or the high watermark when there is none. */
    public long offsetForTimestamp(TopicPartition tp, long timestamp) {
        return listOffset(tp, timestamp).offset();
    }

    /**
     * Kafka's ListOffsets by timestamp: the first record with a timestamp {@code >= timestamp}, as its offset and
     * its own timestamp, in either tier; {@code (highWatermark, -1)} when there is none.
     */
    public OffsetAndTimestamp listOffset(TopicPartition tp, long timestamp) {
        long hw = hot.highWatermark(tp);
        if (cold != null) {
            // Cold segments hold the older records, so a cold match is the first one (checked against the
            // manifest's timestamps in memory first: no store request unless a cold segment can match).
            var found = cold.offsetForTimestamp(tp, timestamp);
            if (found.isPresent() && found.get().offset() >= logStartOffset(tp)) {
                return found.get();
            }
        }
        return hot.firstAtOrAfter(tp, timestamp).orElse(new OffsetAndTimestamp(hw, NO_TIMESTAMP));
    }

    public static void requireInRange(TopicPartition tp, long offset, long start, long hw) {
        if (offset < start || offset > hw) {
            throw outOfRange(tp, offset, start, hw);
        }
    }

    public static TierlogException outOfRange(TopicPartition tp, long offset, long start, long hw) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("topic", tp.topic());
        extra.put("partition", tp.partition());
        extra.put("offset", offset);
        extra.put("logStartOffset", start);
        extra.put("highWatermark", hw);
        return new TierlogException(ErrorType.OFFSET_OUT_OF_RANGE, "offset " + offset + " of " + tp
                + " is outside [logStartOffset " + start + ", highWatermark " + hw + "]", extra);
    }
}
