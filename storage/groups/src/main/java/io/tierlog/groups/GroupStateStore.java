package io.tierlog.groups;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tierlog.log.Names;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.io.FileLocks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Each group's state as one JSON file, {@code <data-dir>/__groups/<group>/state.json}, changed only by a
 * read-modify-write under an exclusive lock on the sibling {@code .lock} file ({@link FileChannel#lock()}, which
 * NFSv4 and EFS honour across hosts, as the partition writer's lock). Nothing is cached: every call reads the
 * file, so every process on the volume sees the same state, and a process that dies (kill -9) holds nothing
 * another one needs (the kernel drops its lock).
 *
 * <p>Durability: a changed state is written to a temporary file, fsynced, renamed over the old one and the
 * directory fsynced ({@link AtomicFiles#replace}) before {@link #update} returns, so an answer built from it
 * survives a crash; a reader sees the whole old or the whole new file. The {@code .lock} file is never deleted
 * (a waiter would otherwise lock an unlinked file while a newcomer locks a new one).
 *
 * <p>Thread-safe: threads of one process are serialized by a per-group mutex first (a JVM may not hold two
 * {@link FileLock}s on one file).
 */
public final class GroupStateStore {
    static final String DIR = "__groups";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<Path, ReentrantLock> JVM_MUTEXES = new ConcurrentHashMap<>();

    private final Path root;

    public GroupStateStore(Path dataDir) {
        this.root = dataDir.resolve(DIR);
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + root, e);
        }
    }

    /**
     * Runs {@code change} on the group's current state under the group's lock, writes the state back durably if
     * {@code change} altered it, and returns what {@code change} returned. An exception from {@code change}
     * leaves the stored state as it was; a state marked {@link GroupState#deleted} is removed.
     */
    <T> T update(String group, Function<GroupState, T> change) {
        Path dir = root.resolve(Names.requireValidGroup(group));
        try {
            Files.createDirectories(dir);
            ReentrantLock mutex = JVM_MUTEXES.computeIfAbsent(dir.toRealPath(), k -> new ReentrantLock());
            mutex.lock();
            try (FileChannel lockFile = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                 FileLock ignored = FileLocks.lock(lockFile)) {
                Path file = dir.resolve("state.json");
                byte[] before = read(file);
                GroupState state = before == null ? new GroupState() : JSON.readValue(before, GroupState.class);
                T result = change.apply(state);
                if (state.deleted) {
                    if (Files.deleteIfExists(file)) {
                        AtomicFiles.fsyncDirectory(dir);
                    }
                    return result;
                }
                byte[] after = JSON.writeValueAsBytes(state);
                if (before == null ? !state.members.isEmpty() || state.groupEpoch != 0 || state.classic != null
                        || !state.configs.isEmpty() : !Arrays.equals(before, after)) {
                    AtomicFiles.replace(file, after);
                }
                return result;
            } finally {
                mutex.unlock();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot update the state of group " + group, e);
        }
    }

    /**
     * The group's state as last written, read without the lock (files are replaced whole, so this is one whole
     * state, possibly replaced a moment later); null if the group has none.
     */
    GroupState read(String group) {
        Path file = root.resolve(Names.requireValidGroup(group)).resolve("state.json");
        try {
            byte[] bytes = read(file);
            return bytes == null ? null : JSON.readValue(bytes, GroupState.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the state of group " + group, e);
        }
    }

    /** Groups with a state file, by name (a listing without locks: a group may appear or go at any time). */
    List<String> groups() {
        try (Stream<Path> dirs = Files.list(root)) {
            return dirs.filter(d -> Files.exists(d.resolve("state.json"))).map(d -> d.getFileName().toString())
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    /** Whether the group has a state file (a read without the lock: a hint, not a decision). */
    boolean exists(String group) {
        return Files.exists(root.resolve(Names.requireValidGroup(group)).resolve("state.json"));
    }

    private static byte[] read(Path file) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
    }
}
