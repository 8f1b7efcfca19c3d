package io.tierlog.log.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A small state file changed only by read-modify-write under an exclusive lock (share-group configs and members,
 * Kafka transactions). The lock is a {@link FileLock} on a lock file, by default the state file's sibling
 * {@code <name>.lock}, or one given so that several state files share it (lock striping, for state files that come
 * and go: a lock file is never deleted). NFSv4 and EFS honour the lock across hosts; the kernel drops it when a
 * process dies. It is taken after a per-lock-file JVM mutex (a JVM may not hold two locks on one file). Nothing is
 * cached: every {@link #update} reads the file.
 *
 * <p>Durability: with {@code fsync}, {@link Session#write} replaces the file by temp file, fsync, rename and directory
 * fsync ({@link AtomicFiles#replace}) before it returns, so what is built after it survives a crash of the process and
 * of the machine; without, by temp file and rename only, so it survives a crash of the process (the content is in the
 * kernel's page cache), as records do under {@code tierlog.fsync} {@code interval} and {@code never}. Either way a
 * reader sees the whole old or the whole new content. A session may write several times (a change that must be
 * durable before a side effect, then the outcome). Lock files are never deleted while the directory lives: deleting
 * one while another process waits on it would let two processes hold "the" lock.
 */
public final class LockedStateFile {
    private static final Map<Path, ReentrantLock> JVM_MUTEXES = new ConcurrentHashMap<>();

    private final Path file;
    private final Path lock;
    private final boolean fsync;
    /** Where a replaced version's file is kept until {@link #reclaim}; null: freed by the replacing rename. */
    private final Path reclaimDir;

    /** A state file locked through its sibling {@code <name>.lock}. */
    public LockedStateFile(Path file, boolean fsync) {
        this(file, file.resolveSibling(file.getFileName() + ".lock"), fsync);
    }

    public LockedStateFile(Path file, Path lock, boolean fsync) {
        this(file, lock, fsync, null);
    }

    /**
     * As {@link #LockedStateFile(Path, Path, boolean)}, for a state file written on a latency-critical path: each
     * write first links the version it replaces into {@code reclaimDir} (on the same file system), so the replacing
     * rename frees no blocks; the owner frees them later with {@link #reclaim}. A file system mounted with online
     * discard waits for the device whenever blocks are freed (tens of milliseconds, measured on ext4), and the
     * rename would wait with it, holding the lock.
     */
    public LockedStateFile(Path file, Path lock, boolean fsync, Path reclaimDir) {
        this.file = file;
        this.lock = lock;
        this.fsync = fsync;
        this.reclaimDir = reclaimDir;
    }

    /**
     * Frees the replaced versions kept in {@code reclaimDir} (see {@link #LockedStateFile(Path, Path, boolean, Path)});
     * returns how many. Safe beside writers: a version freed here before its replacing rename is freed by that rename.
     */
    public static int reclaim(Path reclaimDir) {
        int freed = 0;
        try (DirectoryStream<Path> kept = Files.newDirectoryStream(reclaimDir)) {
            for (Path p : kept) {
                if (Files.deleteIfExists(p)) {
                    freed++;
                }
            }
        } catch (NoSuchFileException e) {
            return freed;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot reclaim replaced state files", e);
        }
        return freed;
    }

    /** The locked view of the file during one {@link #update}. */
    public interface Session {
        /** The current content, null when the file does not exist. */
        byte[] read();

        /** Durably replaces the content (see the class comment). */
        void write(byte[] bytes);

        /** Removes the file durably. */
        void delete();
    }

    /** Runs {@code change} holding the lock (blocking until it is free) and returns its result. */
    public <T> T update(Function<Session, T> change) {
        try {
            Files.createDirectories(file.getParent());
            Files.createDirectories(lock.getParent());
            ReentrantLock mutex = JVM_MUTEXES.computeIfAbsent(lock.toAbsolutePath().normalize(), k -> new ReentrantLock());
            mutex.lock();
            try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = FileLocks.lock(channel)) {
                return change.apply(new Session() {
                    @Override
                    public byte[] read() {
                        return readIfExists(file);
                    }

                    @Override
                    public void write(byte[] bytes) {
                        keepReplacedVersion();
                        if (fsync) {
                            AtomicFiles.replace(file, bytes);
                        } else {
                            replaceInPageCache(file, bytes);
                        }
                    }

                    @Override
                    public void delete() {
                        try {
                            if (Files.deleteIfExists(file)) {
                                AtomicFiles.fsyncDirectory(file.getParent());
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException("cannot delete state file " + file.getFileName(), e);
                        }
                    }
                });
            } finally {
                mutex.unlock();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock state file " + file.getFileName(), e);
        }
    }

    /** Links the current version into {@link #reclaimDir} (if any, and if there is a version), under the lock. */
    private void keepReplacedVersion() {
        if (reclaimDir == null) {
            return;
        }
        Path link = reclaimDir.resolve(Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".old");
        try {
            try {
                Files.createLink(link, file);
            } catch (NoSuchFileException e) {
                if (!Files.exists(file)) {
                    return; // no version yet: nothing to keep
                }
                // The directory is missing (the first write ever): made here, not checked on every write.
                Files.createDirectories(reclaimDir);
                Files.createLink(link, file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the replaced version of " + file.getFileName(), e);
        }
    }

    /** The content without the lock: a whole old or new version (renames are atomic), null when absent. */
    public byte[] readUnlocked() {
        return readIfExists(file);
    }

    /** Temp file and atomic rename, no fsync: whole old or whole new content, durable against a process crash. */
    private static void replaceInPageCache(Path target, byte[] bytes) {
        Path tmp = target.resolveSibling(AtomicFiles.TEMP_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // a leftover temp file is never read as state
            }
            throw new UncheckedIOException("cannot write state file " + target.getFileName(), e);
        }
    }

    /** A state file's content without its lock, null when absent. */
    public static byte[] readIfExists(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read state file " + file.getFileName(), e);
        }
    }
}
