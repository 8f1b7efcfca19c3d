package io.tierlog.service.read;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one read path of the service, tier-agnostic: fetch, offset lookup and partition extent. Today it asks
 * the hot tier only; the cold tier plugs in here (offsets below {@code hotStartOffset} are served from the
 * bucket), so resources, long-polls, streams and consumer groups never know which tier answered.
 *
 * <p>Range rule (api.md): an offset is fetchable when it lies in {@code [logStartOffset, highWatermark]};
 * anything else is {@code offset-out-of-range} carrying both bounds.
 *
 * <p>Thread-safe.
 */
public final class PartitionReads {
    private final HotTier hot;

    public PartitionReads(HotTier hot) {
        this.hot = hot;
    }

    public HotTier hot() {
        return hot;
    }

    public long highWatermark(TopicPartition tp) {
        return hot.highWatermark(tp);
    }

    public long logStartOffset(TopicPartition tp) {
        return hot.stats(tp).startOffset();
    }

    public PartitionState state(TopicPartition tp) {
        long hw = hot.highWatermark(tp);
        HotTier.HotStats stats = hot.stats(tp);
        long start = Math.min(stats.startOffset(), hw);
        return new PartitionState(tp.partition(), start, start, hw, stats.bytes(), 0, stats.segments(), 0);
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
        long hw = hot.highWatermark(tp);
        long start = Math.min(hot.stats(tp).startOffset(), hw);
        requireInRange(tp, offset, start, hw);
        if (offset == hw) {
            return new FetchResult(List.of(), offset, hw, start);
        }
        try {
            var read = hot.read(tp, offset, maxRecords, maxBytes);
            return new FetchResult(read.records(), read.nextOffset(), Math.max(hw, read.nextOffset()), start);
        } catch (IllegalArgumentException e) {
            // Retention removed the segment between the range check and the read: answer with the new bounds.
            long newStart = hot.stats(tp).startOffset();
            throw outOfRange(tp, offset, newStart, hot.highWatermark(tp));
        }
    }

    /** The first offset with a timestamp {@code >= timestamp}, or the high watermark when there is none. */
    public long offsetForTimestamp(TopicPartition tp, long timestamp) {
        long hw = hot.highWatermark(tp);
        return hot.offsetForTimestamp(tp, timestamp).orElse(hw);
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
