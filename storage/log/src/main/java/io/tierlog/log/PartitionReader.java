package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.segment.SegmentCursor;
import io.tierlog.log.internal.segment.SegmentFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one partition's hot segments without taking the writer lock, so reads never wait for appends.
 *
 * <p>Visibility: a batch is visible once all of its bytes are in the file and its CRC32C matches. A batch cut
 * short at the end of the newest segment is an append in progress (or a torn write that the next writer will
 * truncate) and is invisible. A complete batch that fails validation raises {@link CorruptLogException}; it is
 * never skipped and never returned as data. Every byte returned has passed its batch's CRC check, and every
 * batch's base offset (which lies outside the CRC) must continue the previous batch's offsets, so a damaged base
 * offset is corruption too, not records served under wrong offsets.
 *
 * <p>Thread-safe; holds no open files between calls.
 */
public final class PartitionReader {
    /** A sealed segment is read whole, so it is read in large chunks. */
    private static final int SEALED_WALK_CHUNK = 1 << 20;
    private final TopicPartition partition;
    private final Path dir;

    PartitionReader(Path dataDir, TopicPartition partition) {
        this.partition = partition;
        this.dir = dataDir.resolve(partition.dirName());
    }

    public TopicPartition partition() {
        return partition;
    }

    /** The partition's directory, for tests that inspect its files; other modules ask {@link HotLog}. */
    public Path directory() {
        return dir;
    }

    /** Base offsets of the hot segments, ascending. */
    public List<Long> segmentBases() {
        return SegmentFiles.segmentBases(dir);
    }

    /** The size of segment {@code base}, or -1 if there is no such segment (never was, or removed). */
    public long segmentBytes(long base) {
        try {
            return Files.size(SegmentFiles.log(dir, base));
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat " + where(base), e);
        }
    }

    /** Whether segment {@code base} exists now. */
    public boolean hasSegment(long base) {
        return Files.exists(SegmentFiles.log(dir, base));
    }

    /**
     * Walks sealed segment {@code base} whole, checked as a sealed segment must be: every batch valid, the first at
     * offset {@code base}, each continuing the previous one's offsets, and the file ending exactly after the last
     * batch (a newer segment exists, so nothing in this one can be an append in progress). The visitor sees every
     * batch; its answer is ignored. Used before copying a sealed segment elsewhere (the tierer's upload).
     *
     * @return the segment's length in bytes (0 when it holds no batch)
     * @throws NoSuchFileException if there is no such segment (evicted meanwhile)
     * @throws CorruptLogException if any check fails
     */
    public long walkSealed(long base, BatchVisitor visitor) throws IOException {
        try (FileChannel ch = FileChannel.open(SegmentFiles.log(dir, base), StandardOpenOption.READ)) {
            SegmentCursor cursor = new SegmentCursor(ch, base, 0, SEALED_WALK_CHUNK);
            long expected = base;
            SegmentCursor.Step step;
            while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                BatchInfo info = cursor.info();
                if (info.baseOffset() != expected) {
                    throw new CorruptLogException(where(base), info.position(), info.position() == 0
                            ? "first batch has base offset " + info.baseOffset()
                            : "batch base offset " + info.baseOffset() + " where " + expected + " was expected");
                }
                visitor.visit(info, cursor.batch());
                expected = info.nextOffset();
            }
            if (step != SegmentCursor.Step.END) {
                throw new CorruptLogException(where(base), cursor.position(),
                        step == SegmentCursor.Step.CORRUPT ? cursor.problem() : "sealed segment ends in a partial batch");
            }
            return cursor.position();
        }
    }

    /** Visits valid batches from {@code start}; returns false from the visitor to stop. */
    public interface BatchVisitor {
        boolean visit(BatchInfo info, java.nio.ByteBuffer batch);
    }

    /**
     * Walks the visible batches from {@code start} (a batch boundary) to the visible end, across segments.
     *
     * @return where the walk stopped: the position after the last batch visited (and its next offset)
     */
    public Position scan(Position start, BatchVisitor visitor) {
        return scan(start, null, visitor);
    }

    /**
     * As {@link #scan(Position, BatchVisitor)}, reading every segment through {@code window} (null: each cursor
     * reads through a chunk window of its own). The walk also stops before a batch the window does not admit.
     */
    private Position scan(Position start, SegmentCursor.Window window, BatchVisitor visitor) {
        return scan(start, window, visitor, false);
    }

    /**
     * As {@link #scan(Position, SegmentCursor.Window, BatchVisitor)}; with {@code hinted}, a start inside a segment
     * must be the boundary of the batch with base offset {@code start.offset()}, else {@link StaleHint} is thrown
     * before anything is visited. The cleaner (io.tierlog.log.compaction) rewrites sealed segments with the same
     * batches at smaller positions, so an index hint taken before that names no boundary, or another batch's.
     */
    private Position scan(Position start, SegmentCursor.Window window, BatchVisitor visitor, boolean hinted) {
        List<Long> bases = segmentBases();
        int index = bases.indexOf(start.segmentBase());
        if (index < 0) {
            throw new IllegalArgumentException(partition + ": no hot segment " + start.segmentBase());
        }
        long segment = start.segmentBase();
        long position = start.position();
        long nextOffset = start.offset();
        // The base offset lies outside the batch CRC (as in Kafka), so a damaged one would pass validation and
        // serve records under wrong offsets; offsets are dense, so each batch must start where the previous ended.
        // Mid-segment, the first batch's base offset is unknown (a hint names an offset at or after it).
        long expectedBase = position == 0 ? segment : -1;
        while (true) {
            boolean last = index == bases.size() - 1;
            try (FileChannel ch = FileChannel.open(SegmentFiles.log(dir, segment), StandardOpenOption.READ)) {
                SegmentCursor cursor = window == null ? new SegmentCursor(ch, segment, position)
                        : new SegmentCursor(ch, segment, position, window);
                SegmentCursor.Step step;
                boolean verify = hinted && position > 0;
                while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                    BatchInfo info = cursor.info();
                    if (verify && info.baseOffset() != start.offset()) {
                        throw new StaleHint();
                    }
                    verify = false;
                    if (expectedBase >= 0 && info.baseOffset() != expectedBase) {
                        throw new CorruptLogException(where(segment), info.position(), "batch base offset "
                                + info.baseOffset() + " where " + expectedBase + " was expected");
                    }
                    expectedBase = info.nextOffset();
                    if (!visitor.visit(info, cursor.batch())) {
                        return new Position(info.nextOffset(), segment, info.endPosition());
                    }
                    position = info.endPosition();
                    nextOffset = info.nextOffset();
                }
                if (verify && (step == SegmentCursor.Step.CORRUPT || !last)) {
                    throw new StaleHint();
                }
                if (step == SegmentCursor.Step.FULL) {
                    return new Position(nextOffset, segment, position);
                }
                if (step == SegmentCursor.Step.CORRUPT) {
                    throw new CorruptLogException(where(segment), cursor.position(), cursor.problem());
                }
                if (step == SegmentCursor.Step.INCOMPLETE && !last) {
                    throw new CorruptLogException(where(segment), cursor.position(), "batch cut short before a later segment");
                }
            } catch (NoSuchFileException e) {
                // Retention removed the segment while we walked it; the caller re-resolves from the index.
                throw new SegmentGoneException(partition, segment);
            } catch (IOException e) {
                throw new UncheckedIOException("read of " + where(segment) + " failed", e);
            }
            if (last) {
                return new Position(nextOffset, segment, position);
            }
            // A newer segment exists, so this one is sealed and fully walked.
            index++;
            segment = bases.get(index);
            position = 0;
            if (expectedBase >= 0 && segment != expectedBase) {
                throw new CorruptLogException(where(segment), 0, "segment " + segment
                        + " follows a segment ending at offset " + expectedBase);
            }
            expectedBase = segment;
        }
    }

    /**
     * Reads records with offsets {@code >= fromOffset}: at most {@code maxRecords}, and stops once
     * {@code maxBytes} is reached (but always returns at least one record if one is visible).
     *
     * @param hint where to start looking, e.g. from the index: a batch boundary at or before {@code fromOffset};
     *             null to search from the start of the segment holding {@code fromOffset}
     * @throws IllegalArgumentException if {@code fromOffset} lies below the oldest hot segment
     */
    public ReadResult read(long fromOffset, Position hint, int maxRecords, int maxBytes) {
        Position start = startFor(fromOffset, hint);
        try {
            return read(fromOffset, start, true, maxRecords, maxBytes);
        } catch (StaleHint e) {
            return read(fromOffset, segmentStart(start), false, maxRecords, maxBytes);
        }
    }

    private ReadResult read(long fromOffset, Position start, boolean hinted, int maxRecords, int maxBytes) {
        List<LogRecord> out = new ArrayList<>();
        int[] bytes = {0};
        scan(start, null, (info, batch) -> {
            if (info.lastOffset() < fromOffset) {
                return true;
            }
            List<LogRecord> decoded = new ArrayList<>();
            RecordBatchCodec.decode(batch, fromOffset, maxRecords - out.size(), decoded);
            for (LogRecord r : decoded) {
                if (!out.isEmpty() && bytes[0] + r.sizeInBytes() > maxBytes) {
                    return false;
                }
                out.add(r);
                bytes[0] += r.sizeInBytes();
            }
            return out.size() < maxRecords && bytes[0] < maxBytes;
        }, hinted);
        long next = out.isEmpty() ? fromOffset : out.get(out.size() - 1).offset() + 1;
        return new ReadResult(out, next);
    }

    /** {@link #readBatches(long, Position, int, int, ReadMemory)} into heap memory. */
    public BatchRead readBatches(long fromOffset, Position hint, int maxRecords, int maxBytes) {
        return readBatches(fromOffset, hint, maxRecords, maxBytes, ReadMemory.HEAP);
    }

    /**
     * Whole batches holding offsets {@code >= fromOffset}, as stored (see {@link BatchRead}): batches are added until
     * {@code maxRecords} records or {@code maxBytes} bytes are reached, and at least one is returned if one is
     * visible. Every batch passed the same checks as in {@link #read}; no record is decoded. The file is read
     * straight into {@code memory} and the batches are checked where they land ({@link BatchCollector}); the caller
     * closes the result.
     *
     * @param hint as for {@link #read}
     * @throws IllegalArgumentException if {@code fromOffset} lies below the oldest hot segment
     */
    public BatchRead readBatches(long fromOffset, Position hint, int maxRecords, int maxBytes, ReadMemory memory) {
        Position start = startFor(fromOffset, hint);
        try {
            return readBatches(fromOffset, start, true, maxRecords, maxBytes, memory);
        } catch (StaleHint e) {
            return readBatches(fromOffset, segmentStart(start), false, maxRecords, maxBytes, memory);
        }
    }

    private BatchRead readBatches(long fromOffset, Position start, boolean hinted, int maxRecords, int maxBytes,
                                  ReadMemory memory) {
        BatchCollector out = new BatchCollector(fromOffset, maxRecords, maxBytes, memory);
        try {
            scan(start, out.window(), out::add, hinted);
            return out.build();
        } catch (RuntimeException e) {
            out.abandon();
            throw e;
        }
    }

    /**
     * Whole batches holding offsets {@code >= fromOffset} as a range of one segment file, found from the batch
     * headers alone (one small read per batch, no record byte read or CRC-checked): batches are taken under the
     * same rule as {@link #readBatches} ({@code maxRecords}, {@code maxBytes}, the first always), but never past
     * {@code end} nor past the end of one segment (the next read continues in the next one); where the next batch
     * exceeds {@code maxBytes}, its first bytes up to the limit go with them ({@link BatchSlice#sentLength}), never
     * past {@code end}. {@code end} is a visible end from the index ({@code HotIndexer.catchUp}), which validated
     * every batch below it, CRCs included, when it indexed them; the receiver checks the CRCs again, as Kafka's
     * clients do.
     *
     * <p>The segment file is opened first and the range found through that channel, so the range and the bytes
     * sent are of the same file, even if the cleaner replaces it or retention deletes it meanwhile.
     *
     * @param hint as for {@link #read}
     * @return the batches, owning their open channel; or null when the headers do not lead to a batch cleanly (a
     *         stale hint, a header that disagrees with its neighbours, nothing below {@code end}): the caller then
     *         reads with {@link #readBatches}, which checks every byte and answers what is wrong
     * @throws IllegalArgumentException if {@code fromOffset} lies below the oldest hot segment
     * @throws SegmentGoneException     if the segment was removed before it was opened
     */
    public BatchSlice sliceBatches(long fromOffset, Position hint, int maxRecords, int maxBytes, Position end) {
        return sliceBatches(fromOffset, hint, maxRecords, maxBytes, end, null);
    }

    /**
     * As {@link #sliceBatches(long, Position, int, int, Position)}, with the segment bases as the caller listed them
     * after taking {@code end} (a fetch lists them anyway for its range check), so the directory is not listed twice.
     *
     * @param listed ascending segment bases listed after {@code end} was taken, or null to list them here
     */
    public BatchSlice sliceBatches(long fromOffset, Position hint, int maxRecords, int maxBytes, Position end,
                                   List<Long> listed) {
        return sliceBatches(fromOffset, hint, maxRecords, maxBytes, end, listed, null);
    }

    /**
     * As {@link #sliceBatches(long, Position, int, int, Position, List)}, taking the range from {@code known} (the
     * indexer's positions of the newest segment's batches) when it holds it, instead of reading every header on
     * the way: only the range's first and last batch headers are read, and must name the batches {@code known} says
     * are there (a segment compacted or a log rewritten since would not), else the headers are walked as without it.
     *
     * @param known where the newest segment's batches begin, or null
     */
    public BatchSlice sliceBatches(long fromOffset, Position hint, int maxRecords, int maxBytes, Position end,
                                   List<Long> listed, BatchPositions known) {
        List<Long> bases = listed != null ? listed : segmentBases();
        long segment = SegmentFiles.floor(bases, fromOffset);
        if (segment < 0) {
            throw new IllegalArgumentException(partition + ": offset " + fromOffset + " is below the hot tier");
        }
        Position start = hint != null && hint.segmentBase() == segment && hint.offset() <= fromOffset
                ? hint : new Position(segment, segment, 0);
        ByteBuffer header = ByteBuffer.allocate(RecordBatchCodec.HEADER_SIZE);
        for (int index = bases.indexOf(segment); segment <= end.segmentBase(); ) {
            FileChannel ch;
            try {
                ch = FileChannel.open(SegmentFiles.log(dir, segment), StandardOpenOption.READ);
            } catch (NoSuchFileException e) {
                throw new SegmentGoneException(partition, segment);
            } catch (IOException e) {
                throw new UncheckedIOException("open of " + where(segment) + " failed", e);
            }
            BatchSlice slice = null;
            try {
                long limit = segment == end.segmentBase() ? end.position() : ch.size();
                BatchPositions.Span span = known == null ? null
                        : known.span(segment, fromOffset, maxRecords, maxBytes, limit);
                slice = span != null && inFile(ch, span, header) ? new BatchSlice(ch, segment, span.position(),
                        (int) span.length(), span.nextOffset(), span.records(), span.partialBatch())
                        : slice(ch, segment, start, fromOffset, maxRecords, maxBytes, limit, header);
            } catch (IOException e) {
                throw new UncheckedIOException("read of " + where(segment) + " failed", e);
            } finally {
                if (slice == null || slice.length() == 0) {
                    closeQuietly(ch);
                }
            }
            if (slice == null) {
                return null;
            }
            if (slice.length() > 0) {
                return slice;
            }
            // Nothing at or above fromOffset in this segment (a compacted tail): the next one holds it.
            if (segment == end.segmentBase() || ++index >= bases.size()) {
                return null;
            }
            segment = bases.get(index);
            start = new Position(segment, segment, 0);
        }
        return null;
    }

    /**
     * The batches of one open segment from {@code start} below {@code limit}: a slice (of length 0 when every batch
     * there lies below {@code fromOffset}), or null when a header disagrees (see {@link #sliceBatches}).
     */
    private static BatchSlice slice(FileChannel ch, long segment, Position start, long fromOffset, int maxRecords,
                                    int maxBytes, long limit, ByteBuffer header) throws IOException {
        long position = start.position();
        // A hint must name the boundary of the batch with its offset; the segment's first batch has its base.
        long expectedBase = position == 0 ? segment : start.offset();
        long first = -1;
        long kept = 0;
        int records = 0;
        long next = fromOffset;
        int partial = 0;
        while (position + RecordBatchCodec.HEADER_SIZE <= limit) {
            header.clear();
            while (header.hasRemaining()) {
                if (ch.read(header, position + header.position()) < 0) {
                    return null;
                }
            }
            long base = header.getLong(0);
            long size = RecordBatchCodec.LOG_OVERHEAD + (long) header.getInt(RecordBatchCodec.LENGTH_OFFSET);
            if (header.get(RecordBatchCodec.MAGIC_OFFSET) != 2 || size < RecordBatchCodec.HEADER_SIZE
                    || position + size > limit || base != expectedBase) {
                return null;
            }
            long last = base + header.getInt(RecordBatchCodec.LAST_OFFSET_DELTA_OFFSET);
            if (last < base) {
                return null;
            }
            expectedBase = last + 1;
            if (last >= fromOffset) {
                if (kept > 0 && kept + size > maxBytes) {
                    partial = (int) (maxBytes - kept); // the batch lies below limit (checked above) and exceeds this
                    break;
                }
                if (first < 0) {
                    first = position;
                }
                kept += size;
                records += (int) (last - Math.max(base, fromOffset) + 1);
                next = last + 1;
                if (records >= maxRecords || kept >= maxBytes) {
                    break;
                }
            }
            position += size;
        }
        if (kept > Integer.MAX_VALUE) {
            return null;
        }
        return new BatchSlice(ch, segment, Math.max(first, 0), (int) kept, next, records, partial);
    }

    /** Whether the file holds the first and the last batch of {@code span} where it says (base offset and size). */
    private static boolean inFile(FileChannel ch, BatchPositions.Span span, ByteBuffer header) throws IOException {
        return span.length() <= Integer.MAX_VALUE
                && headerIs(ch, span.position(), span.firstBase(), span.firstSize(), header)
                && (span.lastPosition() == span.position()
                || headerIs(ch, span.lastPosition(), span.lastBase(), span.lastSize(), header));
    }

    private static boolean headerIs(FileChannel ch, long position, long base, int size, ByteBuffer header)
            throws IOException {
        header.clear().limit(RecordBatchCodec.MAGIC_OFFSET + 1);
        while (header.hasRemaining()) {
            if (ch.read(header, position + header.position()) < 0) {
                return false;
            }
        }
        return header.getLong(0) == base && header.get(RecordBatchCodec.MAGIC_OFFSET) == 2
                && RecordBatchCodec.LOG_OVERHEAD + (long) header.getInt(RecordBatchCodec.LENGTH_OFFSET) == size;
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // read-only
        }
    }

    private static Position segmentStart(Position p) {
        return new Position(p.segmentBase(), p.segmentBase(), 0);
    }

    /** A read hint that no longer names a batch boundary (its segment was compacted since); see {@link #scan}. */
    private static final class StaleHint extends RuntimeException {
        StaleHint() {
            super(null, null, false, false);
        }
    }

    private Position startFor(long fromOffset, Position hint) {
        long segment = SegmentFiles.floor(segmentBases(), fromOffset);
        if (segment < 0) {
            throw new IllegalArgumentException(partition + ": offset " + fromOffset + " is below the hot tier");
        }
        return hint != null && hint.segmentBase() == segment && hint.offset() <= fromOffset
                ? hint : new Position(segment, segment, 0);
    }

    /**
     * The visible end of the log: the offset after the last visible batch and where it lies. Scans forward from
     * {@code known} (a previously returned end, or null to start from the newest checkpoint or oldest segment).
     */
    public Position end(Position known) {
        List<Long> bases = segmentBases();
        if (bases.isEmpty()) {
            return new Position(0, 0, 0);
        }
        if (known != null && bases.contains(known.segmentBase())) {
            try {
                return scan(known, null, (info, batch) -> true, true);
            } catch (StaleHint e) {
                // known lay in a segment compacted since; fall through to a start that is still a boundary
            }
        }
        return scan(checkpointOrStart(bases), (info, batch) -> true);
    }

    private Position checkpointOrStart(List<Long> bases) {
        List<Long> snapshots = SegmentFiles.snapshotOffsets(dir);
        for (int i = snapshots.size() - 1; i >= 0; i--) {
            ProducerSnapshot s = ProducerSnapshot.read(dir, snapshots.get(i)).orElse(null);
            if (s != null && bases.contains(s.segmentBase())) {
                return new Position(s.nextOffset(), s.segmentBase(), s.position());
            }
        }
        return new Position(bases.get(0), bases.get(0), 0);
    }

    private String where(long segment) {
        return partition + " segment " + SegmentFiles.logName(segment);
    }

    /** A segment disappeared (retention or topic deletion) while it was being read. */
    public static final class SegmentGoneException extends RuntimeException {
        public SegmentGoneException(TopicPartition partition, long segment) {
            super(partition + ": segment " + segment + " was removed while being read");
        }
    }
}
