package io.tierlog.service.read;

import io.tierlog.log.BatchRead;
import io.tierlog.log.BatchSlice;
import io.tierlog.log.ErrorType;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.OffsetRange;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.Position;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.tiering.OffsetAndTimestamp;
import io.tierlog.tiering.PartitionTiers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The one read path of the service, tier-agnostic: fetch, offset lookup and partition extent. It is the one place
 * that decides which tier serves a read: offsets at or above the oldest hot segment are read hot ({@link HotTier}),
 * below it from the cold tier ({@link ColdTier}); a read never spans the boundary and the next one continues from
 * {@code nextOffset}, so resources, long-polls, streams and consumer groups never know which tier answered, and a
 * replay crosses cold, hot and live with no gap or duplicate.
 *
 * <p>Range rule (api.md): an offset is fetchable when it lies in {@code [logStartOffset, highWatermark]};
 * anything else is {@code offset-out-of-range} carrying both bounds.
 *
 * <p>Thread-safe.
 */
public final class PartitionReads {
    /** Kafka's ListOffsets timestamp when no record matches. */
    public static final long NO_TIMESTAMP = -1;
    /** Times a hot segment evicted under a read is looked for again before the failure propagates. */
    private static final int ROUTE_ATTEMPTS = 3;
    /** The bytes one read of {@link #abortedBatches} holds at a time. */
    private static final int ABORTED_SCAN_BYTES = 4 * 1024 * 1024;
    private final HotTier hot;
    private final ColdTier cold;
    private final ReadMemory memory;
    private final LogStartMarks marks;

    /**
     * @param memory where batch fetches put their bytes
     * @param marks  log starts moved by deleting records: below one, nothing is read from either tier
     */
    public PartitionReads(HotTier hot, ColdTier cold, ReadMemory memory, LogStartMarks marks) {
        this.hot = hot;
        this.cold = cold;
        this.memory = memory;
        this.marks = marks;
    }

    public HotTier hot() {
        return hot;
    }

    public long highWatermark(TopicPartition tp) {
        return hot.highWatermark(tp);
    }

    /** The first offset of the partition's oldest open transaction, or the high watermark (Kafka's last stable offset). */
    public long lastStableOffset(TopicPartition tp) {
        // The high watermark first: every open transaction below it is in the index read after it.
        long hw = highWatermark(tp);
        return hot.log().transactions(tp).lastStableOffset(hw);
    }

    public long logStartOffset(TopicPartition tp) {
        return logStartOffset(tp, hot.segmentBases(tp));
    }

    /** @param hotBases the hot segment bases as just listed (all of them: see {@link ColdTier#tiers}) */
    private long logStartOffset(TopicPartition tp, List<Long> hotBases) {
        return Math.max(cold.tiers(tp, hotBases).logStartOffset(), marks.markOf(tp));
    }

    /**
     * Deletes the partition's records below {@code offset} (Kafka's DeleteRecords): the log start moves there for
     * every reader on the volume, durably, and never back. {@code offset} -1 is the high watermark.
     *
     * @return the log start after the call
     * @throws TierlogException {@code offset-out-of-range} for an offset above the high watermark (or below -1);
     *                          nothing changes
     */
    public long deleteRecordsBefore(TopicPartition tp, long offset) {
        long hw = hot.highWatermark(tp);
        long target = offset == -1 ? hw : offset;
        if (target < 0 || target > hw) {
            throw outOfRange(tp, offset, logStartOffset(tp), hw);
        }
        long start = logStartOffset(tp);
        if (target <= start) {
            return start; // already gone: nothing to write
        }
        return marks.advance(tp, target);
    }

    public PartitionState state(TopicPartition tp) {
        long hw = hot.highWatermark(tp);
        HotTier.HotStats stats = hot.stats(tp);
        long hotStart = Math.min(stats.startOffset(), hw);
        PartitionTiers tiers = cold.tiers(tp, hot.segmentBases(tp));
        long start = Math.max(tiers.logStartOffset(), marks.markOf(tp));
        return new PartitionState(tp.partition(), Math.min(start, hw), Math.min(Math.max(hotStart, start), hw), hw,
                stats.bytes(), tiers.coldBytes(), stats.segments(), tiers.coldSegments());
    }

    /**
     * The first record with the largest timestamp among the hot tier's records below {@code endOffset} (Kafka's
     * ListOffsets MAX_TIMESTAMP, which looks at a broker's local log), or empty.
     */
    public Optional<OffsetAndTimestamp> maxTimestamp(TopicPartition tp, long endOffset) {
        return hot.maxTimestamp(tp, endOffset);
    }

    /**
     * The highest offset the cold tier holds, -1 when nothing was tiered (Kafka's ListOffsets
     * {@code LATEST_TIERED_TIMESTAMP}, KIP-1005). It stays when retention deletes cold segments, as Kafka's does.
     */
    public long latestTieredOffset(TopicPartition tp) {
        return cold.tiers(tp, hot.segmentBases(tp)).coldEnd() - 1;
    }

    /**
     * The first offset the cold tier does not hold yet (Kafka's ListOffsets {@code EARLIEST_PENDING_UPLOAD_TIMESTAMP},
     * KIP-1023): the offset after the cold tier's last, never below the log start (the log start while nothing was
     * tiered), at most the high watermark.
     */
    public long earliestPendingUploadOffset(TopicPartition tp) {
        long hw = hot.highWatermark(tp);
        PartitionTiers tiers = cold.tiers(tp, hot.segmentBases(tp));
        long start = Math.max(tiers.logStartOffset(), marks.markOf(tp));
        return Math.min(Math.max(tiers.coldEnd(), start), hw);
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
        Routed<ReadResult> r = routed(tp, offset, false,
                (end, listed) -> hot.read(tp, offset, maxRecords, maxBytes),
                () -> cold.read(tp, offset, maxRecords, maxBytes),
                () -> new ReadResult(List.of(), offset), ReadResult::nextOffset, read -> { });
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
        return fetchBatches(tp, offset, maxRecords, maxBytes, false);
    }

    /**
     * As {@link #fetchBatches(TopicPartition, long, int, int)}; {@code latestEnd}: bounded by the end as it is now,
     * never by a recent one ({@link HotTier#recentEnd}), as a read_committed read must be: held back by an open
     * transaction, it waits for the end to move past the one it was told, which a recent end already has.
     */
    public BatchFetch fetchBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, boolean latestEnd) {
        Routed<BatchRead> r = routed(tp, offset, latestEnd,
                (end, listed) -> hot.readBatches(tp, offset, maxRecords, maxBytes, memory),
                () -> cold.readBatches(tp, offset, maxRecords, maxBytes, memory),
                () -> BatchRead.empty(offset), BatchRead::nextOffset, BatchRead::close);
        return new BatchFetch(r.read(), null, Math.max(r.highWatermark(), r.read().nextOffset()), r.logStartOffset(),
                r.cold());
    }

    /**
     * As {@link #fetchBatches}, as a read_committed reader sees the partition (Kafka's isolation level, for HTTP
     * readers): the batches end at the last stable offset ({@link #cutAtLastStableOffset}), and the data batches of
     * aborted transactions are left out, hot or cold ({@link #abortedTransactions}). Markers stay, as in every batch
     * read. The caller closes the result's fetch.
     *
     * @throws TierlogException {@code offset-out-of-range} outside {@code [logStartOffset, highWatermark]}
     */
    public CommittedFetch fetchCommitted(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        CommittedFetch cut = cutAtLastStableOffset(tp, fetchBatches(tp, offset, maxRecords, maxBytes, true));
        BatchFetch f = cut.fetch();
        try {
            if (!f.isEmpty()) {
                f = f.withoutAborted(abortedTransactions(tp, f, offset, f.nextOffset()), offset);
            }
            return new CommittedFetch(f, cut.lastStableOffset());
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /**
     * {@code f} cut at the partition's last stable offset (the first offset of its oldest open transaction), as
     * read_committed readers are served, over Kafka and HTTP alike. The result owns what {@code f} held.
     */
    public CommittedFetch cutAtLastStableOffset(TopicPartition tp, BatchFetch f) {
        try {
            // The high watermark was read before the transaction index: every open transaction below it is in the
            // index (its BEGIN is written before its first batch).
            long stable = hot.log().transactions(tp).lastStableOffset(f.highWatermark());
            return new CommittedFetch(f.truncatedBefore(stable), stable);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /**
     * As {@link #fetchBatches}, but a hot read comes back as a range of its segment file ({@link BatchFetch#slice}),
     * found from the batch headers below the visible end the index checked, and not read: for a server that sends
     * it with {@code sendfile} and leaves the CRC check to its client, as Kafka's broker does (the Kafka listener,
     * ADR 0037). A cold read, or a hot one whose headers do not lead to a batch cleanly, is read into memory and
     * checked as by {@link #fetchBatches}. The caller closes the result.
     *
     * @param latestEnd as for {@link #fetchBatches(TopicPartition, long, int, int, boolean)}
     * @throws TierlogException {@code offset-out-of-range} outside {@code [logStartOffset, highWatermark]}
     */
    public BatchFetch fetchSlices(TopicPartition tp, long offset, int maxRecords, int maxBytes, boolean latestEnd) {
        Routed<BatchFetch> r = routed(tp, offset, latestEnd,
                (end, listed) -> {
                    BatchSlice slice = hot.sliceBatches(tp, offset, maxRecords, maxBytes, end, listed);
                    return slice != null ? new BatchFetch(BatchRead.empty(offset), slice, -1, -1)
                            : new BatchFetch(hot.readBatches(tp, offset, maxRecords, maxBytes, memory), -1, -1);
                },
                () -> new BatchFetch(cold.readBatches(tp, offset, maxRecords, maxBytes, memory), -1, -1),
                () -> new BatchFetch(BatchRead.empty(offset), -1, -1), BatchFetch::nextOffset, BatchFetch::close);
        BatchFetch read = r.read();
        return new BatchFetch(read.batches(), read.slice(), Math.max(r.highWatermark(), read.nextOffset()),
                r.logStartOffset(), r.cold());
    }

    /**
     * The aborted transactions a read_committed fetch of {@code [fromOffset, toOffsetExclusive)} tells its consumer
     * (Kafka's FetchResponse {@code aborted_transactions}, ordered by first offset): the hot transaction index's,
     * and for a read the cold tier served also those in the sidecars of the cold segments it read, since the hot
     * index drops a transaction once its segments left the hot tier ({@link io.tierlog.log.HotLog#trimTransactionIndex}).
     */
    public List<AbortedTransaction> abortedTransactions(TopicPartition tp, BatchFetch f, long fromOffset,
                                                        long toOffsetExclusive) {
        List<AbortedTransaction> hotAborted = hot.log().transactions(tp).aborted(fromOffset, toOffsetExclusive);
        return f.cold() ? PartitionTransactions.union(hotAborted,
                cold.abortedTransactions(tp, fromOffset, toOffsetExclusive)) : hotAborted;
    }

    /**
     * The data batches of aborted transactions among {@code [fromOffset, toOffsetExclusive)}, hot or cold, ascending:
     * what a read_committed reader never sees (a share group at read_committed passes over them). Reads the batches
     * only when the range reaches below the hot tier or the hot transaction index has an aborted transaction in it.
     */
    public List<OffsetRange> abortedBatches(TopicPartition tp, long fromOffset, long toOffsetExclusive) {
        long oldestHot = hot.oldestSegmentBase(tp);
        if (oldestHot >= 0 && fromOffset >= oldestHot
                && hot.log().transactions(tp).aborted(fromOffset, toOffsetExclusive).isEmpty()) {
            return List.of();
        }
        List<OffsetRange> out = new ArrayList<>();
        long offset = fromOffset;
        while (offset < toOffsetExclusive) {
            try (BatchFetch f = fetchBatches(tp, offset, (int) Math.min(toOffsetExclusive - offset, Integer.MAX_VALUE),
                    ABORTED_SCAN_BYTES)) {
                if (f.isEmpty()) {
                    break;
                }
                out.addAll(f.batches().abortedBatches(abortedTransactions(tp, f, offset, f.nextOffset())));
                offset = f.nextOffset();
            }
        }
        return out;
    }

    /** A read, the partition's extent sampled before it, and whether the cold tier served it. */
    private record Routed<R>(R read, long highWatermark, long logStartOffset, boolean cold) {
    }

    /**
     * The range check, the choice of tier and the error translation shared by record and batch fetches. The tier is
     * decided here, once, from one listing of the partition's hot segments (the same that gives the log start):
     * at or above the oldest hot segment the hot reader serves the read, below it the cold reader. Only when
     * retention evicts the hot segment under the read is the listing taken again, and the read then goes cold.
     *
     * <p>The end bounding the read: below an end found within the last second ({@link HotTier#recentEnd}), that end,
     * which the answer reports as the high watermark; an answer that reaches it is given back and read again at the
     * end as it is now, so an answer never reports its reader at an end it is not at. At or above it, or with
     * {@code latestEnd}, the end as it is now.
     *
     * @param nextOffset where a read ends; {@code release} gives back what a read holds
     */
    private <R> Routed<R> routed(TopicPartition tp, long offset, boolean latestEnd,
                                 BiFunction<Position, List<Long>, R> hotRead, Supplier<R> coldRead, Supplier<R> atEnd,
                                 ToLongFunction<R> nextOffset, Consumer<R> release) {
        Position recent = latestEnd ? null : hot.recentEnd(tp, offset);
        if (recent != null) {
            Routed<R> r = readWithin(tp, offset, recent, hotRead, coldRead, atEnd);
            if (nextOffset.applyAsLong(r.read()) < recent.offset()) {
                return r;
            }
            release.accept(r.read());
        }
        return readWithin(tp, offset, hot.end(tp), hotRead, coldRead, atEnd);
    }

    /** {@link #routed}'s read below {@code end}. */
    private <R> Routed<R> readWithin(TopicPartition tp, long offset, Position end,
                                     BiFunction<Position, List<Long>, R> hotRead, Supplier<R> coldRead,
                                     Supplier<R> atEnd) {
        long hw = end.offset();
        List<Long> hotBases = hot.segmentBases(tp, end);
        long oldestHot = hotBases.isEmpty() ? -1 : hotBases.get(0);
        long start = Math.min(logStartOffset(tp, hotBases), hw);
        requireInRange(tp, offset, start, hw);
        if (offset == hw) {
            return new Routed<>(atEnd.get(), hw, start, false);
        }
        try {
            // The listing is the hot read's too (it names the end's segment), on the first attempt only: a retry
            // after an eviction lists again.
            boolean[] first = {true};
            boolean[] servedCold = {false};
            R read = readTier(tp, offset, oldestHot, () -> {
                List<Long> listed = first[0] ? hotBases : null;
                first[0] = false;
                return hotRead.apply(end, listed);
            }, () -> {
                servedCold[0] = true;
                return coldRead.get();
            });
            return new Routed<>(read, hw, start, servedCold[0]);
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

    /**
     * Reads from the tier holding {@code offset}: hot when the oldest hot segment is at or below it (cheaper), else
     * cold. A read never spans the boundary; the next read (from {@code nextOffset}) continues in the other tier, so
     * a replay crosses cold to hot with no gap or duplicate. A hot segment evicted while being read (it is in the
     * cold tier by then) sends the read to the tier that holds the offset now.
     *
     * @param oldestHot the oldest hot segment's base offset as just listed, or -1 if there is none
     */
    private <R> R readTier(TopicPartition tp, long offset, long oldestHot, Supplier<R> hotRead, Supplier<R> coldRead) {
        for (int attempt = 1; ; attempt++) {
            if (oldestHot < 0 || offset < oldestHot) {
                return coldRead.get();
            }
            try {
                return hotRead.get();
            } catch (PartitionReader.SegmentGoneException | IllegalArgumentException e) {
                if (attempt >= ROUTE_ATTEMPTS) {
                    throw e;
                }
                oldestHot = hot.oldestSegmentBase(tp);
            }
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
        // Cold segments hold the older records, so a cold match is the first one (checked against the manifest's
        // timestamps in memory first: no store request unless a cold segment can match).
        long start = logStartOffset(tp);
        var found = cold.offsetForTimestamp(tp, timestamp);
        if (found.isPresent() && found.get().offset() >= start) {
            return found.get();
        }
        OffsetAndTimestamp hotFound = hot.firstAtOrAfter(tp, timestamp).orElse(new OffsetAndTimestamp(hw, NO_TIMESTAMP));
        // A first match among deleted records answers the log start (its timestamp unknown), as the next record kept.
        return hotFound.offset() < start ? new OffsetAndTimestamp(start, NO_TIMESTAMP) : hotFound;
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
