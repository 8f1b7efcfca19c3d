package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ranged GET of several chunks hands each chunk to its readers as soon as its bytes have arrived (ADR 0041): the
 * store here sends a range's first chunk, then holds the rest of its answer until the test lets it go.
 */
class ChunkCacheStreamedSpanTest {
    private static final int CHUNK = 4096;
    private static final int CHUNKS = 4;

    @TempDir
    Path tmp;
    private FilesystemObjectStore backend;
    private HeldAfterFirstChunk store;
    private ExecutorService fetchers;
    private final ObjectKey key = ObjectKey.of("t/0/segment.log");
    private byte[] object;

    @BeforeEach
    void setUp() {
        backend = new FilesystemObjectStore(tmp.resolve("store"));
        object = new byte[CHUNKS * CHUNK];
        new Random(7).nextBytes(object);
        backend.put(key, object);
        store = new HeldAfterFirstChunk(backend);
        fetchers = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() throws Exception {
        store.rest.countDown();
        fetchers.shutdownNow();
        fetchers.awaitTermination(10, TimeUnit.SECONDS);
        backend.close();
    }

    private ChunkCache cache(TieringStats stats) {
        return new ChunkCache(tmp.resolve("cache"), CHUNK, 64L * CHUNK, 64L * CHUNK, 8L * CHUNK, store, fetchers,
                stats, new ManualClock(Instant.parse("2026-01-01T00:00:00Z")));
    }

    @Test
    void theFirstChunkOfARangeIsReadWhileTheRestIsOnTheWire() throws Exception {
        try (ChunkCache cache = cache(new TieringStats())) {
            assertThat(cache.prefetch(key, object.length, 0, CHUNKS)).isEqualTo(CHUNKS);
            // Without streaming the chunk would come only with the whole range, which the store holds back.
            ByteBuffer first = CompletableFuture.supplyAsync(() -> cache.get(key, object.length, 0))
                    .get(20, TimeUnit.SECONDS);
            assertThat(bytesOf(first)).isEqualTo(Arrays.copyOfRange(object, 0, CHUNK));
            assertThat(cache.inFlightBytes()).as("the rest is still in flight").isEqualTo((CHUNKS - 1L) * CHUNK);

            store.rest.countDown();
            for (int c = 1; c < CHUNKS; c++) {
                assertThat(bytesOf(cache.get(key, object.length, c))).as("chunk " + c)
                        .isEqualTo(Arrays.copyOfRange(object, c * CHUNK, (c + 1) * CHUNK));
            }
            assertThat(store.gets.get()).as("one GET for the range").isEqualTo(1);
            assertThat(cache.inFlightBytes()).isZero();
            assertThat(cache.unreadBytes()).isZero();
        }
    }

    @Test
    void aRangeThatFailsAfterItsFirstChunkKeepsThatChunkAndFetchesTheRestAgain() throws Exception {
        store.failAfterFirstChunk = true;
        try (ChunkCache cache = cache(new TieringStats())) {
            assertThat(cache.prefetch(key, object.length, 0, CHUNKS)).isEqualTo(CHUNKS);
            ByteBuffer first = CompletableFuture.supplyAsync(() -> cache.get(key, object.length, 0))
                    .get(20, TimeUnit.SECONDS);
            store.rest.countDown(); // the GET now fails

            assertThat(bytesOf(first)).isEqualTo(Arrays.copyOfRange(object, 0, CHUNK));
            store.failAfterFirstChunk = false;
            // A reader waiting for a failed prefetch asks the store itself, once.
            for (int c = 1; c < CHUNKS; c++) {
                assertThat(bytesOf(cache.get(key, object.length, c))).as("chunk " + c)
                        .isEqualTo(Arrays.copyOfRange(object, c * CHUNK, (c + 1) * CHUNK));
            }
            assertThat(cache.inFlightBytes()).as("the failed range's bytes are released").isZero();
            assertThat(cache.unreadBytes()).isZero();
        }
    }

    @Test
    void aReaderNeedingOnlyAChunksStartGetsItBeforeTheChunkIsWhole() throws Exception {
        store.heldAfter = CHUNK + CHUNK / 2;
        try (ChunkCache cache = cache(new TieringStats())) {
            assertThat(cache.prefetch(key, object.length, 0, CHUNKS)).isEqualTo(CHUNKS);
            // A batch running from chunk 0 a quarter into chunk 1: both parts come while the GET is held.
            ByteBuffer tail = CompletableFuture.supplyAsync(() -> cache.getAtLeast(key, object.length, 1, CHUNK / 4))
                    .get(20, TimeUnit.SECONDS);
            assertThat(tail.remaining()).as("what has arrived of chunk 1").isEqualTo(CHUNK / 2);
            assertThat(bytesOf(tail)).isEqualTo(Arrays.copyOfRange(object, CHUNK, CHUNK + CHUNK / 2));
            assertThat(bytesOf(cache.getAtLeast(key, object.length, 0, CHUNK))).as("chunk 0, whole")
                    .isEqualTo(Arrays.copyOfRange(object, 0, CHUNK));

            store.rest.countDown();
            assertThat(bytesOf(cache.getAtLeast(key, object.length, 1, CHUNK))).as("chunk 1, whole once arrived")
                    .isEqualTo(Arrays.copyOfRange(object, CHUNK, 2 * CHUNK));
            assertThat(store.gets.get()).as("one GET for the range").isEqualTo(1);
        }
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** Answers a ranged GET's first bytes at once and the rest when {@link #rest} opens (or fails then). */
    private static final class HeldAfterFirstChunk implements ObjectStore {
        final CountDownLatch rest = new CountDownLatch(1);
        final AtomicInteger gets = new AtomicInteger();
        volatile boolean failAfterFirstChunk;
        /** Bytes answered before the hold. */
        volatile int heldAfter = CHUNK;
        private final ObjectStore delegate;

        HeldAfterFirstChunk(ObjectStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public int getRange(ObjectKey key, ByteRange range, byte[] into, IntConsumer arrived) {
            gets.incrementAndGet();
            byte[] bytes = delegate.getRange(key, range);
            int first = Math.min(heldAfter, bytes.length);
            System.arraycopy(bytes, 0, into, 0, first);
            arrived.accept(first);
            if (bytes.length > first) {
                try {
                    if (!rest.await(20, TimeUnit.SECONDS)) {
                        throw new ObjectStoreUnavailableException("held too long", null);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ObjectStoreUnavailableException("interrupted", e);
                }
                if (failAfterFirstChunk) {
                    throw new ObjectStoreUnavailableException("connection reset mid-answer", null);
                }
                System.arraycopy(bytes, first, into, first, bytes.length - first);
                arrived.accept(bytes.length);
            }
            return bytes.length;
        }

        @Override
        public byte[] getRange(ObjectKey key, ByteRange range) {
            gets.incrementAndGet();
            return delegate.getRange(key, range);
        }

        @Override
        public void put(ObjectKey key, Path file) {
            delegate.put(key, file);
        }

        @Override
        public void put(ObjectKey key, byte[] bytes) {
            delegate.put(key, bytes);
        }

        @Override
        public boolean putIfAbsent(ObjectKey key, byte[] bytes) {
            return delegate.putIfAbsent(key, bytes);
        }

        @Override
        public byte[] get(ObjectKey key) {
            return delegate.get(key);
        }

        @Override
        public Optional<ObjectMetadata> head(ObjectKey key) {
            return delegate.head(key);
        }

        @Override
        public ObjectPage list(String prefix, Optional<String> pageToken, int maxKeys) {
            return delegate.list(prefix, pageToken, maxKeys);
        }

        @Override
        public void delete(ObjectKey key) {
            delegate.delete(key);
        }

        @Override
        public void deleteAll(Collection<ObjectKey> keys) {
            delegate.deleteAll(keys);
        }

        @Override
        public void close() {
        }
    }
}
