package io.tierlog.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Runs the contract against {@link FilesystemObjectStore}, plus what only a filesystem can get wrong.
 *
 * <p>It lives in the testkit module rather than beside the class it tests: the testkit depends on
 * tierlog-objectstore's main jar, so tierlog-objectstore's tests cannot depend on the testkit (a reactor cycle).
 */
class FilesystemObjectStoreTest extends ObjectStoreContractTest {

    private final ManualClock clock = new ManualClock();

    private Path root() {
        return scratch.resolve("store");
    }

    @Override
    protected ObjectStore createStore() {
        return new FilesystemObjectStore(root(), clock, Duration.ofHours(1));
    }

    @Override
    protected int keysBeyondOnePage() {
        return 150; // see the super method: no 1000-key limits here, and each write costs two fsyncs
    }

    @Test
    void tempFilesAreNeverListedOrReadable() throws IOException {
        store.put(key("a/real"), new byte[] {1});
        Path tmp = root().resolve("tmp");
        Files.write(tmp.resolve("123.tmp"), new byte[] {9});

        assertEquals(List.of("a/real"), keys(store.list("", Optional.empty(), 1000).objects()));
        assertThrows(IllegalArgumentException.class, () -> key("../tmp/123.tmp"));
        assertThrows(ObjectNotFoundException.class, () -> store.get(key("tmp/123.tmp")));
    }

    @Test
    void staleTempFilesAreDeletedOnOpenAndFreshOnesKept() throws IOException {
        Path tmp = root().resolve("tmp");
        Path stale = Files.write(tmp.resolve("stale.tmp"), new byte[] {1});
        Path fresh = Files.write(tmp.resolve("fresh.tmp"), new byte[] {2});
        Files.setLastModifiedTime(stale, FileTime.from(clock.instant().minus(Duration.ofHours(2))));
        Files.setLastModifiedTime(fresh, FileTime.from(clock.instant().minus(Duration.ofMinutes(10))));

        new FilesystemObjectStore(root(), clock, Duration.ofHours(1)).close();

        assertFalse(Files.exists(stale), "a crash leftover older than the threshold is removed");
        assertTrue(Files.exists(fresh), "a younger temp file may belong to a live writer elsewhere");
    }

    @Test
    void successfulWritesLeaveNoTempFiles() throws IOException {
        store.put(key("a"), new byte[] {1});
        store.putIfAbsent(key("b"), new byte[] {1});
        store.putIfAbsent(key("b"), new byte[] {2});
        store.put(key("c"), Files.write(scratch.resolve("src"), new byte[] {3}));
        try (Stream<Path> temps = Files.list(root().resolve("tmp"))) {
            assertEquals(List.of(), temps.toList());
        }
    }

    @Test
    void objectsAreFilesUnderTheRootNamedByTheirKeys() throws IOException {
        store.put(key("t/0/00000000000000000000.log"), new byte[] {4, 5});
        assertArrayEquals(new byte[] {4, 5},
                Files.readAllBytes(root().resolve("objects/t/0/00000000000000000000.log")));
    }

    @Test
    void deleteRemovesEmptiedDirectoriesSoANameCanBecomeAnObject() {
        store.put(key("x/y/z"), new byte[] {1});
        store.delete(key("x/y/z"));
        assertFalse(Files.exists(root().resolve("objects/x")));
        store.put(key("x"), new byte[] {2});
        assertArrayEquals(new byte[] {2}, store.get(key("x")));
    }

    @Test
    void aKeyCannotBeBothAnObjectAndAPrefixOfObjects() {
        store.put(key("a"), new byte[] {1});
        ObjectStoreException under = assertThrows(ObjectStoreException.class, () -> store.put(key("a/b"), new byte[] {2}));
        assertFalse(under instanceof ObjectNotFoundException);
        assertThrows(ObjectStoreException.class, () -> store.putIfAbsent(key("a/b"), new byte[] {2}));
        store.put(key("c/d"), new byte[] {3});
        assertThrows(ObjectStoreException.class, () -> store.put(key("c"), new byte[] {4}));
        assertThrows(ObjectStoreException.class, () -> store.putIfAbsent(key("c"), new byte[] {4}));
        assertArrayEquals(new byte[] {1}, store.get(key("a")));
        assertThrows(ObjectNotFoundException.class, () -> store.get(key("a/b")));
        store.delete(key("a/b"));
    }

    @Test
    void twoInstancesOverOneDirectorySeeEachOthersWrites() {
        try (ObjectStore other = new FilesystemObjectStore(root())) {
            assertTrue(store.putIfAbsent(key("m/1"), new byte[] {1}));
            assertFalse(other.putIfAbsent(key("m/1"), new byte[] {2}));
            assertArrayEquals(new byte[] {1}, other.get(key("m/1")));
        }
    }
}
