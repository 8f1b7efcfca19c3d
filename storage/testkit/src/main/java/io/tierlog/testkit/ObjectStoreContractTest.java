package io.tierlog.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.InvalidRangeException;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectPage;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link ObjectStore} contract, as tests. Every backend's test extends this class and supplies a fresh, empty
 * store; a backend is correct when all of these pass against it (cf. Aiven's {@code BaseStorageTest}).
 *
 * <p>Keys are chosen to be valid on every backend (no key is both an object and a "directory" of others, which
 * S3 allows and a filesystem does not).
 */
public abstract class ObjectStoreContractTest {

    /** The size of the large-file test; with the store's part size it must span several parts. */
    protected static final int LARGE_OBJECT_BYTES = 20 * 1024 * 1024;

    @TempDir
    protected Path scratch;

    protected ObjectStore store;

    /**
     * A fresh store with no objects in it. To exercise multipart upload, its multipart part size should be
     * at most {@link #LARGE_OBJECT_BYTES} / 4 (e.g. 5 MiB).
     */
    protected abstract ObjectStore createStore() throws Exception;

    @BeforeEach
    void openStore() throws Exception {
        store = createStore();
    }

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    // ---- put / get ----

    @Test
    void putThenGetReturnsTheSameBytes() {
        byte[] bytes = randomBytes(1, 10_000);
        store.put(key("t/0/00000000000000000000.log"), bytes);
        assertArrayEquals(bytes, store.get(key("t/0/00000000000000000000.log")));
    }

    @Test
    void putOfSeveralMebibytesFromMemoryRoundTrips() {
        // Larger than the steps a store may write (and force) it in, and not a multiple of them.
        byte[] bytes = randomBytes(2, 3 * 1024 * 1024 + 4321);
        store.put(key("t/0/00000000000000000100.log"), bytes);
        assertArrayEquals(bytes, store.get(key("t/0/00000000000000000100.log")));
        assertEquals(bytes.length, store.head(key("t/0/00000000000000000100.log")).orElseThrow().size());
    }

    @Test
    void emptyObjectRoundTrips() {
        store.put(key("empty"), new byte[0]);
        assertArrayEquals(new byte[0], store.get(key("empty")));
        assertEquals(0, store.head(key("empty")).orElseThrow().size());
    }

    @Test
    void putReplacesTheWholeObjectAndChangesTheEtag() {
        store.put(key("k"), randomBytes(2, 5_000));
        String firstEtag = store.head(key("k")).orElseThrow().etag();
        byte[] second = randomBytes(3, 100);
        store.put(key("k"), second);
        assertArrayEquals(second, store.get(key("k")));
        ObjectMetadata metadata = store.head(key("k")).orElseThrow();
        assertEquals(100, metadata.size());
        assertNotEquals(firstEtag, metadata.etag());
    }

    @Test
    void putFileRoundTrips() throws IOException {
        byte[] bytes = randomBytes(4, 300_000);
        Path file = Files.write(scratch.resolve("segment.log"), bytes);
        store.put(key("t/0/00000000000000000100.log"), file);
        assertArrayEquals(bytes, store.get(key("t/0/00000000000000000100.log")));
        assertTrue(Files.exists(file), "the source file is the caller's and must be left in place");
    }

    @Test
    void largeFileRoundTripsThroughMultipartUpload() throws IOException {
        byte[] bytes = randomBytes(5, LARGE_OBJECT_BYTES + 12_345); // not a multiple of any part size
        Path file = Files.write(scratch.resolve("large.log"), bytes);
        ObjectKey key = key("t/0/00000000000000001000.log");

        store.put(key, file);

        assertEquals(bytes.length, store.head(key).orElseThrow().size());
        assertArrayEquals(bytes, store.get(key));
        // A range straddling a 5 MiB part boundary reads back seamlessly.
        int boundary = 5 * 1024 * 1024;
        assertArrayEquals(Arrays.copyOfRange(bytes, boundary - 10, boundary + 10),
                store.getRange(key, ByteRange.of(boundary - 10, 20)));
    }

    @Test
    void putOfAMissingFileFailsWithoutCreatingTheObject() {
        ObjectStoreException e = assertThrows(ObjectStoreException.class,
                () -> store.put(key("k"), scratch.resolve("does-not-exist")));
        assertFalse(e instanceof ObjectNotFoundException, "a missing source is not a missing object: " + e);
        assertTrue(store.head(key("k")).isEmpty());
    }

    /**
     * Atomic visibility of overwrites. Protected so that a test against an emulator that cannot honour it may
     * override it with a documented, weaker check; a production backend must pass it as is.
     */
    @Test
    protected void readersSeeOnlyWholeVersionsWhileAnObjectIsRewritten() throws Exception {
        byte[] a = randomBytes(6, 64 * 1024);
        byte[] b = randomBytes(7, 48 * 1024);
        ObjectKey key = key("contended");
        store.put(key, a);
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    do {
                        byte[] seen = store.get(key);
                        if (!Arrays.equals(seen, a) && !Arrays.equals(seen, b)) {
                            fail("read a torn object of " + seen.length + " bytes");
                        }
                        reads.incrementAndGet();
                    } while (writing.get());
                    return null;
                }));
            }
            for (int i = 0; i < 20; i++) {
                store.put(key, i % 2 == 0 ? b : a);
            }
            writing.set(false);
            for (Future<?> reader : readers) {
                reader.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(reads.get() >= 2);
    }

    // ---- ranged reads ----

    @Test
    void rangedReadsReturnExactlyTheRequestedBytes() {
        byte[] bytes = randomBytes(8, 1000);
        ObjectKey key = key("ranged");
        store.put(key, bytes);

        assertArrayEquals(new byte[] {bytes[0]}, store.getRange(key, ByteRange.of(0, 1)), "first byte");
        assertArrayEquals(new byte[] {bytes[999]}, store.getRange(key, ByteRange.of(999, 1)), "last byte");
        assertArrayEquals(Arrays.copyOfRange(bytes, 100, 350), store.getRange(key, ByteRange.of(100, 250)), "middle");
        assertArrayEquals(bytes, store.getRange(key, ByteRange.of(0, 1000)), "whole object");
    }

    @Test
    void rangeRunningPastTheEndIsClipped() {
        byte[] bytes = randomBytes(9, 1000);
        ObjectKey key = key("ranged");
        store.put(key, bytes);

        assertArrayEquals(Arrays.copyOfRange(bytes, 900, 1000), store.getRange(key, ByteRange.of(900, 500)));
        assertArrayEquals(new byte[] {bytes[999]}, store.getRange(key, ByteRange.of(999, Integer.MAX_VALUE - 8)));
    }

    @Test
    void rangeReadIntoAnArrayReportsItsBytesAsFinalAndAgreesWithGetRange() {
        byte[] bytes = randomBytes(11, 1000);
        ObjectKey key = key("ranged");
        store.put(key, bytes);

        for (ByteRange range : List.of(ByteRange.of(0, 1000), ByteRange.of(100, 250), ByteRange.of(900, 500))) {
            byte[] into = new byte[(int) range.length() + 3];
            List<Integer> arrived = new ArrayList<>();
            int n = store.getRange(key, range, into, arrived::add);
            byte[] expected = store.getRange(key, range);
            assertEquals(expected.length, n, range + ": bytes read");
            assertArrayEquals(expected, Arrays.copyOf(into, n), range + ": bytes");
            assertFalse(arrived.isEmpty(), range + ": reported");
            assertEquals(n, arrived.get(arrived.size() - 1), range + ": last report");
            for (int i = 1; i < arrived.size(); i++) {
                assertTrue(arrived.get(i) >= arrived.get(i - 1), range + ": reports grow " + arrived);
            }
        }
        assertThrows(InvalidRangeException.class,
                () -> store.getRange(key, ByteRange.of(1000, 1), new byte[1], x -> { }));
        assertThrows(ObjectNotFoundException.class,
                () -> store.getRange(key("a/nope"), ByteRange.of(0, 10), new byte[10], x -> { }));
        assertThrows(IllegalArgumentException.class,
                () -> store.getRange(key, ByteRange.of(0, 10), new byte[9], x -> { }));
    }

    @Test
    void rangeStartingAtOrBeyondTheEndIsInvalid() {
        ObjectKey key = key("ranged");
        store.put(key, randomBytes(10, 1000));

        InvalidRangeException atEnd = assertThrows(InvalidRangeException.class,
                () -> store.getRange(key, ByteRange.of(1000, 1)));
        assertEquals(key, atEnd.key());
        assertEquals(ByteRange.of(1000, 1), atEnd.range());
        assertThrows(InvalidRangeException.class, () -> store.getRange(key, ByteRange.of(5000, 10)));

        store.put(key("empty"), new byte[0]);
        assertThrows(InvalidRangeException.class, () -> store.getRange(key("empty"), ByteRange.of(0, 1)));
    }

    // ---- missing objects ----

    @Test
    void missingObjectsAreReportedAsNotFound() {
        ObjectNotFoundException whole = assertThrows(ObjectNotFoundException.class, () -> store.get(key("nope")));
        assertEquals(key("nope"), whole.key());
        ObjectNotFoundException ranged = assertThrows(ObjectNotFoundException.class,
                () -> store.getRange(key("a/nope"), ByteRange.of(0, 10)));
        assertEquals(key("a/nope"), ranged.key());
        assertEquals(Optional.empty(), store.head(key("nope")));
    }

    @Test
    void aPrefixOfOtherKeysIsNotAnObject() {
        store.put(key("dir/child"), new byte[] {1});
        assertThrows(ObjectNotFoundException.class, () -> store.get(key("dir")));
        assertEquals(Optional.empty(), store.head(key("dir")));
        store.delete(key("dir"));
        assertArrayEquals(new byte[] {1}, store.get(key("dir/child")));
    }

    // ---- head ----

    @Test
    void headDescribesTheObject() {
        byte[] bytes = randomBytes(11, 4321);
        store.put(key("t/0/00000000000000000042.index"), bytes);
        ObjectMetadata metadata = store.head(key("t/0/00000000000000000042.index")).orElseThrow();
        assertEquals(key("t/0/00000000000000000042.index"), metadata.key());
        assertEquals(4321, metadata.size());
        assertFalse(metadata.etag().isBlank());
        assertTrue(metadata.lastModified().getEpochSecond() > 1_600_000_000L, "plausible time: " + metadata);
    }

    // ---- putIfAbsent ----

    @Test
    void putIfAbsentCreatesOnlyOnce() {
        ObjectKey manifest = key("t/0/manifest/00000000000000000001.json");
        byte[] first = "{\"v\":1}".getBytes(StandardCharsets.UTF_8);
        assertTrue(store.putIfAbsent(manifest, first));
        assertFalse(store.putIfAbsent(manifest, "{\"v\":\"other\"}".getBytes(StandardCharsets.UTF_8)));
        assertArrayEquals(first, store.get(manifest), "the losing write changed nothing");
    }

    @Test
    void putIfAbsentOfTheSameBytesIsTheSameCommit() {
        // What a retried request whose first attempt succeeded (response lost) sees.
        ObjectKey manifest = key("t/0/manifest/00000000000000000002.json");
        byte[] bytes = "{\"v\":2}".getBytes(StandardCharsets.UTF_8);
        assertTrue(store.putIfAbsent(manifest, bytes));
        assertTrue(store.putIfAbsent(manifest, bytes.clone()));
        assertArrayEquals(bytes, store.get(manifest));
    }

    @Test
    void putIfAbsentFailsOverAnObjectWrittenByPut() {
        store.put(key("k"), new byte[] {1});
        assertFalse(store.putIfAbsent(key("k"), new byte[] {2}));
        assertArrayEquals(new byte[] {1}, store.get(key("k")));
    }

    @Test
    void putIfAbsentSucceedsAgainAfterDelete() {
        assertTrue(store.putIfAbsent(key("k"), new byte[] {1}));
        store.delete(key("k"));
        assertTrue(store.putIfAbsent(key("k"), new byte[] {2}));
        assertArrayEquals(new byte[] {2}, store.get(key("k")));
    }

    @Test
    void racingPutIfAbsentHasExactlyOneWinner() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 10; round++) {
                ObjectKey manifest = key(String.format("t/0/manifest/%020d.json", round));
                CountDownLatch ready = new CountDownLatch(threads);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Boolean>> outcomes = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    byte[] content = ("writer-" + t + "-" + "x".repeat(t * 100)).getBytes(StandardCharsets.UTF_8);
                    outcomes.add(pool.submit(() -> {
                        ready.countDown();
                        go.await();
                        return store.putIfAbsent(manifest, content);
                    }));
                }
                assertTrue(ready.await(10, TimeUnit.SECONDS));
                go.countDown();
                List<Integer> winners = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    if (outcomes.get(t).get(30, TimeUnit.SECONDS)) {
                        winners.add(t);
                    }
                }
                assertEquals(1, winners.size(), "round " + round + ": winners " + winners);
                int winner = winners.get(0);
                assertEquals("writer-" + winner + "-" + "x".repeat(winner * 100),
                        new String(store.get(manifest), StandardCharsets.UTF_8), "the winner's bytes are stored");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- listing ----

    private static final List<String> LISTING_KEYS = List.of(
            "t/0/00000000000000000000.log",
            "t/0/00000000000000000000.index",
            "t/0/00000000000000000100.log",
            "t/0/00000000000000000100.index",
            "t/0/manifest/00000000000000000001.json",
            "t/0/manifest/00000000000000000002.json",
            "t/1/00000000000000000000.log",
            "t/10/00000000000000000000.log",
            "t-other/0/00000000000000000000.log", // '-' sorts before '/'
            "t.x/0/00000000000000000000.log",     // '.' sorts before '/' too
            "u");

    private void putListingKeys() {
        List<String> shuffled = new ArrayList<>(LISTING_KEYS);
        Collections.shuffle(shuffled, new Random(42));
        for (String k : shuffled) {
            store.put(key(k), k.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static List<String> expected(String prefix) {
        return LISTING_KEYS.stream().filter(k -> k.startsWith(prefix)).sorted().toList();
    }

    @Test
    void listReturnsKeysUnderThePrefixInLexicalOrder() {
        putListingKeys();
        for (String prefix : List.of("", "t", "t/", "t/0/", "t/0/0000", "t/1", "t/0/manifest/", "t-", "u", "zzz")) {
            ObjectPage page = store.list(prefix, Optional.empty(), 1000);
            assertEquals(expected(prefix), keys(page.objects()), "prefix '" + prefix + "'");
            assertEquals(Optional.empty(), page.nextToken(), "prefix '" + prefix + "'");
        }
    }

    @Test
    void listReportsSizes() {
        putListingKeys();
        for (ObjectMetadata object : store.list("t/0/", Optional.empty(), 1000).objects()) {
            assertEquals(object.key().value().length(), object.size(), object.toString());
        }
    }

    @Test
    void listPagesThroughAllKeysWithoutDuplicatesOrGaps() {
        putListingKeys();
        for (int pageSize : new int[] {1, 2, 3, 5}) {
            List<String> seen = new ArrayList<>();
            Optional<String> token = Optional.empty();
            int pages = 0;
            do {
                ObjectPage page = store.list("t", token, pageSize);
                assertTrue(page.objects().size() <= pageSize);
                seen.addAll(keys(page.objects()));
                token = page.nextToken();
                assertTrue(++pages <= LISTING_KEYS.size() + 1, "paging does not terminate");
            } while (token.isPresent());
            assertEquals(expected("t"), seen, "page size " + pageSize);
        }
    }

    @Test
    void listRejectsBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> store.list("/t", Optional.empty(), 10));
        assertThrows(IllegalArgumentException.class, () -> store.list("t", Optional.empty(), 0));
        assertThrows(IllegalArgumentException.class, () -> store.list("t", Optional.empty(), 1001));
    }

    // ---- delete ----

    @Test
    void deleteIsIdempotent() {
        store.put(key("t/0/00000000000000000000.log"), new byte[] {1});
        store.delete(key("t/0/00000000000000000000.log"));
        assertEquals(Optional.empty(), store.head(key("t/0/00000000000000000000.log")));
        store.delete(key("t/0/00000000000000000000.log"));
        store.delete(key("never/existed"));
        assertEquals(List.of(), keys(store.list("", Optional.empty(), 1000).objects()));
    }

    /**
     * How many keys the paging/batching test writes: by default 1001, one more than S3's ListObjectsV2 page and
     * DeleteObjects batch. A backend with no such limits (the filesystem pages by key, deletes one by one, and its
     * fsyncs make 1001 writes slow) may use fewer; its paging is covered by the small-page tests.
     */
    protected int keysBeyondOnePage() {
        return 1001;
    }

    @Test
    void listAllAndDeleteAllCrossThe1000KeyPageAndBatchLimits() throws Exception {
        List<ObjectKey> many = IntStream.range(0, keysBeyondOnePage())
                .mapToObj(i -> key(String.format("d/%020d.log", i * 7L))).toList();
        List<ObjectKey> shuffled = new ArrayList<>(many);
        Collections.shuffle(shuffled, new Random(7));
        // Written from 4 threads only to keep the test short; order of writing does not matter to listing.
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> writes = new ArrayList<>();
            for (ObjectKey k : shuffled) {
                writes.add(pool.submit(() -> store.put(k, new byte[] {2})));
            }
            for (Future<?> write : writes) {
                write.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        store.put(key("d/kept"), new byte[] {3});
        List<String> all = new ArrayList<>(many.stream().map(ObjectKey::value).toList());
        all.add("d/kept");
        assertEquals(all, store.listAll("d/").map(m -> m.key().value()).collect(Collectors.toList()));

        List<ObjectKey> withMissing = new ArrayList<>(many);
        withMissing.add(key("d/missing"));
        store.deleteAll(withMissing);

        assertEquals(List.of("d/kept"), keys(store.list("d/", Optional.empty(), 1000).objects()));
        store.deleteAll(withMissing); // again: nothing to do, still fine
        store.deleteAll(List.of());
    }

    // ---- validation ----

    @Test
    void keysAreValidatedAtConstruction() {
        for (String bad : List.of("", " ", "/a", "a/", "a//b", "..", "a/../b", "a/./b", ".", "a\\b", "ä", "a b",
                "a\nb", "x".repeat(1025))) {
            assertThrows(IllegalArgumentException.class, () -> ObjectKey.of(bad), "'" + bad + "'");
        }
        assertThrows(NullPointerException.class, () -> ObjectKey.of(null));
        for (String good : List.of("a", "a/b", "t/0/00000000000000000000.log", "a..b", ".hidden", "x".repeat(1024),
                "A-Z_a-z.0-9!*'()=+,~@")) {
            assertEquals(good, ObjectKey.of(good).value());
        }
    }

    @Test
    void rangesAreValidatedAtConstruction() {
        assertThrows(IllegalArgumentException.class, () -> ByteRange.of(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> ByteRange.of(0, 0));
        assertThrows(IllegalArgumentException.class, () -> ByteRange.of(Long.MAX_VALUE, 2));
        assertEquals(15, ByteRange.of(5, 10).end());
        assertEquals("bytes=5-14", ByteRange.of(5, 10).toHttpRange());
        assertThrows(IllegalArgumentException.class,
                () -> store.getRange(key("k"), ByteRange.of(0, Integer.MAX_VALUE)));
    }

    // ---- helpers ----

    protected static ObjectKey key(String value) {
        return ObjectKey.of(value);
    }

    protected static byte[] randomBytes(long seed, int length) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    protected static List<String> keys(List<ObjectMetadata> objects) {
        return objects.stream().map(m -> m.key().value()).toList();
    }
}
