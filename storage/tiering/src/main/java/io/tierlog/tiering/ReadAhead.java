package io.tierlog.tiering;

import io.tierlog.objectstore.ObjectKey;

import java.util.List;

/**
 * The read-ahead of one cold reader, in the manner of Linux's readahead: a read at a random position (a point read)
 * fetches the chunks it needs, one at a time; once the access is found sequential (the reader moved through a
 * whole chunk into the next, a read continues where the last one of the same reader stopped, or a read starts at
 * a segment's first byte, as a replay does), ranged GETs are requested ahead of the reader, each twice the size of the one before (from two
 * chunks up to {@code maxRangeChunks}), until {@code windowBytes} are requested ahead of it; the window, in bytes,
 * starts at four chunks and doubles each time the reader enters a chunk that needed more GETs. The GETs run on across segment boundaries (each clipped at its object's
 * end), so a replay of segments no larger than a range fetches each of them whole with one GET. A sequential
 * reader's own first GET is the first range (two chunks), with one more range beside it until it lands, so that its
 * first record needs one GET (docs/adr/0036-cold-first-record-one-get.md).
 *
 * <p>Not thread-safe: one per read call. Its {@link State} goes into the read's resume hint, so the next read of
 * the same reader continues the window instead of starting small again (as a file's readahead state lives in its
 * open file). A state whose segments the manifest no longer lists is harmless: the window restarts at the reader.
 */
final class ReadAhead {
    /** What a read leaves to the next one of the same reader. Immutable. */
    record State(boolean sequential, ObjectKey frontierKey, long frontierChunk, int rangeChunks, long windowBytes,
                 ObjectKey lastKey, long lastChunk) {
    }

    private final ChunkCache chunks;
    private final List<ColdSegment> segments;
    private final long maxWindowBytes;
    private final int maxRangeChunks;
    private boolean sequential;
    /** The size of the next read-ahead GET, in chunks (0 before the access was found sequential). */
    private int rangeChunks;
    /** Bytes to keep requested ahead of the reader, at most {@link #maxWindowBytes}. */
    private long windowBytes;
    /** The next chunk to request: chunk {@link #frontierChunk} of segment {@link #frontierSegment} (-1: none yet). */
    private int frontierSegment = -1;
    private long frontierChunk;
    /** The chunk the reader entered last (segment -1: none yet). */
    private int lastSegment = -1;
    private long lastChunk = -1;
    /** Chunks entered in a row, each right after the one before. */
    private int inARow;

    private ReadAhead(ChunkCache chunks, List<ColdSegment> segments, long maxWindowBytes, int maxRangeChunks,
                      boolean sequential) {
        this.chunks = chunks;
        this.segments = segments;
        this.maxWindowBytes = maxWindowBytes;
        this.maxRangeChunks = Math.max(1, maxRangeChunks);
        this.sequential = sequential;
    }

    /**
     * A reader with no history.
     *
     * @param atSegmentStart whether it starts at a segment's first byte (a replay from a segment's first offset),
     *                       which is taken as sequential from the start
     */
    static ReadAhead fresh(ChunkCache chunks, List<ColdSegment> segments, long windowBytes, int maxRangeChunks,
                           boolean atSegmentStart) {
        return new ReadAhead(chunks, segments, windowBytes, maxRangeChunks, atSegmentStart);
    }

    /** A reader continuing where a read that left {@code state} stopped: sequential. */
    static ReadAhead resumed(ChunkCache chunks, List<ColdSegment> segments, long windowBytes, int maxRangeChunks,
                             State state, int fromSegment) {
        ReadAhead ra = new ReadAhead(chunks, segments, windowBytes, maxRangeChunks, true);
        if (state.sequential()) {
            ra.rangeChunks = Math.min(state.rangeChunks(), ra.maxRangeChunks);
            ra.windowBytes = Math.min(state.windowBytes(), windowBytes);
        }
        int frontier = indexOf(segments, state.frontierKey(), fromSegment);
        if (frontier >= 0) {
            ra.frontierSegment = frontier;
            ra.frontierChunk = state.frontierChunk();
        }
        int last = indexOf(segments, state.lastKey(), Math.max(0, fromSegment - 1));
        if (last >= 0) {
            ra.lastSegment = last;
            ra.lastChunk = state.lastChunk();
        }
        return ra;
    }

    State state() {
        boolean frontierKnown = frontierSegment >= 0 && frontierSegment < segments.size();
        return new State(sequential, frontierKnown ? segments.get(frontierSegment).segmentKey() : null,
                frontierChunk, rangeChunks, windowBytes,
                lastSegment >= 0 ? segments.get(lastSegment).segmentKey() : null, lastChunk);
    }

    /** Whether the access has been found sequential (for tests). */
    boolean sequential() {
        return sequential;
    }

    /**
     * The reader enters chunk {@code chunk} of segment {@code segment}: requests the reader's own GET first (unless
     * the chunk is cached or in flight), then finds whether the access is sequential and, if so, tops the window up.
     *
     * <p>A sequential reader whose window has not opened yet (a cold start: a replay's first read) makes its own GET
     * the window's first range, two chunks, and asks for one more range of that size while it is in flight, no
     * more: the first record needs the first batch whole, which often runs past the first chunk's end (a producer's
     * 1 MiB batch does), and every byte requested beside the first GET shares its bandwidth. The window opens fully
     * from the reader's next chunk on, once the first GET has landed (docs/adr/0036-cold-first-record-one-get.md).
     */
    void onChunk(int segment, long chunk) {
        inARow = isNext(segment, chunk) ? inARow + 1 : 0;
        lastSegment = segment;
        lastChunk = chunk;
        boolean coldStart = sequential && rangeChunks == 0 && maxWindowBytes > 0;
        ColdSegment own = segments.get(segment);
        int ownSpan = coldStart ? Math.min(2, maxRangeChunks) : 1;
        chunks.prefetch(own.segmentKey(), own.sizeBytes(), chunk, ownSpan);
        if (!sequential) {
            // Two in a row: the reader went through a whole chunk. One is not enough: a point read walks from the
            // sidecar entry before its offset, which may lie in the chunk before.
            if (inARow < 2) {
                return; // a point read, so far: its own chunks only
            }
            sequential = true;
        }
        if (maxWindowBytes <= 0) {
            return;
        }
        if (rangeChunks == 0) {
            rangeChunks = Math.min(2, maxRangeChunks);
            windowBytes = Math.min(maxWindowBytes, 4L * chunks.chunkBytes());
        }
        if (frontierSegment < segment || (frontierSegment == segment && frontierChunk <= chunk)) {
            // No window yet, or the reader overtook it (prefetches refused, or a jump): start it after the reader
            // and after its own GET.
            frontierSegment = segment;
            frontierChunk = chunk + ownSpan;
            normalize();
        }
        long ahead = bytesAhead(segment, chunk);
        boolean requested = false;
        int gets = 0;
        while (frontierSegment < segments.size() && ahead < windowBytes && (!coldStart || gets < 1)) {
            gets++;
            ColdSegment s = segments.get(frontierSegment);
            int n = (int) Math.min(rangeChunks, chunks.chunkCount(s.sizeBytes()) - frontierChunk);
            int got = chunks.prefetch(s.segmentKey(), s.sizeBytes(), frontierChunk, n);
            if (got == 0) {
                break; // the GETs in flight are at their bound: ask again when the reader enters its next chunk
            }
            requested = true;
            ahead += Math.min((frontierChunk + got) * chunks.chunkBytes(), s.sizeBytes())
                    - frontierChunk * chunks.chunkBytes();
            frontierChunk += got;
            normalize();
            if (got == n) {
                rangeChunks = Math.min(maxRangeChunks, rangeChunks * 2);
            }
        }
        if (requested) {
            // Once per step of the reader, not per GET: the window grows as the reader goes on, and a read that
            // stops after a chunk or two has not fetched the whole window.
            windowBytes = Math.min(maxWindowBytes, windowBytes * 2);
        }
    }

    /** Whether chunk {@code chunk} of segment {@code segment} is the one right after the last chunk entered. */
    private boolean isNext(int segment, long chunk) {
        if (lastSegment < 0) {
            return false;
        }
        if (segment == lastSegment) {
            return chunk == lastChunk + 1;
        }
        return segment == lastSegment + 1 && chunk == 0
                && lastChunk == chunks.chunkCount(segments.get(lastSegment).sizeBytes()) - 1;
    }

    /** Moves a frontier that stands at its segment's end to the next segment's start. */
    private void normalize() {
        while (frontierSegment < segments.size()
                && frontierChunk >= chunks.chunkCount(segments.get(frontierSegment).sizeBytes())) {
            frontierSegment++;
            frontierChunk = 0;
        }
    }

    /** Bytes requested ahead of the reader: from the end of its chunk to the frontier. */
    private long bytesAhead(int segment, long chunk) {
        long ahead = 0;
        for (int i = segment; i <= frontierSegment && i < segments.size(); i++) {
            long size = segments.get(i).sizeBytes();
            long from = i == segment ? Math.min((chunk + 1) * chunks.chunkBytes(), size) : 0;
            long to = i == frontierSegment ? Math.min(frontierChunk * chunks.chunkBytes(), size) : size;
            ahead += Math.max(0, to - from);
        }
        return ahead;
    }

    private static int indexOf(List<ColdSegment> segments, ObjectKey key, int from) {
        if (key == null) {
            return -1;
        }
        for (int i = Math.max(0, from); i < segments.size(); i++) {
            if (segments.get(i).segmentKey().equals(key)) {
                return i;
            }
        }
        return -1;
    }
}
