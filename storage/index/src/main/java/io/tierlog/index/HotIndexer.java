package io.tierlog.index;

import io.tierlog.log.AppendJournal;
import io.tierlog.log.AppendedBatch;
import io.tierlog.log.BatchPositions;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.BatchKeys;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Tails the hot segments of partitions (appended by any process) into a {@link LogIndex}.
 *
 * <h2>Indexing</h2>
 * {@link #catchUp} resumes at the partition's checkpoint (see {@link IndexCheckpoint}), or at the oldest hot
 * segment when there is none (first start, or the index was deleted: a rebuild), and walks the visible batches
 * with {@link PartitionReader#scan}, which validates every batch's CRC32C. Batches this process appended that continue
 * the checkpoint are taken from its {@link AppendJournal} instead, without reading them back (their first and last
 * header per segment are compared with the file first; ADR 0060). It writes an offset entry at the first
 * batch of each segment and at the first batch after {@code indexIntervalBytes} of batch bytes since the last entry,
 * and a time entry beside it when the running max timestamp grew, and a key entry per keyed record (see
 * {@link LogIndex} for the format). Entries
 * are written every {@value #ENTRIES_PER_WRITE} entries and at the end, each time with the checkpoint in the same
 * atomic write, so the indexed prefix always matches the checkpoint.
 *
 * <p>Every batch a walk meets is also recorded, in memory, in the partition's {@link BatchPositions} (where each batch
 * of the newest segment begins), from which a fetch takes its range without reading each batch's header (ADR 0070).
 *
 * <h2>Recovery rules</h2>
 * <ul>
 *   <li>No checkpoint (first start, or the index was deleted or lost the partition): anything indexed for the
 *       partition is dropped and indexing starts at the oldest hot segment. This is the rebuild.</li>
 *   <li>Checkpoint in a segment that retention deleted: entries below the oldest hot segment are dropped and
 *       indexing restarts at that segment (the batches in between were evicted before they were indexed).</li>
 *   <li>Checkpoint beyond the log (the segment is shorter than the checkpoint, or every hot segment is older):
 *       the log was rewritten (topic deleted and re-created), so the partition's index is dropped and rebuilt.</li>
 *   <li>Checkpoint in a sealed segment that no longer has a valid batch there: the segment was compacted since, so
 *       the partition is re-indexed. In the newest segment (never compacted) only the batch header's base offset is
 *       checked; a batch still being written there is an append in progress and indexing resumes.</li>
 *   <li>A segment deleted while being walked ({@link PartitionReader.SegmentGoneException}): the walk is re-resolved
 *       from the checkpoint, up to {@value #MAX_ATTEMPTS} times.</li>
 *   <li>A corrupt batch: what precedes it is committed, and {@link CorruptLogException} propagates. Indexing never
 *       passes corruption; every later call raises it again until the segment is repaired or removed.</li>
 * </ul>
 *
 * <h2>Crash behaviour</h2>
 * A process killed mid-catch-up leaves the index at its last committed checkpoint with exactly the entries below
 * it (each commit is one atomic RocksDB write); the next {@link #catchUp} re-walks from there. Appends are never
 * waited for or locked out: the indexer only reads segments, and a batch still being written is invisible to it
 * until complete.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe. Calls to {@link #catchUp} for one partition are serialized by a per-partition lock; different
 * partitions are indexed in parallel. Several indexers on one index are safe too (commits are compare-and-set on
 * the checkpoint), merely wasteful. {@link #hint} never blocks on indexing.
 */
public final class HotIndexer {
    private static final Logger LOG = LoggerFactory.getLogger(HotIndexer.class);
    /** Kafka's {@code index.interval.bytes} default. */
    public static final int DEFAULT_INDEX_INTERVAL_BYTES = 4096;
    static final int ENTRIES_PER_WRITE = 4096;
    static final int MAX_ATTEMPTS = 16;
    /** Batch positions held over all partitions: 32 MiB, a full map (ADR 0070) for each of 256 busy partitions. */
    static final long POSITIONS_BUDGET = 4L << 20;

    private final LogIndex index;
    private final HotLog hotLog;
    private final int indexIntervalBytes;
    /** This process's own appends, indexed without reading them back; null: every batch is read from the log. */
    private final AppendJournal journal;
    private final ConcurrentMap<TopicPartition, ReentrantLock> locks = new ConcurrentHashMap<>();
    /** Per partition, the oldest hot segment below which the index was last found to hold no entries. */
    private final ConcurrentMap<TopicPartition, Long> oldestChecked = new ConcurrentHashMap<>();
    /** Per partition, where the batches of the newest segment begin, as the walks met them (for fetches). */
    private final ConcurrentMap<TopicPartition, BatchPositions> positions = new ConcurrentHashMap<>();
    private final BatchPositions.Budget positionsBudget;

    public HotIndexer(LogIndex index, Path dataDir) {
        this(index, dataDir, DEFAULT_INDEX_INTERVAL_BYTES);
    }

    /**
     * @param indexIntervalBytes batch bytes between offset entries (Kafka's {@code index.interval.bytes}); smaller
     *                           means a larger index and shorter scans
     */
    public HotIndexer(LogIndex index, Path dataDir, int indexIntervalBytes) {
        this(index, dataDir, indexIntervalBytes, null);
    }

    /**
     * @param journal the batches this process's writers appended ({@link AppendJournal}); a catch-up indexes those
     *                that continue its checkpoint from there instead of reading them back (null: none)
     */
    public HotIndexer(LogIndex index, Path dataDir, int indexIntervalBytes, AppendJournal journal) {
        this(index, dataDir, indexIntervalBytes, journal, POSITIONS_BUDGET);
    }

    /** @param positionsBudget batch positions held over all partitions (see {@link BatchPositions}) */
    HotIndexer(LogIndex index, Path dataDir, int indexIntervalBytes, AppendJournal journal, long positionsBudget) {
        if (indexIntervalBytes < 1) {
            throw new IllegalArgumentException("indexIntervalBytes must be >= 1: " + indexIntervalBytes);
        }
        this.index = index;
        this.hotLog = new HotLog(dataDir);
        this.indexIntervalBytes = indexIntervalBytes;
        this.journal = journal;
        this.positionsBudget = new BatchPositions.Budget(positionsBudget);
    }

    /**
     * Indexes the batches appended since the last call, up to the visible end. When nothing was appended this costs
     * one RocksDB read (the checkpoint, from memory) and two file-status calls: the checkpoint's segment still has
     * exactly the indexed length, and no segment was rolled at the indexed end offset.
     *
     * @return the visible end of the hot log: {@code offset()} is its high watermark; {@code (0, 0, 0)} when the
     *         partition has no hot segment
     * @throws CorruptLogException if a batch fails validation; nothing at or after it is indexed
     */
    public Position catchUp(TopicPartition tp) {
        ReentrantLock lock = locks.computeIfAbsent(tp, k -> new ReentrantLock());
        lock.lock();
        try {
            PartitionReader reader = hotLog.reader(tp);
            for (int attempt = 1; ; attempt++) {
                try {
                    Position end = catchUpOnce(reader);
                    if (end != null) {
                        return end;
                    }
                    LOG.debug("{}: index changed under the indexer (drop or another indexer); retrying", tp);
                } catch (PartitionReader.SegmentGoneException e) {
                    if (attempt >= MAX_ATTEMPTS) {
                        throw e;
                    }
                    LOG.debug("{}: segment removed while indexing; re-resolving", tp, e);
                    continue;
                }
                if (attempt >= MAX_ATTEMPTS) {
                    throw new IllegalStateException(tp + ": index kept changing during " + MAX_ATTEMPTS + " catch-up attempts");
                }
            }
        } finally {
            lock.unlock();
            if (positionsBudget.wasShortOfRoom()) {
                releaseIdlePositions();
            }
        }
    }

    /**
     * Releases the batch positions of partitions neither indexed nor fetched since the last time the budget ran short
     * (a topic deleted through another process is never asked about again), so that busy partitions get the room.
     */
    private void releaseIdlePositions() {
        positions.forEach((tp, held) -> {
            if (held.idleSinceLastLook() && positions.remove(tp, held)) {
                held.release();
            }
        });
    }

    /**
     * A read hint for {@code offset}: the index entry at or below it, or the indexed end if {@code offset} lies at or
     * beyond it, so that a read of a fresh append scans only what was appended since the last catch-up. Empty when
     * nothing at or below {@code offset} is indexed. Does not index.
     */
    public Optional<Position> hint(TopicPartition tp, long offset) {
        Optional<Position> end = index.indexedEnd(tp);
        if (end.isPresent() && offset >= end.get().offset()) {
            return end;
        }
        return index.floor(tp, offset);
    }

    /**
     * Where the batches of the newest segment of {@code tp} begin, every one indexed by this indexer since it
     * started ({@link PartitionReader#sliceBatches} takes a fetch's range from it); null before the first catch-up.
     */
    public BatchPositions positions(TopicPartition tp) {
        return positions.get(tp);
    }

    /** Forgets what is held in memory for {@code tp} (its topic was deleted); the index is the caller's to drop. */
    public void forget(TopicPartition tp) {
        BatchPositions held = positions.remove(tp);
        if (held != null) {
            held.release();
        }
        oldestChecked.remove(tp);
    }

    /**
     * The offset of the first record (in offset order) whose timestamp is {@code >= timestamp} in the hot log, as
     * Kafka's ListOffsets by timestamp answers; empty if there is none. Catches up first, so every visible batch
     * counts.
     *
     * @throws CorruptLogException if a batch on the way fails validation
     */
    public OptionalLong offsetForTimestamp(TopicPartition tp, long timestamp) {
        Optional<LogRecord> found = firstRecordAtOrAfter(tp, timestamp);
        return found.isEmpty() ? OptionalLong.empty() : OptionalLong.of(found.get().offset());
    }

    /**
     * The first record (in offset order) whose timestamp is {@code >= timestamp} in the hot log, or empty: what
     * {@link #offsetForTimestamp} finds, with the record itself, whose own timestamp Kafka's ListOffsets answers.
     *
     * @throws CorruptLogException if a batch on the way fails validation
     */
    public Optional<LogRecord> firstRecordAtOrAfter(TopicPartition tp, long timestamp) {
        PartitionReader reader = hotLog.reader(tp);
        for (int attempt = 1; ; attempt++) {
            catchUp(tp);
            Optional<Position> start = index.forTimestamp(tp, timestamp).or(() -> index.indexedEnd(tp));
            if (start.isEmpty()) {
                return Optional.empty();
            }
            List<Long> bases = reader.segmentBases();
            if (bases.isEmpty()) {
                return Optional.empty();
            }
            Position from = start.get();
            if (from.segmentBase() < bases.get(0)) {
                // The index still points into evicted segments: what is left starts at the oldest hot segment.
                from = new Position(bases.get(0), bases.get(0), 0);
            }
            try {
                if (bases.contains(from.segmentBase())) {
                    return firstAtOrAfter(reader, from, timestamp);
                }
            } catch (PartitionReader.SegmentGoneException e) {
                LOG.debug("{}: segment removed during a timestamp search; retrying", tp, e);
            }
            if (attempt >= MAX_ATTEMPTS) {
                throw new IllegalStateException(tp + ": hot segments kept changing during a timestamp search");
            }
        }
    }

    private static Optional<LogRecord> firstAtOrAfter(PartitionReader reader, Position from, long timestamp) {
        LogRecord[] found = {null};
        scan(reader, from, (info, batch) -> {
            if (info.maxTimestamp() < timestamp) {
                return true;
            }
            // A batch's max timestamp is its records' max, so this batch holds the answer.
            List<LogRecord> records = new ArrayList<>(info.recordCount());
            RecordBatchCodec.decode(batch, info.baseOffset(), Integer.MAX_VALUE, records);
            for (LogRecord r : records) {
                if (r.timestamp() >= timestamp) {
                    found[0] = r;
                    return false;
                }
            }
            return true;
        });
        return Optional.ofNullable(found[0]);
    }

    /** {@link PartitionReader#scan}, reporting a start segment that retention just removed as a gone segment. */
    private static Position scan(PartitionReader reader, Position from, PartitionReader.BatchVisitor visitor) {
        try {
            return reader.scan(from, visitor);
        } catch (IllegalArgumentException e) {
            // scan refuses a start segment missing from the directory: removed since the caller resolved it.
            if (!reader.hasSegment(from.segmentBase())) {
                throw new PartitionReader.SegmentGoneException(reader.partition(), from.segmentBase());
            }
            throw e;
        }
    }

    /** One catch-up attempt; null if a concurrent change to the partition's index requires another. */
    private Position catchUpOnce(PartitionReader reader) {
        TopicPartition tp = reader.partition();
        // Taken before the checkpoint is read: a batch appended after this is read from the log, or taken next time.
        List<AppendedBatch> own = journal == null ? List.of() : journal.take(tp);
        IndexCheckpoint stored = index.checkpoint(tp).orElse(null);
        if (stored != null && unchanged(reader, stored.end())) {
            return stored.end();
        }
        List<Long> bases = reader.segmentBases();
        if (bases.isEmpty()) {
            return new Position(0, 0, 0);
        }
        IndexCheckpoint expected = stored;
        List<AppendedBatch> chain = stored == null ? List.of() : ownChain(reader, own, stored.end());
        IndexCheckpoint start;
        if (!chain.isEmpty() && chain.get(0).info().segmentBase() == stored.end().segmentBase()
                && bases.contains(stored.end().segmentBase())) {
            // This process's next batch is still where the checkpoint ends in its segment: the check resolveStart
            // makes there (a batch of the base offset at that byte) is made.
            start = stored;
        } else {
            start = resolveStart(tp, reader, stored, bases);
            if (start == null) {
                // Never indexed, or the log was rewritten: start over, without entries a lost checkpoint left behind.
                index.dropPartition(tp);
                batchPositions(tp).clear();
                expected = null;
                start = IndexCheckpoint.startOf(bases.get(0));
            }
            if (start != stored) {
                chain = ownChain(reader, own, start.end());
            }
        }
        dropEntriesBelow(tp, bases.get(0));
        Run run = new Run(tp, expected, start);
        Position end;
        try {
            Position from = start.end();
            for (AppendedBatch b : chain) {
                if (!run.visitOwn(b)) {
                    return null;
                }
                from = new Position(b.info().nextOffset(), b.info().segmentBase(), b.info().endPosition());
            }
            end = scan(reader, from, run);
        } catch (CorruptLogException e) {
            run.commit(run.state.end());
            throw e;
        }
        if (run.aborted) {
            return null;
        }
        return run.commit(end) ? end : null;
    }

    /**
     * Drops index entries of segments below the oldest hot one (evicted before the eviction listener dropped them),
     * looking once per oldest segment: entries below it come only from walks of segments evicted since, which moves
     * the oldest segment on.
     */
    private void dropEntriesBelow(TopicPartition tp, long oldest) {
        Long checked = oldestChecked.get(tp);
        if (checked != null && checked == oldest) {
            return;
        }
        Optional<Position> first = index.firstEntry(tp);
        if (first.isPresent() && first.get().segmentBase() < oldest) {
            index.dropSegmentsBelow(tp, oldest);
        }
        oldestChecked.put(tp, oldest);
    }

    /**
     * The batches of {@code own} that continue the log from {@code from} without a gap, which the indexer then takes
     * from what the writer recorded instead of reading the log; empty when there are none or the log no longer holds
     * them. Batches below {@code from} were indexed already by a read's catch-up; at the first gap (another process's
     * append, a compressed batch, the journal's bound) the log is read. The first and the last batch of the chain in
     * each segment are looked up in the file (base offset, size and CRC32C): a compaction of the segment since (it only
     * removes records, so any change moves or alters one of the two) or a topic deleted and created again would not
     * match.
     */
    private List<AppendedBatch> ownChain(PartitionReader reader, List<AppendedBatch> own, Position from) {
        int first = 0;
        while (first < own.size() && own.get(first).info().baseOffset() < from.offset()) {
            first++;
        }
        Position at = from;
        int next = first;
        for (; next < own.size() && continues(at, own.get(next).info()); next++) {
            BatchInfo info = own.get(next).info();
            at = new Position(info.nextOffset(), info.segmentBase(), info.endPosition());
        }
        List<AppendedBatch> chain = own.subList(first, next);
        return chain.isEmpty() || stillInTheLog(reader, chain) ? chain : List.of();
    }

    /** Whether {@code info} is the batch right after {@code at}: the same segment's next, or a new segment's first. */
    private static boolean continues(Position at, BatchInfo info) {
        if (info.baseOffset() != at.offset()) {
            return false;
        }
        return (info.segmentBase() == at.segmentBase() && info.position() == at.position())
                || (info.position() == 0 && info.segmentBase() == at.offset());
    }

    /** Whether each segment of {@code chain} still holds its first and last batch of it, where it was written. */
    private boolean stillInTheLog(PartitionReader reader, List<AppendedBatch> chain) {
        int i = 0;
        while (i < chain.size()) {
            long segment = chain.get(i).info().segmentBase();
            int last = i;
            while (last + 1 < chain.size() && chain.get(last + 1).info().segmentBase() == segment) {
                last++;
            }
            Path file = hotLog.sealedSegmentFile(reader.partition(), segment);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                if (!headerMatches(ch, chain.get(i)) || (last != i && !headerMatches(ch, chain.get(last)))) {
                    LOG.debug("{}: segment {} no longer holds the batches appended to it; reading the log",
                            reader.partition(), segment);
                    return false;
                }
            } catch (NoSuchFileException e) {
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file, e);
            }
            i = last + 1;
        }
        return true;
    }

    private static boolean headerMatches(FileChannel ch, AppendedBatch b) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(RecordBatchCodec.CRC_OFFSET + Integer.BYTES);
        if (readFully(ch, header, b.info().position()) < header.capacity()) {
            return false;
        }
        return header.getLong(0) == b.info().baseOffset()
                && RecordBatchCodec.announcedSize(header.flip()) == b.info().sizeInBytes()
                && header.getInt(RecordBatchCodec.CRC_OFFSET) == b.crc();
    }

    /**
     * Where to resume: the stored checkpoint, the start of the oldest hot segment if the checkpoint's segment was
     * evicted, or null to index from scratch (no checkpoint, or it lies beyond the log: the log was rewritten).
     */
    private IndexCheckpoint resolveStart(TopicPartition tp, PartitionReader reader, IndexCheckpoint stored,
                                         List<Long> bases) {
        if (stored == null) {
            LOG.info("{}: indexing from the oldest hot segment {}", tp, bases.get(0));
            return null;
        }
        Position end = stored.end();
        if (bases.contains(end.segmentBase())) {
            long size = reader.segmentBytes(end.segmentBase());
            if (size >= 0 && size < end.position()) {
                LOG.warn("{}: segment {} is {} bytes but was indexed to {}; the log was rewritten, re-indexing",
                        tp, end.segmentBase(), size, end.position());
                return null;
            }
            if (!batchBoundary(reader, end, size, bases)) {
                // The segment was compacted since (rewritten with the same batches at smaller positions): resuming at
                // the stale byte position would stop on a "corrupt" batch or skip batches. A rebuild reads the log as
                // it is now, key entries included (ADR 0015).
                LOG.warn("{}: the index checkpoint (offset {}, segment {}, byte {}) names no batch of the segment as "
                        + "it is now (compacted since); re-indexing", tp, end.offset(), end.segmentBase(),
                        end.position());
                return null;
            }
            return stored;
        }
        long oldest = bases.get(0);
        if (oldest > end.segmentBase()) {
            LOG.info("{}: segments up to {} were removed before being indexed; resuming at segment {}", tp,
                    end.segmentBase(), oldest);
            return stored.restartAt(oldest);
        }
        LOG.warn("{}: indexed segment {} is missing but older segments exist; the log was rewritten, re-indexing",
                tp, end.segmentBase());
        return null;
    }

    /**
     * True if {@code end} is where the batch with base offset {@code end.offset()} starts in its segment as the file is
     * now, or the segment's end followed by nothing or by the segment of that offset. In a sealed segment the batch
     * there must be whole and valid (compaction rewrites sealed segments). The newest segment is never compacted, only
     * appended to, so there the header's base offset is enough (a re-created log is caught by it), and a batch still
     * being written, its header included, is an append in progress: not a reason to re-index the partition.
     */
    private boolean batchBoundary(PartitionReader reader, Position end, long size, List<Long> bases) {
        if (end.position() == 0 || size < 0) {
            return true; // a segment's start; or gone meanwhile, which the walk reports as a gone segment
        }
        if (end.position() == size) {
            int i = bases.indexOf(end.segmentBase());
            return i == bases.size() - 1 || bases.get(i + 1) == end.offset();
        }
        boolean newest = bases.get(bases.size() - 1) == end.segmentBase();
        Path file = hotLog.sealedSegmentFile(reader.partition(), end.segmentBase());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(RecordBatchCodec.LOG_OVERHEAD);
            if (readFully(ch, header, end.position()) < RecordBatchCodec.LOG_OVERHEAD) {
                return newest;
            }
            if (header.getLong(0) != end.offset()) {
                return false;
            }
            if (newest) {
                return true;
            }
            long announced = RecordBatchCodec.announcedSize(header.flip());
            if (announced < RecordBatchCodec.HEADER_SIZE || end.position() + announced > size) {
                return false;
            }
            ByteBuffer batch = ByteBuffer.allocate((int) announced);
            return readFully(ch, batch, end.position()) == announced
                    && RecordBatchCodec.validate(batch.flip()) == null;
        } catch (NoSuchFileException e) {
            return true; // evicted meanwhile: the walk reports it as a gone segment and re-resolves
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    private static int readFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        int total = 0;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, position + total);
            if (n < 0) {
                break;
            }
            total += n;
        }
        return total;
    }

    /**
     * True if nothing was appended after {@code end}: its segment is still exactly that long and no segment was
     * rolled at its offset. Two stat calls; any doubt (a missing file) answers false.
     */
    private static boolean unchanged(PartitionReader reader, Position end) {
        long size = reader.segmentBytes(end.segmentBase());
        if (size != end.position()) {
            return false;
        }
        // A writer rolls only a non-empty segment, and names the new one after the next offset.
        return end.position() == 0 || !reader.hasSegment(end.offset());
    }

    private BatchPositions batchPositions(TopicPartition tp) {
        return positions.computeIfAbsent(tp, k -> new BatchPositions(positionsBudget));
    }

    /** One walk over new batches: builds entries and commits them with the checkpoint. Not thread-safe. */
    private final class Run implements PartitionReader.BatchVisitor {
        private final TopicPartition tp;
        private final BatchPositions batches;
        private final IndexUpdate update = new IndexUpdate();
        private IndexCheckpoint committed;
        private IndexCheckpoint state;
        boolean aborted;

        Run(TopicPartition tp, IndexCheckpoint committed, IndexCheckpoint start) {
            this.tp = tp;
            this.batches = batchPositions(tp);
            this.committed = committed;
            this.state = start;
        }

        @Override
        public boolean visit(BatchInfo info, ByteBuffer batch) {
            return add(info, keys -> BatchKeys.forEach(batch, keys));
        }

        /** A batch this process appended: its keys as the writer recorded them. */
        boolean visitOwn(AppendedBatch batch) {
            return add(batch.info(), batch::forEachKey);
        }

        private boolean add(BatchInfo info, Consumer<BatchKeys.KeyVisitor> keys) {
            long bytesSince = state.bytesSinceEntry();
            long maxTimestamp = Math.max(state.maxTimestamp(), info.maxTimestamp());
            long lastTimeEntry = state.lastTimeEntry();
            if (info.position() == 0 || bytesSince >= indexIntervalBytes) {
                Position boundary = new Position(info.baseOffset(), info.segmentBase(), info.position());
                update.offset(boundary);
                if (maxTimestamp > lastTimeEntry) {
                    update.time(maxTimestamp, boundary);
                    lastTimeEntry = maxTimestamp;
                }
                bytesSince = 0;
            }
            bytesSince += info.sizeInBytes();
            batches.add(info);
            // Key entries: each keyed record of a data batch is its key's latest so far (a tombstone deletes it).
            keys.accept((key, offset, tombstone) -> update.key(key, tombstone ? IndexUpdate.TOMBSTONE : offset));
            state = new IndexCheckpoint(new Position(info.nextOffset(), info.segmentBase(), info.endPosition()),
                    bytesSince, maxTimestamp, lastTimeEntry);
            if (update.size() >= ENTRIES_PER_WRITE && !commit(state.end())) {
                aborted = true;
                return false;
            }
            return true;
        }

        /** Commits the pending entries with the checkpoint at {@code end}; false if the index changed underneath. */
        boolean commit(Position end) {
            IndexCheckpoint next = end.equals(state.end()) ? state
                    : new IndexCheckpoint(end, state.bytesSinceEntry(), state.maxTimestamp(), state.lastTimeEntry());
            if (next.equals(committed) && update.size() == 0) {
                return true;
            }
            if (!index.commit(tp, committed, update, next)) {
                return false;
            }
            LOG.debug("{}: indexed to offset {} ({} entries)", tp, end.offset(), update.size());
            committed = next;
            state = next;
            update.clear();
            return true;
        }
    }
}
