package io.tierlog.tiering;

import io.tierlog.log.BatchCollector;
import io.tierlog.log.BatchRead;
import io.tierlog.log.ReadMemory;
import io.tierlog.log.ErrorType;
import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads records from the cold tier.
 *
 * <h2>Read path</h2>
 * The offset is resolved to a cold segment by the (cached) manifest, to a byte position by the segment's
 * sidecar (one small GET, cached in memory; not needed for a segment's first offset, which is at position 0), then
 * batches are read from the segment object in fixed-size chunks through the {@link ChunkCache}. A point read (a
 * read at a random offset) fetches just the chunk it needs, so its first record comes after one small GET. Once a
 * reader is found sequential ({@link ReadAhead}: it moves on into the next chunk, continues where its last read
 * stopped, or starts at a segment's first byte), ranged GETs of growing size (two chunks, doubling up to
 * {@code rangeBytes}) are requested ahead of it until {@code readAheadBytes} are, continuing across segments, so a
 * replay finds its next chunks already fetched, makes one GET per {@code rangeBytes} (or per segment, for smaller
 * segments) instead of one per chunk, and crosses segment boundaries without a pipeline bubble. How many GETs run
 * at once is the fetch executor's size ({@code fetchThreads}); the window is deeper than one GET on purpose: a
 * reader busy decoding falls behind its GETs now and then, and every landed-but-unread byte would otherwise be a
 * byte fewer on the wire (docs/adr/0017-cold-read-ranges.md).
 *
 * <h2>Sequential replay</h2>
 * A read that stops inside a segment (or at a segment's end) leaves a resume hint keyed by its {@code nextOffset}:
 * the batch holding that offset, the byte position of its next record, and the reader's read-ahead state. A read starting at exactly that offset continues there instead
 * of walking (and CRC-checking) again from the sidecar entry before it and parsing the records it already returned.
 * Hints are bounded ({@value #RESUME_HINTS} of them, least recently used dropped) and only ever shortcut the walk:
 * the batch is still validated, and a missing hint just means the sidecar is used. Records are decoded by
 * {@link ColdBatchDecoder}, since decoding is the reading thread's main cost.
 *
 * <h2>Background fetches</h2>
 * Read-ahead (chunks) runs on the fetch executor. A background fetch that fails is dropped and
 * counted nowhere: the read that needs the data fetches it itself, so a failed prefetch (a throttled or dropped
 * GET) costs that read a round trip and never fails it on its own.
 *
 * <h2>Validation</h2>
 * Every batch is checked like a hot read ({@link RecordBatchCodec#validate}: length, magic, CRC32C) and must
 * continue the offsets of the one before. A failure drops the chunks it came from and re-reads them from the store
 * once (a damaged cache file is not corruption of the log); if the store's bytes fail too,
 * {@link CorruptLogException} is thrown. Corrupt bytes are never returned.
 *
 * <h2>Errors</h2>
 * An unreachable store is {@link ErrorType#COLD_TIER_UNAVAILABLE} (503). An offset that retention removed meanwhile
 * is {@link ErrorType#OFFSET_OUT_OF_RANGE} with {@code logStartOffset}.
 *
 * <p>Thread-safe.
 */
public final class ColdReader {
    private static final Logger LOG = LoggerFactory.getLogger(ColdReader.class);
    private static final int SIDECARS_CACHED = 1024;
    static final int RESUME_HINTS = 1024;

    private final ObjectStore store;
    private final ManifestStore manifests;
    private final ChunkCache chunks;
    private final long readAheadBytes;
    private final int rangeChunks;
    /** Where reads that stopped inside a segment would continue. Guarded by itself. */
    private final Map<ResumeKey, Resume> resumes = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ResumeKey, Resume> eldest) {
            return size() > RESUME_HINTS;
        }
    };
    private final Map<ObjectKey, SegmentSidecar> sidecars = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<ObjectKey, SegmentSidecar> eldest) {
                    return size() > SIDECARS_CACHED;
                }
            });

    /**
     * @param readAheadBytes bytes requested ahead of a sequential reader (0: none); the chunk cache runs the GETs on
     *                       its fetch executor
     * @param rangeBytes     the largest read-ahead GET (whole chunks; at least one)
     */
    ColdReader(ObjectStore store, ManifestStore manifests, ChunkCache chunks, long readAheadBytes, int rangeBytes) {
        this.store = store;
        this.manifests = manifests;
        this.chunks = chunks;
        this.readAheadBytes = readAheadBytes;
        this.rangeChunks = Math.max(1, rangeBytes / chunks.chunkBytes());
    }

    /**
     * Records with offsets {@code >= offset} from the cold tier: at most {@code maxRecords}, stopping once
     * {@code maxBytes} is reached (at least one record if any). Crosses cold segments; stops at the cold end.
     * Returns no records (and {@code nextOffset == offset}) when {@code offset} is at or above the cold end: the
     * caller reads the hot tier from there.
     *
     * @throws TierlogException {@code offset-out-of-range} below {@code logStartOffset}, {@code cold-tier-unavailable}
     * @throws CorruptLogException if stored bytes fail validation
     */
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        return withManifest(tp, offset, m -> readOnce(tp, offset, maxRecords, maxBytes, m));
    }

    /**
     * Whole batches holding offsets {@code >= offset} from the cold tier, as stored (see {@link BatchRead}): batches
     * are added until {@code maxRecords} records or {@code maxBytes} bytes are reached, at least one if any. Every
     * batch passed the same checks as in {@link #read}; no record is decoded. Crosses cold segments and stops at the
     * cold end; empty (with {@code nextOffset == offset}) at or above it.
     *
     * @throws TierlogException {@code offset-out-of-range} below {@code logStartOffset}, {@code cold-tier-unavailable}
     * @throws CorruptLogException if stored bytes fail validation
     */
    public BatchRead readBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        return readBatches(tp, offset, maxRecords, maxBytes, ReadMemory.HEAP);
    }

    /** As {@link #readBatches(TopicPartition, long, int, int)}, the batches copied into {@code memory}; the caller closes the result. */
    public BatchRead readBatches(TopicPartition tp, long offset, int maxRecords, int maxBytes, ReadMemory memory) {
        return withManifest(tp, offset, m -> {
            BatchCollector out = new BatchCollector(offset, maxRecords, maxBytes, memory);
            try {
                return readBatchesOnce(tp, offset, out, m);
            } catch (RuntimeException e) {
                out.abandon();
                throw e;
            }
        });
    }

    /**
     * The aborted transactions of the cold segments overlapping {@code [fromOffset, toOffsetExclusive)} that overlap
     * that range ({@code lastOffset >= fromOffset}, {@code firstOffset < toOffsetExclusive}), from the segments'
     * sidecars, ordered by first offset and without duplicates (a transaction spanning segments is in each sidecar):
     * what a read_committed fetch served by {@link #readBatches} tells its consumer to drop. Only read_committed
     * readers ask, so a plain replay still needs no sidecar for a segment it reads from its start. Segments tiered
     * before transactions (version 1 sidecars) have none.
     *
     * @throws TierlogException {@code cold-tier-unavailable}
     * @throws CorruptLogException if a sidecar is damaged
     */
    public List<AbortedTransaction> abortedTransactions(TopicPartition tp, long fromOffset, long toOffsetExclusive) {
        if (toOffsetExclusive <= fromOffset) {
            return List.of();
        }
        return withManifest(tp, fromOffset, m -> {
            List<AbortedTransaction> out = List.of();
            List<ColdSegment> segments = m.segments();
            int first = m.segmentIndexFor(fromOffset);
            if (first < 0) {
                first = fromOffset < m.coldStart() ? 0 : segments.size();
            }
            for (int i = first; i < segments.size()
                    && segments.get(i).baseOffset() < toOffsetExclusive; i++) {
                out = PartitionTransactions.union(out, sidecar(segments.get(i)).aborted(fromOffset, toOffsetExclusive));
            }
            return out;
        });
    }

    /**
     * Runs a read against the cached manifest, and once more against a freshly loaded one if an object it names is
     * gone (retention or topic deletion removed it after the manifest was cached). An unreachable store, on either
     * attempt, is {@code cold-tier-unavailable}.
     */
    private <T> T withManifest(TopicPartition tp, long offset, Function<Manifest, T> read) {
        try {
            try {
                return read.apply(manifestFor(tp, offset));
            } catch (ObjectNotFoundException e) {
                return read.apply(freshManifestFor(tp, offset));
            }
        } catch (ObjectStoreUnavailableException e) {
            throw unavailable(tp, e);
        }
    }

    private BatchRead readBatchesOnce(TopicPartition tp, long offset, BatchCollector out, Manifest m) {
        List<ColdSegment> segments = m.segments();
        int index = m.segmentIndexFor(offset);
        if (index < 0) {
            return out.build();
        }
        // A sequential reader's next read starts where this one stopped: at a batch boundary, so a resume hint
        // (kept for whole batches only) saves the sidecar lookup and the walk up to it.
        Resume hint = resumeHint(tp, offset, segments.get(index));
        Resume resume = hint != null && hint.progress() == ColdBatchDecoder.Progress.START ? hint : null;
        ReadAhead ra = null;
        long want = offset;
        while (index < segments.size() && !out.full()) {
            ColdSegment s = segments.get(index);
            SegmentSidecar.Entry start = resume != null
                    ? new SegmentSidecar.Entry(resume.baseOffset(), resume.position(), -1) : walkStart(s, want);
            if (ra == null) {
                ra = readAhead(segments, index, hint, start.position());
            }
            SegmentWalk walk = new SegmentWalk(tp, s, index, ra, start.position(), start.baseOffset(), out);
            resume = null;
            BatchView b;
            boolean more = true;
            while (more && (b = walk.next()) != null) {
                more = out.add(b.info(), b.bytes());
            }
            if (!more || walk.refused()) {
                BatchRead read = out.build();
                // The walk stands right after the last batch taken, or before the one the byte limit turned away.
                if (read.nextOffset() == walk.expectedBase() && walk.position() < s.sizeBytes()) {
                    remember(tp, read.nextOffset(), new Resume(s.segmentKey(), walk.position(), walk.expectedBase(),
                            ColdBatchDecoder.Progress.START, ra.state()));
                }
                return read;
            }
            want = s.nextOffset();
            index++;
        }
        BatchRead read = out.build();
        rememberAtSegmentStart(tp, read.nextOffset(), segments, index, ra);
        return read;
    }

    /** The read-ahead of a read starting in {@code segments.get(index)} at {@code position}, after {@code hint}. */
    private ReadAhead readAhead(List<ColdSegment> segments, int index, Resume hint, long position) {
        return hint != null
                ? ReadAhead.resumed(chunks, segments, readAheadBytes, rangeChunks, hint.readAhead(), index)
                : ReadAhead.fresh(chunks, segments, readAheadBytes, rangeChunks, position == 0);
    }

    /**
     * A read that stopped exactly at the end of a segment leaves a hint at the next one's start, so the next read of
     * the same reader keeps its read-ahead window rather than starting it small again.
     */
    private void rememberAtSegmentStart(TopicPartition tp, long nextOffset, List<ColdSegment> segments, int index,
                                        ReadAhead ra) {
        if (ra != null && index < segments.size() && segments.get(index).baseOffset() == nextOffset) {
            ColdSegment s = segments.get(index);
            remember(tp, nextOffset, new Resume(s.segmentKey(), 0, s.baseOffset(), ColdBatchDecoder.Progress.START,
                    ra.state()));
        }
    }

    /**
     * The first cold record with timestamp {@code >= timestamp}, if the cold tier holds one. Uses the manifest's
     * per-segment max timestamps, then the sidecar's, then scans batches from there.
     */
    public Optional<OffsetAndTimestamp> offsetForTimestamp(TopicPartition tp, long timestamp) {
        try {
            Manifest m = manifests.cached(tp);
            List<ColdSegment> segments = m.segments();
            for (int i = 0; i < segments.size(); i++) {
                ColdSegment s = segments.get(i);
                if (s.maxTimestamp() < timestamp) {
                    continue;
                }
                SegmentSidecar.Entry entry = sidecar(s).firstWithTimestampAtLeast(timestamp);
                if (entry == null) {
                    continue;
                }
                ReadAhead ra = ReadAhead.fresh(chunks, segments, readAheadBytes, rangeChunks, false);
                SegmentWalk walk = new SegmentWalk(tp, s, i, ra, entry.position(), entry.baseOffset(), null);
                BatchView b;
                while ((b = walk.next()) != null) {
                    if (b.info().maxTimestamp() < timestamp) {
                        continue;
                    }
                    List<LogRecord> records = new ArrayList<>();
                    RecordBatchCodec.decode(b.bytes(), 0, Integer.MAX_VALUE, records);
                    for (LogRecord r : records) {
                        if (r.timestamp() >= timestamp) {
                            return Optional.of(new OffsetAndTimestamp(r.offset(), r.timestamp()));
                        }
                    }
                }
            }
            return Optional.empty();
        } catch (ObjectStoreUnavailableException e) {
            throw unavailable(tp, e);
        }
    }

    private ReadResult readOnce(TopicPartition tp, long offset, int maxRecords, int maxBytes, Manifest m) {
        List<LogRecord> out = new ArrayList<>();
        ColdBatchDecoder.Budget budget = new ColdBatchDecoder.Budget(maxRecords, maxBytes);
        long want = offset;
        List<ColdSegment> segments = m.segments();
        int index = m.segmentIndexFor(want);
        if (index < 0) {
            return new ReadResult(List.of(), offset);
        }
        Resume resume = resumeHint(tp, offset, segments.get(index));
        ReadAhead ra = null;
        while (index < segments.size() && !budget.full()) {
            ColdSegment s = segments.get(index);
            SegmentSidecar.Entry start = resume != null
                    ? new SegmentSidecar.Entry(resume.baseOffset(), resume.position(), -1) : walkStart(s, want);
            if (ra == null) {
                ra = readAhead(segments, index, resume, start.position());
            }
            SegmentWalk walk = new SegmentWalk(tp, s, index, ra, start.position(), start.baseOffset(), null);
            BatchView b;
            while (!budget.full() && (b = walk.next()) != null) {
                if (b.info().lastOffset() < want) {
                    continue;
                }
                ColdBatchDecoder.Progress from = resume != null && b.info().position() == resume.position()
                        ? resume.progress() : ColdBatchDecoder.Progress.START;
                resume = null;
                ColdBatchDecoder.Progress stop;
                try {
                    stop = ColdBatchDecoder.decode(b.bytes(), from, want, budget, out);
                } catch (IllegalStateException e) {
                    // CRC-valid yet malformed records: written so by a bug, not damaged since; never served.
                    throw new CorruptLogException(tp + " cold segment " + s.segmentKey(), b.info().position(),
                            e.getMessage());
                }
                if (!out.isEmpty()) {
                    want = out.get(out.size() - 1).offset() + 1;
                }
                if (stop != null) {
                    remember(tp, want, new Resume(s.segmentKey(), b.info().position(), b.info().baseOffset(), stop,
                            ra.state()));
                } else if (budget.full() && walk.position() < s.sizeBytes()) {
                    remember(tp, want, new Resume(s.segmentKey(), walk.position(), walk.expectedBase(),
                            ColdBatchDecoder.Progress.START, ra.state()));
                } else if (budget.full()) {
                    rememberAtSegmentStart(tp, want, segments, index + 1, ra);
                }
            }
            resume = null;
            if (budget.full()) {
                break;
            }
            want = s.nextOffset();
            index++;
        }
        long nextOffset = out.isEmpty() ? offset : out.get(out.size() - 1).offset() + 1;
        return new ReadResult(out, nextOffset);
    }

    /** The hint a read that stopped at {@code offset} inside {@code segment} left, if any. */
    private Resume resumeHint(TopicPartition tp, long offset, ColdSegment segment) {
        Resume r;
        synchronized (resumes) {
            r = resumes.get(new ResumeKey(tp, offset));
        }
        return r != null && r.segmentKey().equals(segment.segmentKey()) ? r : null;
    }

    private void remember(TopicPartition tp, long offset, Resume resume) {
        synchronized (resumes) {
            resumes.put(new ResumeKey(tp, offset), resume);
        }
    }

    /** How many resume hints are held (for tests of the bound). */
    int resumeHints() {
        synchronized (resumes) {
            return resumes.size();
        }
    }

    private Manifest manifestFor(TopicPartition tp, long offset) {
        Manifest m = manifests.cached(tp);
        if (offset < m.logStartOffset() || m.segmentFor(offset).isEmpty()) {
            return freshManifestFor(tp, offset);
        }
        return m;
    }

    private Manifest freshManifestFor(TopicPartition tp, long offset) {
        Manifest m = manifests.load(tp);
        if (offset < m.logStartOffset()) {
            throw new TierlogException(ErrorType.OFFSET_OUT_OF_RANGE, "offset " + offset + " of " + tp
                    + " is below logStartOffset " + m.logStartOffset(),
                    Map.of("logStartOffset", m.logStartOffset()));
        }
        return m;
    }

    /**
     * The batch a walk for {@code offset} starts at in {@code s}. A segment's first batch is at position 0, so a read
     * from a segment's first offset (offset 0, and every segment a sequential replay walks into) needs no sidecar: one
     * dependent GET less before its first byte, and none per segment of a replay.
     */
    private SegmentSidecar.Entry walkStart(ColdSegment s, long offset) {
        return offset <= s.baseOffset() ? new SegmentSidecar.Entry(s.baseOffset(), 0, -1) : sidecar(s).floor(offset);
    }

    private SegmentSidecar sidecar(ColdSegment s) {
        SegmentSidecar cached = sidecars.get(s.indexKey());
        return cached != null ? cached : fetchSidecar(s);
    }

    private SegmentSidecar fetchSidecar(ColdSegment s) {
        SegmentSidecar parsed;
        try {
            parsed = SegmentSidecar.fromBytes(store.get(s.indexKey()));
        } catch (IllegalArgumentException e) {
            throw new CorruptLogException("cold sidecar " + s.indexKey(), 0, e.getMessage());
        }
        sidecars.put(s.indexKey(), parsed);
        return parsed;
    }

    private static TierlogException unavailable(TopicPartition tp, ObjectStoreUnavailableException e) {
        return new TierlogException(ErrorType.COLD_TIER_UNAVAILABLE, "the cold tier holding " + tp
                + " cannot be reached; retry later: " + e.getMessage(),
                Map.of("topic", tp.topic(), "partition", tp.partition()), e);
    }

    private record BatchView(BatchInfo info, ByteBuffer bytes) {
    }

    private record ResumeKey(TopicPartition tp, long offset) {
    }

    /**
     * Continue in {@code segmentKey} at the batch at {@code position} (base {@code baseOffset}), record
     * {@code progress}, with the reader's read-ahead as it was.
     */
    private record Resume(ObjectKey segmentKey, long position, long baseOffset, ColdBatchDecoder.Progress progress,
                          ReadAhead.State readAhead) {
    }

    /**
     * Walks validated batches of one cold segment object from a batch boundary. Not thread-safe.
     *
     * <p>A walk that feeds a {@link BatchCollector} (its sink) asks it first whether it takes a batch of the announced
     * size, and stops before one it would turn away, without reading or checking it; the read's resume hint then
     * points at that batch. A batch that spans chunks is assembled in the sink's own memory, where the sink keeps it,
     * so each batch is copied once on its way out of the chunks.
     */
    private final class SegmentWalk {
        private final TopicPartition tp;
        private final ColdSegment segment;
        /** The segment's index in the read's manifest. */
        private final int segmentIndex;
        private final ReadAhead readAhead;
        private final BatchCollector sink;
        private long position;
        private long expectedBase;
        private boolean refused;

        /** @param sink the collector the batches go to, or null: each batch then comes in memory of its own */
        SegmentWalk(TopicPartition tp, ColdSegment segment, int segmentIndex, ReadAhead readAhead, long position,
                    long base, BatchCollector sink) {
            this.tp = tp;
            this.segment = segment;
            this.segmentIndex = segmentIndex;
            this.readAhead = readAhead;
            this.sink = sink;
            this.position = position;
            this.expectedBase = base;
        }

        /** Whether the last {@link #next} stopped before a batch the sink does not take. */
        boolean refused() {
            return refused;
        }

        long position() {
            return position;
        }

        long expectedBase() {
            return expectedBase;
        }

        /** The next valid batch, or null at the segment's end or before a batch the sink does not take. */
        BatchView next() {
            refused = false;
            if (position >= segment.sizeBytes()) {
                if (expectedBase != segment.nextOffset()) {
                    throw corrupt(position, "segment ends at offset " + (expectedBase - 1) + ", manifest says "
                            + segment.lastOffset());
                }
                return null;
            }
            String problem = null;
            for (int attempt = 0; attempt < 2; attempt++) {
                problem = tryRead();
                if (problem == null) {
                    return lastView;
                }
                if (attempt == 0) {
                    invalidateAround();
                }
            }
            throw corrupt(position, problem);
        }

        private BatchView lastView;

        /**
         * Reads and validates the batch at the position; null on success (see {@link #lastView}, null if the sink
         * turned the batch away), else why not.
         */
        private String tryRead() {
            if (position + RecordBatchCodec.LOG_OVERHEAD > segment.sizeBytes()) {
                return "batch header runs past the end of the object";
            }
            ByteBuffer header = bytes(position, RecordBatchCodec.LOG_OVERHEAD, null);
            long size = RecordBatchCodec.announcedSize(header);
            if (size < RecordBatchCodec.HEADER_SIZE || position + size > segment.sizeBytes()) {
                return "announced batch size " + size + " is impossible at " + position;
            }
            if (sink != null && !sink.admits(size)) {
                refused = true;
                lastView = null;
                return null;
            }
            ByteBuffer batch = bytes(position, (int) size, sink);
            String invalid = RecordBatchCodec.validate(batch);
            if (invalid != null) {
                return invalid;
            }
            BatchInfo info = RecordBatchCodec.info(segment.baseOffset(), position, batch);
            if (info.baseOffset() != expectedBase) {
                return "batch base offset " + info.baseOffset() + " where " + expectedBase + " was expected";
            }
            position += size;
            expectedBase = info.nextOffset();
            lastView = new BatchView(info, batch);
            return null;
        }

        /** Drops the cached chunks from the failing batch on, so the retry reads the store's own bytes. */
        private void invalidateAround() {
            long count = chunks.chunkCount(segment.sizeBytes());
            for (long c = position / chunks.chunkBytes(); c < count; c++) {
                chunks.invalidate(segment.segmentKey(), c);
            }
            currentIndex = -1;
            current = null;
        }

        /**
         * {@code n} bytes at {@code at}: a view of the chunk holding them, or, if they span chunks, assembled in
         * {@code into}'s {@link BatchCollector#room} (or new memory, without one). Schedules read-ahead on entering a
         * new chunk.
         */
        private ByteBuffer bytes(long at, int n, BatchCollector into) {
            int chunkBytes = chunks.chunkBytes();
            long firstChunk = at / chunkBytes;
            long lastChunk = (at + n - 1) / chunkBytes;
            if (firstChunk == lastChunk) {
                int from = (int) (at - firstChunk * chunkBytes);
                ByteBuffer c = chunk(firstChunk, from + n);
                if (from + n > c.limit()) {
                    throw corrupt(at, "object is shorter than the manifest says");
                }
                return c.slice(from, n);
            }
            ByteBuffer out = into != null ? into.room(n) : ByteBuffer.allocate(n);
            long p = at;
            for (long ci = firstChunk; ci <= lastChunk; ci++) {
                int from = (int) (p - ci * chunkBytes);
                ByteBuffer c = chunk(ci, from + out.remaining());
                int take = Math.min(c.limit() - from, out.remaining());
                if (take <= 0) {
                    throw corrupt(at, "object is shorter than the manifest says");
                }
                out.put(c.slice(from, take));
                p += take;
            }
            return out.flip();
        }

        private long currentIndex = -1;
        private ByteBuffer current;

        /**
         * Chunk {@code index}, at least its first {@code needed} bytes (all of it but where it ends early), kept while
         * batches are read from it. Its own GET and the read-ahead are requested
         * before waiting for it ({@link ReadAhead#onChunk}), so the window moves on at once. On a cold start
         * (nothing fetched yet) the chunk's own GET, two chunks so that a first batch crossing the chunk's end
         * comes with it, is queued first and one read-ahead GET of the same size right behind it: the window starts
         * to fill during the first round trip, and little competes with the GET the first record waits for
         * (docs/adr/0036-cold-first-record-one-get.md). Through the fetch threads rather than on this one: a GET
         * on this thread beside the read-ahead's brought the first record no sooner (docs/BENCHMARKS.md, "Cold
         * replay in-process").
         */
        private ByteBuffer chunk(long index, int needed) {
            if (index != currentIndex) {
                readAhead.onChunk(segmentIndex, index);
                currentIndex = index;
                current = null;
            }
            if (current == null || current.limit() < needed && current.limit() < currentLength()) {
                // Only as much as the read needs, while the rest of the chunk may still be on the wire: a batch
                // running a little into this chunk need not wait for its whole GET (ADR 0041).
                current = chunks.getAtLeast(segment.segmentKey(), segment.sizeBytes(), index, needed);
            }
            return current;
        }

        /** The full length of the current chunk. */
        private int currentLength() {
            return chunks.chunkLength(segment.sizeBytes(), currentIndex);
        }

        private CorruptLogException corrupt(long at, String why) {
            return new CorruptLogException(tp + " cold segment " + segment.segmentKey(), at, why);
        }
    }
}
