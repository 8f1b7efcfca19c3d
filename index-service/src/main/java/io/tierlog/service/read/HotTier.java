package io.tierlog.service.read;

import io.tierlog.index.HotIndexer;
import io.tierlog.index.LogIndex;
import io.tierlog.log.AppendJournal;
import io.tierlog.log.BatchPositions;
import io.tierlog.log.BatchRead;
import io.tierlog.log.BatchSlice;
import io.tierlog.log.HotLog;
import io.tierlog.log.HotSegment;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.tiering.OffsetAndTimestamp;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;

/**
 * The hot tier as the read path sees it: a partition's visible end, records from an offset, the first offset at
 * a timestamp and the size of its hot segments, for appends made by any process on the hot volume.
 *
 * <p>It reads through the RocksDB index under {@code tierlog.index-dir}: every high-watermark query first
 * catches the index up with what any process appended ({@link HotIndexer#catchUp}), and reads start at the
 * index's hint, so a read scans at most {@code index.interval.bytes} plus whatever was appended since the last
 * catch-up. The index is derived: opened empty (first start, or its directory deleted), it is rebuilt from the
 * segments by the first catch-up of each partition.
 *
 * <p>A fetch reuses the partition's last listing of its hot segments ({@link #segmentBases(TopicPartition, Position)})
 * for up to {@link #LISTING_REUSE} while its newest segment is still the end the index found: segments appear only
 * at the end (a roll moves the end), and one removed since (retention, compaction, on any instance) is met as a
 * gone segment, on which the read lists again (ADR 0044).
 *
 * <p>A read from below the partition's end as last found may be bounded by that end for up to {@link #LISTING_REUSE}
 * instead of catching the index up again ({@link #recentEnd}; the read path gives back and repeats a read that
 * reaches it, so only an answer that stops short of it reports it). A read at or past that end catches up first, so
 * an append by any process is readable at once, and an append acknowledged by this process ends the reuse
 * ({@link #appendedHere}), so every read after it sees it (ADR 0073).
 *
 * <p>Thread-safe. {@link #close} closes the index; calls after it fail.
 */
public final class HotTier implements AutoCloseable {
    /** How long a listing of a partition's hot segments serves fetches (see class). */
    static final Duration LISTING_REUSE = Duration.ofSeconds(1);
    private final HotLog log;
    private final LogIndex index;
    private final HotIndexer indexer;
    private final Clock clock;
    private final ConcurrentMap<TopicPartition, Listing> listings = new ConcurrentHashMap<>();
    /**
     * Per partition, where the last slice sent ended: a consumer's next fetch starts there, so it needs no index
     * lookup (a RocksDB seek per partition per fetch otherwise). Checked against the header found there like any hint.
     */
    private final ConcurrentMap<TopicPartition, Position> sliceEnds = new ConcurrentHashMap<>();
    /** Per partition, the end the last catch-up found and when, which reads from below it reuse (see class). */
    private final ConcurrentMap<TopicPartition, CheckedEnd> ends = new ConcurrentHashMap<>();
    /** Per partition, how many appends this process acknowledged: a reused end must have been found after the last. */
    private final ConcurrentMap<TopicPartition, Long> appendsHere = new ConcurrentHashMap<>();
    private volatile boolean open = true;

    /** An end a catch-up found, when, and the count of this process's appends to the partition before it began. */
    private record CheckedEnd(Position end, long checkedAtMs, long appendsBefore) {
    }

    /** A partition's hot segment bases, ascending, and when they were listed. */
    private record Listing(List<Long> bases, long listedAtMs) {
    }

    public HotTier(Path dataDir, Path indexDir, Clock clock) {
        this(dataDir, indexDir, clock, null);
    }

    /** @param journal what this process's writers appended, which the indexer takes instead of reading it back */
    public HotTier(Path dataDir, Path indexDir, Clock clock, AppendJournal journal) {
        this.clock = clock;
        this.log = new HotLog(dataDir, journal);
        // RocksDB owns its directory (it may wipe it on an unknown format), so it gets one of its own beside
        // the cold-read cache.
        this.index = LogIndex.open(indexDir.resolve("rocksdb"));
        this.indexer = new HotIndexer(index, dataDir, HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES, journal);
    }

    /** The hot log itself, for what is not a read: deleting a topic's partitions. */
    public HotLog log() {
        return log;
    }

    /** The offset after the last visible record; 0 when empty. */
    public long highWatermark(TopicPartition tp) {
        return end(tp).offset();
    }

    /**
     * Records from {@code offset}: at most {@code maxRecords}, stopping at {@code maxBytes} but returning at least
     * one record when one is visible.
     *
     * @throws IllegalArgumentException if {@code offset} lies below the oldest hot segment
     */
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        return hinted(tp, offset, (reader, hint) -> reader.read(offset, hint, maxRecords, maxBytes));
    }

    /** Whole batches from {@code offset}, as stored, read into {@code memory}; see {@link PartitionReader#readBatches}. */
    public BatchRead readBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, ReadMemory memory) {
        return hinted(tp, offset, (reader, hint) -> reader.readBatches(offset, hint, maxRecords, maxBytes, memory));
    }

    /**
     * The visible end of the hot log after catching the index up: {@link #highWatermark} and where that end lies,
     * the bound of {@link #sliceBatches}.
     */
    public Position end(TopicPartition tp) {
        long appendsBefore = appendsHere.getOrDefault(tp, 0L);
        Position end = indexer.catchUp(tp);
        // Concurrent catch-ups may finish out of order: a fresh further end is kept, so a reused end never goes back.
        CheckedEnd found = new CheckedEnd(end, clock.millis(), appendsBefore);
        ends.merge(tp, found, (old, now) -> old.appendsBefore() == now.appendsBefore()
                && old.end().offset() > now.end().offset()
                && now.checkedAtMs() - old.checkedAtMs() < LISTING_REUSE.toMillis() ? old : now);
        return end;
    }

    /**
     * An end a read from {@code offset} may be bounded by instead of {@link #end}'s (see class): the end last found,
     * when {@code offset} lies below it, it was found less than {@link #LISTING_REUSE} ago and after this process's
     * last append; else null. The catch-up it saves is a RocksDB read and two file-status calls per partition and
     * fetch, about a third of a fetch's work on this machine's volume (ADR 0073).
     */
    public Position recentEnd(TopicPartition tp, long offset) {
        CheckedEnd known = ends.get(tp);
        if (known == null || offset >= known.end().offset()
                || known.appendsBefore() != appendsHere.getOrDefault(tp, 0L)) {
            return null;
        }
        long age = clock.millis() - known.checkedAtMs();
        return age >= 0 && age < LISTING_REUSE.toMillis() ? known.end() : null;
    }

    /**
     * Whole batches from {@code offset} below {@code end} as a range of their segment file, not read (see
     * {@link PartitionReader#sliceBatches}); null when the headers do not lead there cleanly and
     * {@link #readBatches} must read them.
     */
    public BatchSlice sliceBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, Position end) {
        return sliceBatches(tp, offset, maxRecords, maxBytes, end, null);
    }

    /**
     * As {@link #sliceBatches(TopicPartition, long, int, int, Position)} with the segment bases as listed after
     * {@code end} was taken (null: listed here); a retry after the hinted segment vanished lists them again.
     */
    public BatchSlice sliceBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, Position end,
                                   List<Long> listed) {
        PartitionReader reader = log.reader(tp);
        Position lastEnd = sliceEnds.get(tp);
        BatchPositions known = indexer.positions(tp);
        // The index is asked (a RocksDB seek) only when neither the last slice nor the known positions start there.
        Position hint = lastEnd != null && lastEnd.offset() == offset ? lastEnd
                : known != null && known.holds(offset) ? null : indexer.hint(tp, offset).orElse(null);
        BatchSlice slice;
        try {
            slice = reader.sliceBatches(offset, hint, maxRecords, maxBytes, end, listed, known);
        } catch (PartitionReader.SegmentGoneException e) {
            // Retention removed a listed segment mid-read: an unhinted read lists and resolves again.
            listings.remove(tp);
            slice = reader.sliceBatches(offset, null, maxRecords, maxBytes, end, null);
        }
        if (slice != null && slice.length() > 0) {
            sliceEnds.put(tp, slice.end());
        }
        return slice;
    }

    /** Runs a read from the index's hint for {@code offset}; unhinted again if retention removed the hinted segment. */
    private <T> T hinted(TopicPartition tp, long offset, BiFunction<PartitionReader, Position, T> read) {
        PartitionReader reader = log.reader(tp);
        Position hint = indexer.hint(tp, offset).orElse(null);
        try {
            return read.apply(reader, hint);
        } catch (PartitionReader.SegmentGoneException e) {
            // Retention removed the hinted segment mid-read; an unhinted read re-resolves from the listing.
            listings.remove(tp);
            return read.apply(reader, null);
        }
    }

    /** Where the index of {@code tp} ends now, without catching it up; empty when nothing is indexed. */
    public Optional<Position> indexedEnd(TopicPartition tp) {
        return index.indexedEnd(tp);
    }

    /**
     * The offset of the latest record with {@code key} in the partition (after catching the index up with every
     * append); empty if there is none or the latest is a tombstone.
     */
    public OptionalLong latestOffset(TopicPartition tp, byte[] key) {
        indexer.catchUp(tp);
        return index.latestOffset(tp, key);
    }

    /** The first offset whose record timestamp is {@code >= timestamp}; empty when there is none. */
    public OptionalLong offsetForTimestamp(TopicPartition tp, long timestamp) {
        return indexer.offsetForTimestamp(tp, timestamp);
    }

    /** The first record whose timestamp is {@code >= timestamp}, as its offset and own timestamp; or empty. */
    public Optional<OffsetAndTimestamp> firstAtOrAfter(TopicPartition tp, long timestamp) {
        return indexer.firstRecordAtOrAfter(tp, timestamp).map(r -> new OffsetAndTimestamp(r.offset(), r.timestamp()));
    }

    /**
     * The first record with the largest timestamp among the hot tier's records below {@code endOffset} (Kafka's
     * ListOffsets MAX_TIMESTAMP, KIP-734, which looks at a broker's local log only); empty when there is none. Walks
     * the batch headers of the hot segments, then reads the one batch that holds it.
     */
    public Optional<OffsetAndTimestamp> maxTimestamp(TopicPartition tp, long endOffset) {
        long oldest = oldestSegmentBase(tp);
        if (oldest < 0) {
            return Optional.empty();
        }
        BatchInfo[] newest = {null}; // the first data batch with the largest timestamp so far
        log.reader(tp).scan(new Position(oldest, oldest, 0), (info, batch) -> {
            if (info.baseOffset() >= endOffset) {
                return false;
            }
            if (!info.control() && (newest[0] == null || info.maxTimestamp() > newest[0].maxTimestamp())) {
                newest[0] = info;
            }
            return true;
        });
        BatchInfo best = newest[0];
        if (best == null) {
            return Optional.empty();
        }
        int records = (int) (best.lastOffset() - best.baseOffset() + 1);
        for (LogRecord r : read(tp, best.baseOffset(), records, Integer.MAX_VALUE).records()) {
            if (r.offset() < endOffset && r.timestamp() == best.maxTimestamp()) {
                return Optional.of(new OffsetAndTimestamp(r.offset(), r.timestamp()));
            }
        }
        return Optional.empty();
    }

    /**
     * The oldest hot segment's base offset, or -1 when the partition has none. One directory listing: every fetch
     * and stream step asks, and {@link #stats} would also stat every segment file.
     */
    public long oldestSegmentBase(TopicPartition tp) {
        List<Long> bases = segmentBases(tp);
        return bases.isEmpty() ? -1 : bases.get(0);
    }

    /** The hot segments' base offsets, ascending (empty when none), listed now. */
    public List<Long> segmentBases(TopicPartition tp) {
        List<Long> bases = List.copyOf(log.segmentBases(tp));
        listings.put(tp, new Listing(bases, clock.millis()));
        return bases;
    }

    /**
     * The hot segments' base offsets for a read up to {@code end} (from {@link #end}): the last listing when it is at
     * most {@link #LISTING_REUSE} old and its newest segment is {@code end}'s, else a new one (see class). A listed
     * segment may be gone by the time it is read; the reader then reports it gone and the caller lists again.
     */
    public List<Long> segmentBases(TopicPartition tp, Position end) {
        Listing known = listings.get(tp);
        long age = known == null ? -1 : clock.millis() - known.listedAtMs();
        if (known != null && age >= 0 && age < LISTING_REUSE.toMillis() && !known.bases().isEmpty()
                && known.bases().get(known.bases().size() - 1) == end.segmentBase()) {
            return known.bases();
        }
        return segmentBases(tp);
    }

    /** The oldest hot segment's base offset, bytes and segment count; zeros when the partition has no segment. */
    public HotStats stats(TopicPartition tp) {
        List<HotSegment> segments = log.segments(tp);
        long bytes = 0;
        for (HotSegment s : segments) {
            bytes += s.bytes();
        }
        return new HotStats(segments.isEmpty() ? 0 : segments.get(0).baseOffset(), bytes, segments.size());
    }

    /** This process acknowledged an append to {@code tp}: no read reuses an end found before it (see class). */
    public void appendedHere(TopicPartition tp) {
        appendsHere.merge(tp, 1L, Long::sum);
    }

    /** Drops the index entries of a topic's partitions; the files are not touched. */
    public void forget(String topic, int partitions) {
        for (int p = 0; p < partitions; p++) {
            index.dropPartition(new TopicPartition(topic, p));
            indexer.forget(new TopicPartition(topic, p));
            listings.remove(new TopicPartition(topic, p));
            sliceEnds.remove(new TopicPartition(topic, p));
            ends.remove(new TopicPartition(topic, p));
            appendsHere.remove(new TopicPartition(topic, p));
        }
    }

    /** Retention deleted the hot segments below {@code nextSegmentBase}: drop index entries pointing into them. */
    public void segmentsEvicted(TopicPartition tp, long nextSegmentBase) {
        listings.remove(tp);
        index.dropSegmentsBelow(tp, nextSegmentBase);
    }

    /** True while the tier can serve reads (for readiness). */
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        open = false;
        index.close();
    }

    public record HotStats(long startOffset, long bytes, int segments) {
    }
}
