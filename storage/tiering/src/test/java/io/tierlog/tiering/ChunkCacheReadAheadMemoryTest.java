package io.tierlog.tiering;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chunk cache's memory for read-ahead, on the filesystem store: a chunk fetched ahead stays in memory until a
 * reader has read it, however the spans land (first-time chunks are not on disk, so an evicted one would be fetched
 * again); what is requested and unread is bounded by refusing prefetches, not by evicting; a chunk whose reader
 * went away is released after {@link ChunkCache#UNREAD_PIN}.
 */
class ChunkCacheReadAheadMemoryTest {
    private static final int CHUNK = 4096;
    private static final int CHUNKS = 12;

    @TempDir
    Path tmp;
    private FilesystemObjectStore backend;
    private RecordingStore store;
    private final CountDownLatch release = new CountDownLatch(1);
    private ExecutorService fetchers;
    private ManualClock clock;
    private final ObjectKey key = ObjectKey.of("t/0/segment.log");
    private byte[] object;

    @BeforeEach
    void setUp() {
        backend = new FilesystemObjectStore(tmp.resolve("store"));
        store = new RecordingStore(backend);
        object = new byte[CHUNKS * CHUNK];
        new Random(1).nextBytes(object);
        backend.put(key, object);
        fetchers = Executors.newFixedThreadPool(3);
        clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
        fetchers.shutdownNow();
        fetchers.awaitTermination(10, TimeUnit.SECONDS);
        backend.close();
    }

    private ChunkCache cache(long aheadBytes, long readBytes, TieringStats stats) {
        return new ChunkCache(tmp.resolve("cache"), CHUNK, 64L * CHUNK, aheadBytes, readBytes, store, fetchers,
                stats, clock);
    }

    @Test
    void chunksFetchedAheadStayUntilReadWhenLaterSpansLandFirst() {
        // Room for two chunks once read, but the whole object may be requested ahead.
        try (ChunkCache cache = cache((long) CHUNKS * CHUNK, 2L * CHUNK, new TieringStats())) {
            // The first span's GET waits until the later spans have landed: out of landing order, as on a busy host.
            gateTheGetAt(0);
            assertThat(cache.prefetch(key, object.length, 0, 4)).isEqualTo(4);
            assertThat(cache.prefetch(key, object.length, 4, 4)).isEqualTo(4);
            assertThat(cache.prefetch(key, object.length, 8, 4)).isEqualTo(4);
            awaitTrue(() -> cache.inFlightBytes() == 4L * CHUNK, "the later spans landed");
            release.countDown();
            awaitTrue(() -> cache.inFlightBytes() == 0, "the first span landed");

            for (int c = 0; c < CHUNKS; c++) {
                assertThat(bytesOf(cache.get(key, object.length, c))).as("chunk " + c)
                        .isEqualTo(slice(c * CHUNK, CHUNK));
            }

            assertThat(store.ranges()).as("one GET per span, no chunk twice").containsExactlyInAnyOrder(
                    ByteRange.of(0, 4L * CHUNK), ByteRange.of(4L * CHUNK, 4L * CHUNK),
                    ByteRange.of(8L * CHUNK, 4L * CHUNK));
            assertThat(cache.unreadBytes()).isZero();
            assertThat(cache.memoryBytes()).as("chunks read: their LRU bound").isEqualTo(2L * CHUNK);
        }
    }

    @Test
    void prefetchesBeyondTheBoundAreRefusedAndUnreadChunksAreNotEvictedForThem() {
        try (ChunkCache cache = cache(4L * CHUNK, 2L * CHUNK, new TieringStats())) {
            assertThat(cache.prefetch(key, object.length, 0, 4)).isEqualTo(4);
            awaitTrue(() -> cache.inFlightBytes() == 0, "the span landed");

            assertThat(cache.prefetch(key, object.length, 4, 4)).as("refused: 4 chunks requested and unread")
                    .isZero();
            assertThat(cache.get(key, object.length, 0)).isNotNull();
            assertThat(cache.prefetch(key, object.length, 4, 4)).as("a span is not cut to fit").isZero();
            assertThat(cache.prefetch(key, object.length, 4, 1)).as("room for the one chunk read").isEqualTo(1);
            awaitTrue(() -> cache.inFlightBytes() == 0, "the GET landed");
            for (int c = 1; c < 5; c++) {
                assertThat(bytesOf(cache.get(key, object.length, c))).isEqualTo(slice(c * CHUNK, CHUNK));
            }
            assertThat(store.ranges()).containsExactly(ByteRange.of(0, 4L * CHUNK), ByteRange.of(4L * CHUNK, CHUNK));
        }
    }

    @Test
    void chunksWhoseReaderWentAwayAreReleasedAfterThePin() {
        TieringStats stats = new TieringStats();
        try (ChunkCache cache = cache(4L * CHUNK, 2L * CHUNK, stats)) {
            assertThat(cache.prefetch(key, object.length, 0, 4)).isEqualTo(4);
            awaitTrue(() -> cache.inFlightBytes() == 0, "the span landed");
            // Nobody reads them. Within the pin, other read-ahead waits; after it, the pinned chunks give way.
            clock.advance(ChunkCache.UNREAD_PIN.minusSeconds(1));
            assertThat(cache.prefetch(key, object.length, 4, 4)).isZero();
            assertThat(stats.readAheadUnreadReleased()).isZero();

            clock.advance(Duration.ofSeconds(2));
            assertThat(cache.prefetch(key, object.length, 4, 4)).isEqualTo(4);
            assertThat(stats.readAheadUnreadReleased()).isEqualTo(4);
            awaitTrue(() -> cache.inFlightBytes() == 0, "the GET landed");
            assertThat(cache.unreadBytes()).isEqualTo(4L * CHUNK);
            assertThat(cache.memoryBytes()).as("released chunks went to the LRU set of read chunks, within its bound")
                    .isEqualTo(6L * CHUNK);
        }
    }

    private byte[] slice(int from, int length) {
        byte[] out = new byte[length];
        System.arraycopy(object, from, out, 0, length);
        return out;
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** Polls {@code condition} until it holds, failing after 10 s. */
    private static void awaitTrue(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.onSpinWait();
        }
    }

    /** The GET of the range at {@code offset} waits until {@link #release} opens. */
    private void gateTheGetAt(long offset) {
        store.before = (op, k, range) -> {
            if (range != null && range.offset() == offset) {
                try {
                    if (!release.await(30, TimeUnit.SECONDS)) {
                        throw new AssertionError("gate never opened");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
        };
    }
}
