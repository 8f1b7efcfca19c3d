package io.tierlog.log.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/**
 * Small files that other processes read while we write them: written to a uniquely named temporary file in
 * the same directory, fsynced, then published by a single atomic directory operation, so a reader sees the
 * whole old file or the whole new one. Temporary files start with {@code .tmp-} and are never mistaken for data.
 * Their names do not contain the target's name (only a UUID), so any target whose own name fits the file system's
 * 255-byte limit can be written, e.g. the metadata of a topic with a 249-character name.
 *
 * <p>Public on purpose: the hot volume holds other shared state than the log, written the same way (consumer-group
 * state in {@code storage/groups}, share-group state in {@code storage/sharegroups}). It knows nothing of segments.
 */
public final class AtomicFiles {
    public static final String TEMP_PREFIX = ".tmp-";

    private AtomicFiles() {
    }

    /** Publishes {@code bytes} at {@code target}, replacing any existing file. */
    public static void replace(Path target, byte[] bytes) {
        replace(target, bytes, true);
    }

    /**
     * As {@link #replace(Path, byte[])}, but nothing is forced: every process (on NFS, every host: the file is closed
     * before the rename) sees the whole new file at once, and it becomes durable when the kernel writes it back. After
     * a machine loss the name may be gone or hold a partial file. Only for files whose loss costs work, never data: a
     * checkpoint that shortens a rebuild, which its reader checks and skips when it does not parse.
     */
    public static void replaceUnforced(Path target, byte[] bytes) {
        replace(target, bytes, false);
    }

    private static void replace(Path target, byte[] bytes, boolean force) {
        Path tmp = writeTemp(target, bytes, force);
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            if (force) {
                fsyncDirectory(target.getParent());
            }
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw new UncheckedIOException("cannot publish " + target, e);
        }
    }

    /**
     * Publishes {@code bytes} at {@code target} only if no file of that name exists; exclusive across processes
     * (link(2) fails if the name exists, also on NFS). Returns false, changing nothing, if it exists.
     */
    public static boolean createExclusive(Path target, byte[] bytes) {
        Path tmp = writeTemp(target, bytes, true);
        try {
            Files.createLink(target, tmp);
            fsyncDirectory(target.getParent());
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + target, e);
        } finally {
            deleteQuietly(tmp);
        }
    }

    private static Path writeTemp(Path target, byte[] bytes, boolean force) {
        Path tmp = target.resolveSibling(TEMP_PREFIX + UUID.randomUUID());
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            if (force) {
                ch.force(true);
            }
            return tmp;
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw new UncheckedIOException("cannot write " + tmp, e);
        }
    }

    /** Makes a rename or create durable: on Linux a new directory entry is durable only once the directory is. */
    public static void fsyncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some filesystems (and all of Windows) refuse to open or sync a directory; the data file itself was
            // synced, so the worst case is the rename not surviving power loss.
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a leftover temp file is harmless: it is never read as data
        }
    }
}
