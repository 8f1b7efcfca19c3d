package io.tierlog.access;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Whole-file writes and deletes on the shared volume that are durable when they return: the access records' one
 * way to change a file, so a crash leaves the old or the new file, never a torn one, and nothing answered is lost.
 */
final class DurableFiles {
    private DurableFiles() {
    }

    /**
     * Writes {@code bytes} to {@code dir/name}: to the temporary {@code dir/.name.<tag>.tmp} (a dot-file, which
     * readers skip), fsynced, atomically renamed over {@code name}, then the directory fsynced. A leftover temporary
     * file after a failure is harmless.
     */
    static void write(Path dir, String name, byte[] bytes, String tag) throws IOException {
        Path tmp = dir.resolve("." + name + "." + tag + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the directory's file system cannot rename atomically", e);
            }
            syncDirectory(dir);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // a dot-file: readers skip it
            }
            throw e;
        }
    }

    /** Deletes {@code dir/name} and fsyncs the directory; whether the file was there. */
    static boolean delete(Path dir, String name) throws IOException {
        boolean existed = Files.deleteIfExists(dir.resolve(name));
        syncDirectory(dir);
        return existed;
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
