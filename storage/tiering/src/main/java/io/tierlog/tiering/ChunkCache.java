package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStore;
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
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
import java.util.stream.Stream;

/**
 * A bounded on-disk cache of fixed-size chunks of cold segment objects, with asynchronous fetching.
 *
 * <p>Chunk {@code i} of an object is its bytes {@code [i * chunkBytes, min((i + 1) * chunkBytes, size))}, fetched
 * with one ranged GET. Segment objects are immutable (their keys carry a unique upload id), so a cached chunk
 * never goes stale. Files are written to a temporary name and renamed, so a crash never leaves a partial chunk
 * under a chunk's name. The cache is derived data: it is emptied when opened, and every byte served from it is
 * CRC-checked by the reader anyway (a damaged chunk is {@link #invalidate invalidated} and fetched again).
 *
 * <p>Eviction is least-recently-used by bytes. Concurrent requests for one chunk share one GET. {@link #prefetch}
 * starts GETs on the fetch executor without waiting; at most {@code maxInFlight} GETs are outstanding, further
 * prefetches are dropped (a later {@link #get} fetches on demand). A prefetch that fails is forgotten: a
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
 * <p>A fetched chunk is handed to its waiters, and kept in a small in-memory set of recent chunks
 * ({@code memoryChunks} of them, at least the read-ahead window), <em>before</em> it is written to disk: a
 * sequential reader consumes each chunk from memory as soon as its GET returns and never waits for, or reads back,
 * the cache file, which only serves later reads of the same data. The disk write is queued to the cache's own
 * writer thread, so neither the fetch threads (whose GETs are the read-ahead) nor a reader fetching on demand
 * wait for a slow disk. The queue is bounded by {@link #MAX_PENDING_WRITE_BYTES} (or {@code memoryChunks} chunks,
 * if more); a chunk arriving while it is full is not cached on disk (counted in
 * {@link TieringStats#cacheWritesDropped()}), so a disk slower than the object store costs later re-reads a GET,
 * never the replay its throughput. A chunk waiting to be written is served from the queue's copy.
 *
 * <p>Thread-safe.
 */
final class ChunkCache implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkCache.class);

    /** Bytes of chunks waiting for their disk write, at most (unless {@code memoryChunks} chunks are more). */
    static final long MAX_PENDING_WRITE_BYTES = 32L * 1024 * 1024;

    private record ChunkId(ObjectKey key, long index) {
    }

    private final Path dir;
    private final int chunkBytes;
    private final long maxBytes;
    private final int maxInFlight;
    private final ObjectStore store;
    private final ExecutorService fetchers;
    private final TieringStats stats;
    /** Cached chunks and their sizes, in access order. Guarded by itself. */
    private final LinkedHashMap<ChunkId, Integer> lru = new LinkedHashMap<>(64, 0.75f, true);
    private long cachedBytes;
    private final Map<ChunkId, CompletableFuture<byte[]>> inFlight = new ConcurrentHashMap<>();
    /**
     * The most recently fetched chunks, in memory: a sequential reader asks for each prefetched chunk shortly after
     * it lands, and should not pay a disk read for it. Bounded by entries ({@code memoryChunks}). Guarded by itself.
     */
    private final LinkedHashMap<ChunkId, byte[]> recent;
    /** Chunks queued for their disk write (at most the writer's queue plus one per running write). */
    private final Map<ChunkId, byte[]> pendingWrites = new ConcurrentHashMap<>();
    /**
     * Chunks fetched once and not written to disk, oldest first: a second fetch while one is listed here admits it
     * (see the class comment). Names only, bounded by the cache's capacity in chunks. Guarded by itself.
     */
    private final LinkedHashMap<ChunkId, Boolean> fetchedOnce;
    private final ThreadPoolExecutor writer;

    /**
     * @param maxInFlight  GETs outstanding at most (prefetches beyond it are dropped)
     * @param memoryChunks recently fetched chunks kept in memory; at least the read-ahead window, so that a
     *                     prefetched chunk is still in memory when the sequential reader gets to it
     */
    ChunkCache(Path dir, int chunkBytes, long maxBytes, int maxInFlight, int memoryChunks, ObjectStore store,
               ExecutorService fetchers, TieringStats stats) {
        this.dir = dir;
        this.chunkBytes = chunkBytes;
        this.maxBytes = maxBytes;
        this.maxInFlight = maxInFlight;
        this.store = store;
        this.fetchers = fetchers;
        this.stats = stats;
        int recentMax = Math.max(memoryChunks, 2);
        int pendingMax = (int) Math.max(recentMax, MAX_PENDING_WRITE_BYTES / chunkBytes);
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(pendingMax), r -> {
            Thread t = new Thread(r, "tierlog-cold-cache-writer");
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
        // In fetch order, not access order: a reader that lags behind its read-ahead keeps touching chunks it has
        // read, and access order would then evict the prefetched chunks it has not read yet (measured: up to 10%
        // of the GETs of a replay were repeated). In fetch order the chunks read first leave first.
        this.recent = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ChunkId, byte[]> eldest) {
                return size() > recentMax;
            }
        };
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

    /** Chunk {@code index} of {@code key} (of {@code size} bytes), from the cache or fetched now. */
    byte[] get(ObjectKey key, long size, long index) {
        ChunkId id = new ChunkId(key, index);
        byte[] cached = readCached(id);
        if (cached != null) {
            stats.cacheHit();
            return cached;
        }
        stats.cacheMiss();
        for (int attempt = 0; ; attempt++) {
            CompletableFuture<byte[]> f = inFlight.get(id);
            boolean own = false;
            if (f == null) {
                CompletableFuture<byte[]> mine = new CompletableFuture<>();
                f = inFlight.putIfAbsent(id, mine);
                if (f == null) {
                    byte[] landed = readCached(id);
                    if (landed != null) { // a fetch finished between our first look and our claim
                        inFlight.remove(id, mine);
                        mine.complete(landed);
                        return landed;
                    }
                    // Fetch on the caller's thread: it would only wait for the executor otherwise.
                    fetchInto(id, size, mine);
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
                    byte[] landed = readCached(id);
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

    /** Starts fetching chunk {@code index} unless cached, in flight, or too many GETs are outstanding. */
    void prefetch(ObjectKey key, long size, long index) {
        if (index < 0 || index >= chunkCount(size) || inFlight.size() >= maxInFlight) {
            return;
        }
        ChunkId id = new ChunkId(key, index);
        // In flight first: a fetch puts its chunk into `recent` before it leaves `inFlight`, so looking in this
        // order a fetch completing meanwhile is seen in one place or the other, never fetched twice.
        if (inFlight.containsKey(id) || pendingWrites.containsKey(id)) {
            return;
        }
        synchronized (recent) {
            if (recent.containsKey(id)) {
                return;
            }
        }
        synchronized (lru) {
            if (lru.containsKey(id)) {
                return;
            }
        }
        CompletableFuture<byte[]> mine = new CompletableFuture<>();
        if (inFlight.putIfAbsent(id, mine) != null) {
            return;
        }
        try {
            fetchers.execute(() -> fetchInto(id, size, mine));
        } catch (RejectedExecutionException e) {
            inFlight.remove(id, mine);
            mine.completeExceptionally(e);
        }
    }

    /** Drops a chunk, e.g. after its bytes failed a CRC check. */
    void invalidate(ObjectKey key, long index) {
        ChunkId id = new ChunkId(key, index);
        synchronized (recent) {
            recent.remove(id);
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

    private void fetchInto(ChunkId id, long size, CompletableFuture<byte[]> future) {
        byte[] bytes;
        try {
            long start = id.index() * chunkBytes;
            long length = Math.min(chunkBytes, size - start);
            bytes = store.getRange(id.key(), ByteRange.of(start, length));
            stats.rangeGet(bytes.length);
            if (fetchedBefore(id)) {
                // Queued before anyone can see the chunk, so a reader that saw it also sees it cached (and counted).
                storeLater(id, bytes);
            } else {
                stats.cacheAdmissionDeferred();
            }
            synchronized (recent) {
                recent.put(id, bytes);
            }
        } catch (RuntimeException e) {
            inFlight.remove(id, future);
            future.completeExceptionally(e);
            return;
        }
        // Waiters get the bytes now; a disk copy, if any, is written later by the cache's writer thread. The chunk
        // is in `recent` already, so it can leave the in-flight set without anybody fetching it again.
        inFlight.remove(id, future);
        future.complete(bytes);
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

    private void storeLater(ChunkId id, byte[] bytes) {
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

    private byte[] readCached(ChunkId id) {
        synchronized (recent) {
            byte[] hot = recent.get(id);
            if (hot != null) {
                return hot;
            }
        }
        byte[] queued = pendingWrites.get(id);
        if (queued != null) {
            return queued;
        }
        synchronized (lru) {
            if (lru.get(id) == null) {
                return null;
            }
        }
        try {
            return Files.readAllBytes(file(id));
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
