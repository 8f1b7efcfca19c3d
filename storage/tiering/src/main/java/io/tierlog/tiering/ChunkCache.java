package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * A bounded on-disk cache of fixed-size chunks of cold segment objects, with asynchronous fetching.
 *
 * <p>Chunk {@code i} of an object is its bytes {@code [i * chunkBytes, min((i + 1) * chunkBytes, size))}. One
 * ranged GET fetches a run of consecutive chunks (a <em>span</em>: one chunk for a point read, up to
 * {@code rangeBytes} for a sequential reader's read-ahead, see {@link ColdReader}); the span's chunks are views of
 * the one array the GET filled, so splitting it copies nothing. Segment objects are immutable (their keys carry a unique upload id), so a cached chunk
 * never goes stale. Files are written to a temporary name and renamed, so a crash never leaves a partial chunk
 * under a chunk's name. The cache is derived data: it is emptied when opened, and every byte served from it is
 * CRC-checked by the reader anyway (a damaged chunk is {@link #invalidate invalidated} and fetched again).
 *
 * <p>Eviction is least-recently-used by bytes. Concurrent requests for one chunk share one GET. {@link #prefetch}
 * starts a span's GET on the fetch executor without waiting; at most {@code maxAheadBytes} of chunks requested and
 * not yet read (in flight, or landed and unread) are outstanding, further prefetches are refused (the read-ahead
 * asks again later; a {@link #get} fetches on demand). A prefetch that fails is forgotten: a
 * {@link #get} that was waiting for it fetches the chunk itself once, so only the store's answer to the reader's
 * own request can fail a read.
 *
 * <h2>Admission: a chunk goes to disk on its second fetch</h2>
 * A chunk is written to the disk cache only when the store is asked for it a second time while the cache still
 * remembers the first fetch (it remembers the last {@code maxBytes / chunkBytes} chunks fetched, by name only; the
 * "ghost" list of 2Q). The cold tier's commonest read is a replay, a one-pass scan: each of its chunks is read once,
 * from memory, right after its GET. Writing those to disk would cost a write per byte replayed (measured: the
 * cache's writer thread was a fifth of the index-service's CPU during replays, and its writes share the disk with
 * the hot tier's fsyncs), and a replay longer than the cache would evict every chunk other readers were re-reading
 * while leaving behind only chunks no one asks for again. A range read again soon (a second consumer group behind
 * the first, a consumer polling one cold position) is fetched twice and then served from disk. The first fetch of
 * every chunk is counted in {@link TieringStats#cacheAdmissionsDeferred()}.
 *
 * <h2>Memory: a chunk fetched ahead is kept until it is read</h2>
 * A fetched chunk is handed to its waiters and kept in memory <em>before</em> it is written to disk: a sequential
 * reader consumes each chunk from memory as soon as its GET returns and never waits for, or reads back, the cache
 * file, which only serves later reads of the same data. Landed chunks nobody has {@link #get read} yet are
 * <em>pinned</em>: they are never evicted to make room, because a first-time chunk is not on disk and evicting it
 * would make the reader that asked for it fetch it again (spans land out of order on the fetch threads, so "oldest
 * fetched" is not "read first"). Their memory is bounded by admission instead: pinned plus in-flight bytes stay
 * within {@code maxAheadBytes}, and a prefetch that would exceed it is refused. A chunk once read moves to an LRU
 * set of {@code memoryBytes} (by access, so a reader's current chunk, where its next read starts, stays). A pinned
 * chunk its reader never comes for (the consumer went away) is released into that LRU set once it has been pinned
 * for {@link #UNREAD_PIN}, when a prefetch needs its room. The disk write is queued to the cache's own
 * writer thread, so neither the fetch threads (whose GETs are the read-ahead) nor a reader fetching on demand
 * wait for a slow disk. The queue is bounded by {@link #MAX_PENDING_WRITE_BYTES}; a chunk arriving while it is full is not cached on disk (counted in
 * {@link TieringStats#cacheWritesDropped()}), so a disk slower than the object store costs later re-reads a GET,
 * never the replay its throughput. A chunk waiting to be written is served from the queue's copy (a copy of its
 * own, so a queued chunk does not keep its whole span's array alive).
 *
 * <p>Thread-safe.
 */
final class ChunkCache implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkCache.class);

    /** Bytes of chunks waiting for their disk write, at most (unless {@code memoryChunks} chunks are more). */
    static final long MAX_PENDING_WRITE_BYTES = 32L * 1024 * 1024;
    /**
     * How long a landed chunk stays pinned for the reader that asked for it. Far longer than a replaying reader takes
     * to reach its window's end; a consumer that went away for longer loses its read-ahead, not correctness.
     */
    static final Duration UNREAD_PIN = Duration.ofSeconds(60);

    private record ChunkId(ObjectKey key, long index) {
    }

    /** Chunk {@code index} of a GET's {@code span}, in flight. */
    private record Arriving(SpanLanding span, int index) {
    }

    /** A landed chunk nobody has read yet, and when it landed. */
    private record Unread(ByteBuffer bytes, Instant landed) {
    }

    private final Path dir;
    private final int chunkBytes;
    private final long maxBytes;
    private final long maxAheadBytes;
    private final Clock clock;
    private final ObjectStore store;
    private final ExecutorService fetchers;
    private final TieringStats stats;
    /** Cached chunks and their sizes, in access order. Guarded by itself. */
    private final LinkedHashMap<ChunkId, Integer> lru = new LinkedHashMap<>(64, 0.75f, true);
    private long cachedBytes;
    private final Map<ChunkId, CompletableFuture<ByteBuffer>> inFlight = new ConcurrentHashMap<>();
    /** Chunks of prefetched GETs not handed out yet, and where to find their bytes while they arrive. */
    private final Map<ChunkId, Arriving> arriving = new ConcurrentHashMap<>();
    /** Bytes of the GETs in {@link #inFlight} (prefetched spans and demand fetches). */
    private final AtomicLong inFlightBytes = new AtomicLong();
    /**
     * Landed chunks not read yet, in landing order: pinned (see the class comment). Bounded through admission: with
     * {@link #inFlightBytes} within {@link #maxAheadBytes}. Guarded by {@link #recent}.
     */
    private final LinkedHashMap<ChunkId, Unread> unread = new LinkedHashMap<>(16, 0.75f, false);
    private long unreadBytes;
    /**
     * Chunks read recently, in memory, in access order: a reader's next read starts in the chunk its last one
     * stopped in, and should not pay a GET or a disk read for it. Bounded by bytes ({@code recentMaxBytes},
     * {@link #recentBytes}). Its monitor also guards {@link #unread}.
     */
    private final LinkedHashMap<ChunkId, ByteBuffer> recent;
    private final long recentMaxBytes;
    private long recentBytes;
    /** Chunks queued for their disk write (at most the writer's queue plus one per running write). */
    private final Map<ChunkId, byte[]> pendingWrites = new ConcurrentHashMap<>();
    /**
     * Chunks fetched once and not written to disk, oldest first: a second fetch while one is listed here admits it
     * (see the class comment). Names only, bounded by the cache's capacity in chunks. Guarded by itself.
     */
    private final LinkedHashMap<ChunkId, Boolean> fetchedOnce;
    private final ThreadPoolExecutor writer;

    /**
     * @param maxAheadBytes bytes of prefetched chunks not read yet (in flight or landed) at most; further prefetches
     *                      are refused
     * @param memoryBytes   bytes of chunks read recently kept in memory (at least two chunks)
     * @param clock         when a landed chunk was pinned ({@link #UNREAD_PIN})
     */
    ChunkCache(Path dir, int chunkBytes, long maxBytes, long maxAheadBytes, long memoryBytes, ObjectStore store,
               ExecutorService fetchers, TieringStats stats, Clock clock) {
        this.dir = dir;
        this.chunkBytes = chunkBytes;
        this.maxBytes = maxBytes;
        this.maxAheadBytes = Math.max(maxAheadBytes, chunkBytes);
        this.clock = clock;
        this.store = store;
        this.fetchers = fetchers;
        this.stats = stats;
        this.recentMaxBytes = Math.max(memoryBytes, 2L * chunkBytes);
        int pendingMax = (int) Math.max(2, MAX_PENDING_WRITE_BYTES / chunkBytes);
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(pendingMax), r -> {
            Thread t = new Thread(r, "tierlog-cold-cache-writer");
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
        // Access order: chunks not read yet are not in here (they are pinned in `unread`), so the least recently
        // read chunk is the one no reader is about to ask for again.
        this.recent = new LinkedHashMap<>(16, 0.75f, true);
        int remembered = (int) Math.max(16, Math.min(1 << 20, maxBytes / chunkBytes));
        this.fetchedOnce = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ChunkId, Boolean> eldest) {
                return size() > remembered;
            }
        };
        try {
            Files.createDirectories(dir);
            try (Stream<Path> old = Files.list(dir)) {
                for (Path p : old.toList()) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the cold cache in " + dir, e);
        }
    }

    int chunkBytes() {
        return chunkBytes;
    }

    /** The number of chunks of an object of {@code size} bytes. */
    long chunkCount(long size) {
        return (size + chunkBytes - 1) / chunkBytes;
    }

    /** The length of chunk {@code index} of an object of {@code size} bytes. */
    int chunkLength(long size, long index) {
        return (int) Math.min(chunkBytes, size - index * chunkBytes);
    }

    /**
     * Chunk {@code index} of {@code key} (of {@code size} bytes), from the cache or fetched now: a buffer from
     * position 0 to its limit, which the caller must not modify (it may be shared with other readers).
     */
    ByteBuffer get(ObjectKey key, long size, long index) {
        ChunkId id = new ChunkId(key, index);
        ByteBuffer cached = readCached(id);
        if (cached != null) {
            stats.cacheHit();
            return cached;
        }
        stats.cacheMiss();
        ByteBuffer fetched = fetchOrWait(id, key, size, index);
        markRead(id);
        return fetched;
    }

    /**
     * At least the first {@code minBytes} bytes of chunk {@code index} (fewer only where the object ends): while the
     * chunk's GET is still arriving, a view of what has arrived once that is enough, so a reader needing only a
     * chunk's start, such as a batch running a little past the previous chunk, does not wait for the whole range;
     * otherwise the whole chunk, as {@link #get}. The caller must not modify the buffer.
     */
    ByteBuffer getAtLeast(ObjectKey key, long size, long index, int minBytes) {
        ChunkId id = new ChunkId(key, index);
        Arriving a = arriving.get(id);
        if (a != null && minBytes < chunkLength(size, index)) {
            try {
                ByteBuffer prefix = a.span().awaitPrefix(a.index(), Math.max(1, minBytes));
                if (prefix != null) {
                    return prefix;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ObjectStoreUnavailableException("interrupted while waiting for " + key, e);
            }
        }
        return get(key, size, index);
    }

    /** The chunk from a GET in flight or one started now (on this thread). */
    private ByteBuffer fetchOrWait(ChunkId id, ObjectKey key, long size, long index) {
        for (int attempt = 0; ; attempt++) {
            CompletableFuture<ByteBuffer> f = inFlight.get(id);
            boolean own = false;
            if (f == null) {
                CompletableFuture<ByteBuffer> mine = new CompletableFuture<>();
                f = inFlight.putIfAbsent(id, mine);
                if (f == null) {
                    ByteBuffer landed = readCached(id);
                    if (landed != null) { // a fetch finished between our first look and our claim
                        inFlight.remove(id, mine);
                        mine.complete(landed);
                        return landed;
                    }
                    // Fetch on the caller's thread: it would only wait for the executor otherwise.
                    long bytes = chunkLength(size, index);
                    inFlightBytes.addAndGet(bytes);
                    new SpanLanding(key, index, List.of(mine), (int) bytes).fetch();
                    f = mine;
                    own = true;
                }
            }
            try {
                return f.join();
            } catch (CompletionException | CancellationException e) {
                if (!own && attempt == 0) {
                    // Someone else's (typically a prefetch's) GET failed; the store may be fine by now. Ask it
                    // ourselves once, so a dropped background GET never fails a read on its own.
                    ByteBuffer landed = readCached(id);
                    if (landed != null) {
                        return landed;
                    }
                    continue;
                }
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                throw e;
            }
        }
    }

    /**
     * Starts one ranged GET, on the fetch executor, of the chunks {@code [first, first + count)} of {@code key} that
     * are not cached or in flight yet: those at the start of the range are skipped, and the GET stops before the
     * first one after them, so a span never fetches a chunk twice. Returns how many chunks from {@code first} are now
     * cached, in flight or requested (the caller moves past them and asks again for the rest), or fewer (possibly 0)
     * if the GET would take the bytes in flight over their bound; then nothing was requested beyond the skipped
     * chunks, and the caller asks again later.
     */
    int prefetch(ObjectKey key, long size, long first, int count) {
        long end = Math.min(chunkCount(size), first + count);
        if (first < 0 || first >= end) {
            return 0;
        }
        long c = first;
        while (c < end && present(new ChunkId(key, c))) {
            c++;
        }
        if (c == end) {
            return (int) (end - first);
        }
        long spanStart = c;
        long wanted = Math.min(end * chunkBytes, size) - spanStart * chunkBytes;
        if (!reserveAhead(wanted)) {
            return (int) (spanStart - first);
        }
        // Claim the run of absent chunks, up to the first one someone else claimed or fetched meanwhile.
        List<CompletableFuture<ByteBuffer>> claimed = new ArrayList<>();
        while (c < end) {
            ChunkId id = new ChunkId(key, c);
            CompletableFuture<ByteBuffer> mine = new CompletableFuture<>();
            if (present(id) || inFlight.putIfAbsent(id, mine) != null) {
                break;
            }
            claimed.add(mine);
            c++;
        }
        long bytes = claimed.isEmpty() ? 0 : Math.min(c * chunkBytes, size) - spanStart * chunkBytes;
        inFlightBytes.addAndGet(bytes - wanted); // the reservation, down to the chunks claimed
        if (claimed.isEmpty()) {
            return (int) (c - first);
        }
        SpanLanding landing = new SpanLanding(key, spanStart, claimed, (int) bytes);
        for (int i = 0; i < claimed.size(); i++) {
            arriving.put(new ChunkId(key, spanStart + i), new Arriving(landing, i));
        }
        try {
            fetchers.execute(landing::fetch);
        } catch (RejectedExecutionException e) {
            landing.failRest(e);
            return (int) (spanStart - first);
        }
        return (int) (c - first);
    }

    /**
     * Reserves {@code wanted} bytes in flight if what is in flight and what landed unread stays within
     * {@link #maxAheadBytes} with them; else false, having first released chunks pinned for longer than
     * {@link #UNREAD_PIN} (their readers went away) to the LRU set.
     */
    private boolean reserveAhead(long wanted) {
        synchronized (recent) {
            if (inFlightBytes.get() + unreadBytes + wanted <= maxAheadBytes) {
                inFlightBytes.addAndGet(wanted);
                return true;
            }
            Instant stale = clock.instant().minus(UNREAD_PIN);
            Iterator<Map.Entry<ChunkId, Unread>> it = unread.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<ChunkId, Unread> oldest = it.next();
                if (oldest.getValue().landed().isAfter(stale)) {
                    break; // landing order: the rest are younger
                }
                it.remove();
                unreadBytes -= oldest.getValue().bytes().remaining();
                putRecent(oldest.getKey(), oldest.getValue().bytes());
                stats.unreadReleased();
            }
            if (inFlightBytes.get() + unreadBytes + wanted <= maxAheadBytes) {
                inFlightBytes.addAndGet(wanted);
                return true;
            }
            return false;
        }
    }

    /** Whether a chunk is cached, in memory, queued for its disk write or in flight (looked up in that order). */
    private boolean present(ChunkId id) {
        // In flight first: a fetch puts its chunk into `unread` before it leaves `inFlight`, and a chunk leaves
        // `unread` only into `recent`, under one lock; looking in this order a fetch completing meanwhile is seen
        // in one place or the other, never fetched twice.
        if (inFlight.containsKey(id) || pendingWrites.containsKey(id)) {
            return true;
        }
        synchronized (recent) {
            if (unread.containsKey(id) || recent.containsKey(id)) {
                return true;
            }
        }
        synchronized (lru) {
            return lru.containsKey(id);
        }
    }

    /** Bytes of GETs in flight (for tests of the bound). */
    long inFlightBytes() {
        return inFlightBytes.get();
    }

    /** Bytes of chunks held in memory, read or not (for tests of the bound). */
    long memoryBytes() {
        synchronized (recent) {
            return recentBytes + unreadBytes;
        }
    }

    /** Bytes requested ahead and not read yet: in flight or landed unread, one consistent sum (for tests). */
    long aheadBytes() {
        synchronized (recent) {
            return inFlightBytes.get() + unreadBytes;
        }
    }

    /** Bytes of chunks read recently, held in memory (for tests of the bound). */
    long readBytes() {
        synchronized (recent) {
            return recentBytes;
        }
    }

    /** Bytes of landed chunks nobody has read yet (for tests of the bound). */
    long unreadBytes() {
        synchronized (recent) {
            return unreadBytes;
        }
    }

    /** Drops a chunk, e.g. after its bytes failed a CRC check. */
    void invalidate(ObjectKey key, long index) {
        ChunkId id = new ChunkId(key, index);
        synchronized (recent) {
            ByteBuffer dropped = recent.remove(id);
            if (dropped != null) {
                recentBytes -= dropped.remaining();
            }
            Unread pinned = unread.remove(id);
            if (pinned != null) {
                unreadBytes -= pinned.bytes().remaining();
            }
        }
        pendingWrites.remove(id);
        Integer size;
        synchronized (lru) {
            size = lru.remove(id);
            if (size != null) {
                cachedBytes -= size;
            }
        }
        deleteQuietly(file(id));
    }

    long cachedBytes() {
        synchronized (lru) {
            return cachedBytes;
        }
    }

    /**
     * One ranged GET of consecutive chunks, each handed to its waiters as soon as its bytes have arrived, as a view of
     * the GET's array, and readable in part before that ({@link #getAtLeast}): a reader waiting for the first bytes
     * of a long range does not wait for the rest (docs/adr/0041-cold-range-bytes-as-they-arrive.md). A failed GET
     * fails every chunk not handed out yet (a {@link #get} waiting for a prefetch then asks the store itself). Its
     * {@link #fetch} runs on one thread; {@link #awaitPrefix} on any.
     */
    private final class SpanLanding {
        private final ObjectKey key;
        private final long first;
        private final List<CompletableFuture<ByteBuffer>> claimed;
        private final int bytes;
        /** The GET's bytes, allocated by the fetching thread; read by others only below {@link #arrived}. */
        private byte[] span;
        /** Leading bytes of {@link #span} that are final. Guarded by this. */
        private int arrived;
        /** The first chunk not handed out yet (an index into {@link #claimed}). Guarded by this for readers. */
        private int next;

        SpanLanding(ObjectKey key, long first, List<CompletableFuture<ByteBuffer>> claimed, int bytes) {
            this.key = key;
            this.first = first;
            this.claimed = claimed;
            this.bytes = bytes;
        }

        void fetch() {
            byte[] into = new byte[bytes];
            synchronized (this) {
                span = into;
            }
            try {
                int got = store.getRange(key, ByteRange.of(first * chunkBytes, bytes), into, this::arrived);
                // A short answer leaves the last chunks short or empty: the reader reports the object as shorter
                // than the manifest says, as it does for a short chunk.
                landAll(got);
            } catch (RuntimeException e) {
                failRest(e);
            }
        }

        /** The first {@code n} bytes of the span are final: hands out every chunk they complete. */
        private void arrived(int n) {
            synchronized (this) {
                arrived = n;
                notifyAll();
            }
            while (next < claimed.size() && n >= end(next)) {
                land(next, end(next));
            }
        }

        /** The GET is done with {@code got} bytes: hands out the rest, short or empty past {@code got}. */
        private void landAll(int got) {
            while (next < claimed.size()) {
                land(next, Math.min(got, end(next)));
            }
        }

        void failRest(RuntimeException e) {
            for (int i = next; i < claimed.size(); i++) {
                ChunkId id = new ChunkId(key, first + i);
                inFlightBytes.addAndGet(-(end(i) - start(i)));
                arriving.remove(id, new Arriving(this, i));
                inFlight.remove(id, claimed.get(i));
                claimed.get(i).completeExceptionally(e);
            }
            synchronized (this) {
                next = claimed.size();
                notifyAll();
            }
        }

        /**
         * Chunk {@code i}'s bytes once at least {@code minBytes} of them have arrived (a view of those arrived so
         * far), or null once all of them have arrived or the GET failed: then the cache has the chunk, or is about
         * to, or the reader asks the store.
         */
        ByteBuffer awaitPrefix(int i, int minBytes) throws InterruptedException {
            synchronized (this) {
                while (next <= i && arrived - start(i) < minBytes) {
                    wait();
                }
                if (next > i || arrived >= end(i)) {
                    // Whole: taken through get(), which unpins it (a whole chunk read as a "prefix" would stay
                    // pinned, the reader never asking for more of it).
                    return null;
                }
                int from = start(i);
                return ByteBuffer.wrap(span, from, Math.min(end(i), arrived) - from).slice();
            }
        }

        private int start(int i) {
            return (int) Math.min(bytes, (long) i * chunkBytes);
        }

        private int end(int i) {
            return (int) Math.min(bytes, (long) (i + 1) * chunkBytes);
        }

        private void land(int i, int to) {
            ChunkId id = new ChunkId(key, first + i);
            int from = Math.min(start(i), to);
            ByteBuffer view = ByteBuffer.wrap(span, from, to - from).slice();
            stats.rangeGetChunk(i == 0, view.remaining());
            if (fetchedBefore(id)) {
                // Queued before anyone can see the chunk, so a reader that saw it also sees it cached (and counted).
                storeLater(id, view);
            } else {
                stats.cacheAdmissionDeferred();
            }
            synchronized (recent) {
                Unread previous = unread.put(id, new Unread(view, clock.instant()));
                unreadBytes += view.remaining() - (previous == null ? 0 : previous.bytes().remaining());
                // Under the same lock: the bytes move from in flight to unread at once (see aheadBytes()).
                inFlightBytes.addAndGet(-(end(i) - start(i)));
            }
            // In `unread` already, so the chunk can leave the in-flight set without anybody fetching it again.
            arriving.remove(id, new Arriving(this, i));
            inFlight.remove(id, claimed.get(i));
            synchronized (this) {
                next = i + 1;
                notifyAll();
            }
            claimed.get(i).complete(view);
        }
    }

    /**
     * A reader got the chunk: it is no longer pinned, and is now the most recently read. Takes the lock of
     * {@code recent}.
     */
    private void markRead(ChunkId id) {
        synchronized (recent) {
            Unread pinned = unread.remove(id);
            if (pinned != null) {
                unreadBytes -= pinned.bytes().remaining();
                putRecent(id, pinned.bytes());
            }
        }
    }

    /**
     * Adds a chunk to {@link #recent}, evicting the least recently read over its byte bound. Holds the lock of
     * {@code recent}.
     */
    private void putRecent(ChunkId id, ByteBuffer chunk) {
        ByteBuffer previous = recent.put(id, chunk);
        recentBytes += chunk.remaining() - (previous == null ? 0 : previous.remaining());
        Iterator<Map.Entry<ChunkId, ByteBuffer>> it = recent.entrySet().iterator();
        while (recentBytes > recentMaxBytes && it.hasNext()) {
            Map.Entry<ChunkId, ByteBuffer> eldest = it.next();
            if (eldest.getKey().equals(id)) {
                continue;
            }
            it.remove();
            recentBytes -= eldest.getValue().remaining();
        }
    }

    /** Whether the store was asked for this chunk recently; if not, remembers that it now was. */
    private boolean fetchedBefore(ChunkId id) {
        synchronized (fetchedOnce) {
            if (fetchedOnce.remove(id) != null) {
                return true;
            }
            fetchedOnce.put(id, Boolean.TRUE);
            return false;
        }
    }

    private void storeLater(ChunkId id, ByteBuffer view) {
        // A copy of its own: the view would keep the whole span's array alive while the write is queued.
        byte[] bytes = new byte[view.remaining()];
        view.duplicate().get(bytes);
        pendingWrites.put(id, bytes);
        try {
            writer.execute(() -> store(id, bytes));
        } catch (RejectedExecutionException e) {
            // The disk is behind (or the cache is closing): leave this chunk uncached rather than hold a fetch
            // thread, and with it the read-ahead, for a slow disk.
            pendingWrites.remove(id, bytes);
            if (!writer.isShutdown()) {
                stats.cacheWriteDropped();
                LOG.debug("cold cache: disk writes behind; chunk {} of {} not cached", id.index(), id.key());
            }
        }
    }

    /** A chunk from memory or the disk cache, marked read; null if neither holds it. */
    private ByteBuffer readCached(ChunkId id) {
        synchronized (recent) {
            Unread pinned = unread.remove(id);
            if (pinned != null) {
                unreadBytes -= pinned.bytes().remaining();
                putRecent(id, pinned.bytes());
                return pinned.bytes();
            }
            ByteBuffer hot = recent.get(id); // access order: now the most recently read
            if (hot != null) {
                return hot;
            }
        }
        byte[] queued = pendingWrites.get(id);
        if (queued != null) {
            return ByteBuffer.wrap(queued);
        }
        synchronized (lru) {
            if (lru.get(id) == null) {
                return null;
            }
        }
        try {
            return ByteBuffer.wrap(Files.readAllBytes(file(id)));
        } catch (NoSuchFileException e) {
            return null; // evicted between the lookup and the read
        } catch (IOException e) {
            LOG.warn("cold cache: cannot read chunk {} of {}; fetching it again", id.index(), id.key(), e);
            invalidate(id.key(), id.index());
            return null;
        }
    }

    private void store(ChunkId id, byte[] bytes) {
        Path target = file(id);
        Path tmp = dir.resolve(target.getFileName() + ".tmp-" + Thread.currentThread().getId());
        try {
            writeFile(tmp, bytes);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // A full or broken cache disk degrades to uncached reads; it never fails the read.
            if (!writer.isShutdown()) { // else interrupted by close(): nothing to report
                LOG.warn("cold cache: cannot store chunk {} of {}: {}", id.index(), id.key(), e.toString());
            }
            deleteQuietly(tmp);
            pendingWrites.remove(id, bytes);
            return;
        }
        synchronized (lru) {
            if (!pendingWrites.remove(id, bytes)) {
                deleteQuietly(target); // invalidated (or the cache closed) while being written
                return;
            }
            Integer previous = lru.put(id, bytes.length);
            cachedBytes += bytes.length - (previous == null ? 0 : previous);
            Iterator<Map.Entry<ChunkId, Integer>> it = lru.entrySet().iterator();
            while (cachedBytes > maxBytes && it.hasNext()) {
                Map.Entry<ChunkId, Integer> eldest = it.next();
                if (eldest.getKey().equals(id)) {
                    continue;
                }
                it.remove();
                cachedBytes -= eldest.getValue();
                deleteQuietly(file(eldest.getKey()));
            }
        }
    }

    /**
     * One write of the whole chunk: {@code Files.write} goes through an output stream that issues one write call per
     * 8 KiB, 128 system calls per MiB chunk on the replay's critical CPU.
     */
    private static void writeFile(Path file, byte[] bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        }
    }

    private Path file(ChunkId id) {
        return dir.resolve(digest(id.key().value()) + "-" + id.index() + ".chunk");
    }

    private static String digest(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a stray cache file is only wasted space; the directory is emptied on the next start
        }
    }

    /** Stops the disk writer and removes every cached chunk (the fetch executor belongs to the caller). */
    @Override
    public void close() {
        writer.shutdownNow();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pendingWrites.clear();
        synchronized (recent) {
            recent.clear();
            recentBytes = 0;
            unread.clear();
            unreadBytes = 0;
        }
        synchronized (fetchedOnce) {
            fetchedOnce.clear();
        }
        synchronized (lru) {
            lru.clear();
            cachedBytes = 0;
        }
        try (Stream<Path> files = Files.list(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(ChunkCache::deleteQuietly);
        } catch (IOException ignored) {
            // derived data; emptied again on the next start
        }
    }
}
