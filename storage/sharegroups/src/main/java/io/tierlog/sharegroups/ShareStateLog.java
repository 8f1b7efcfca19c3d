package io.tierlog.sharegroups;

import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.io.FileLocks;
import io.tierlog.sharegroups.StateLogCodec.Replayed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.lang.ref.Cleaner;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A share-partition's state file as an append-only log (ADR 0038): a snapshot, then one update frame per commit
 * holding only what the commit changed ({@link StateLogCodec}). Changed only under an exclusive lock: a
 * {@link FileLock} on the sibling {@code .lock} file (NFSv4 and EFS honour it across hosts; the kernel drops it when a
 * process dies), taken after a per-file JVM mutex (a JVM may not hold two locks on one file).
 *
 * <p>An instance keeps the log open and the state as of the bytes it last read or wrote. Each {@link #update} checks
 * the file under the lock with one {@code stat}: same file and length, the kept state is current; longer, it reads
 * and applies only the frames other processes appended; another file (a snapshot replaced it) or none, it reads
 * the whole file again. Files in the whole-state forms of earlier builds are read, and replaced by a snapshot on the
 * first write.
 *
 * <p>Durability: {@link Session#write} appends at the end of the last whole frame (cutting off what a writer that
 * died mid-append left), with {@code fsync} forcing it to disk before it returns, so an answer built after it
 * survives a crash of the process and of the machine; without, it is in the kernel's page cache and survives a crash
 * of the process. A reader stops at the first frame that is not whole, so a torn tail is never read. Once the frames
 * after the snapshot outgrow {@link #compactAtBytes}, the write is a new snapshot instead (temp file, fsync when
 * asked, atomic rename, directory fsync): the file stays within a few snapshots' size, and so does reading it.
 *
 * <p>Thread-safety: one instance may be used from many threads; its kept state is guarded by the JVM mutex.
 * Lock files are never deleted while the directory lives, and their channels stay open (at most
 * {@link #MAX_OPEN_LOCKS} per JVM, the least recently used closed beyond that while no thread of this JVM holds it:
 * closing a channel drops every lock the process holds on that file).
 */
final class ShareStateLog {
    static final int MAX_OPEN_LOCKS = 4096;
    /** Beyond this many state logs kept open in the JVM, a session closes its log when it ends (read whole next time). */
    static final int MAX_OPEN_LOGS = 4096;
    private static final AtomicInteger OPEN_LOGS = new AtomicInteger();
    /** Closes the log of an instance dropped without {@link #forget} (and counts it closed). */
    private static final Cleaner CLEANER = Cleaner.create();
    /** The least size of the update frames after a snapshot at which the next write is a snapshot. */
    static final long MIN_COMPACT_BYTES = 256 * 1024;
    private static final Map<Path, LockHandle> LOCKS = new LinkedHashMap<>(64, 0.75f, true); // guarded by itself

    private final Path file;
    private final Path lockFile;
    private final boolean fsync;
    private final long minCompactBytes;
    // The kept view of the file, guarded by the JVM mutex of the file.
    private FileChannel channel;
    /** Closes {@link #channel} once, when forgotten or when this instance is unreachable. */
    private Cleaner.Cleanable closer;
    private Object fileKey;
    /** Where the last whole frame ends; what lies beyond, up to {@link #fileSize}, is a torn tail. */
    private long length;
    private long fileSize;
    /** Update bytes since the snapshot. */
    private long updates;
    /** The state as of {@link #length}; null when not known (handed to a session that did not write it back). */
    private SharePartitionState state;
    private boolean legacy;
    /** The state last written in the running session: kept once the session ends, unless changed after that write. */
    private SharePartitionState written;
    private long lastStart;
    private long lastEnd;
    private byte[] lastTail;

    ShareStateLog(Path file, boolean fsync) {
        this(file, fsync, MIN_COMPACT_BYTES);
    }

    /** @param minCompactBytes the least update bytes after a snapshot that make the next write a snapshot (tests) */
    ShareStateLog(Path file, boolean fsync, long minCompactBytes) {
        this.minCompactBytes = minCompactBytes;
        this.file = file.toAbsolutePath().normalize();
        this.lockFile = this.file.resolveSibling(file.getFileName() + ".lock");
        this.fsync = fsync;
    }

    /** The locked view of the log during one {@link #update}. */
    interface Session {
        /**
         * The current state, null when there is none. The caller may change it and pass it to {@link #write}; a
         * session that changes it and does not write it back leaves no trace (the next one reads the file).
         */
        SharePartitionState read();

        /** Durably records {@code s} (see the class comment): only what changed since it was read or last written. */
        void write(SharePartitionState s);

        /** Removes the file durably. */
        void delete();

        /**
         * Durably replaces the whole state by {@code s}, as a new snapshot (temp file, rename): for a change an update
         * frame cannot express, such as a new incarnation or a window that moved back.
         */
        void replace(SharePartitionState s);
    }

    /** Runs {@code change} holding the lock (blocking until it is free) and returns its result. */
    <T> T update(Function<Session, T> change) {
        LockHandle handle = LockHandle.acquire(lockFile);
        written = null;
        try (FileLock ignored = FileLocks.lock(handle.channel())) {
            T result = change.apply(new Session() {
                @Override
                public SharePartitionState read() {
                    refresh();
                    SharePartitionState s = state;
                    state = null; // until written back: the caller may change it half-way and fail
                    if (s != null) {
                        s.clearChanges();
                    }
                    return s;
                }

                @Override
                public void write(SharePartitionState s) {
                    append(s);
                }

                @Override
                public void delete() {
                    remove();
                }

                @Override
                public void replace(SharePartitionState s) {
                    try {
                        snapshot(s);
                    } catch (IOException | RuntimeException e) {
                        forget(); // what reached the file is unknown: read it again next time
                        throw e instanceof IOException io
                                ? new UncheckedIOException("cannot write a share-group state file", io)
                                : (RuntimeException) e;
                    }
                }
            });
            if (written != null && StateLogCodec.updateFrame(written, lastStart, lastEnd, lastTail) == null) {
                state = written; // as in the file: the next session needs no read beyond a stat
            }
            if (OPEN_LOGS.get() > MAX_OPEN_LOGS) {
                forget(); // file descriptors stay bounded; this share-partition is read whole next time
            }
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock a share-group state file", e);
        } finally {
            written = null;
            handle.mutex.unlock();
        }
    }

    /** How many state logs instances of this JVM keep open (for tests). */
    static int openLogs() {
        return OPEN_LOGS.get();
    }

    /** The state the file holds now, null when it does not exist; read without the lock (whole frames only). */
    SharePartitionState readUnlocked() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read a share-group state file", e);
        }
        return decodeWhole(bytes).state();
    }

    /** The size at which the update frames after a snapshot give way to a new snapshot. */
    private long compactAtBytes(SharePartitionState s) {
        return Math.max(minCompactBytes, 4L * (s.records.size() + 1) * StateLogCodec.ENTRY_BYTES);
    }

    private void refresh() {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            forget();
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read a share-group state file", e);
        }
        try {
            Object key = attrs.fileKey();
            // A channel closed under us (an interrupted thread closes a FileChannel) is reopened like another file.
            if (channel != null && channel.isOpen() && key != null && key.equals(fileKey) && state != null && !legacy) {
                if (attrs.size() == fileSize && fileSize == length) {
                    return; // nobody wrote since (a writer only appends after the last whole frame)
                }
                // Others appended (and no one replaced the file: it is the one this channel holds open, so its
                // inode number cannot have been reused): apply their frames only.
                fileSize = attrs.size();
                byte[] more = readFully(channel, length, (int) (fileSize - length));
                Replayed r = StateLogCodec.replay(more, 0, more.length, state);
                length += r.end();
                remember(r.state());
                state = r.state();
                return;
            }
            forget();
            keep(FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE));
            fileKey = key;
            fileSize = channel.size();
            byte[] bytes = readFully(channel, 0, (int) fileSize);
            Whole whole = decodeWhole(bytes);
            legacy = whole.legacy();
            length = whole.end();
            updates = 0; // not known: counted from here on, so a log read in full is compacted a little later
            if (whole.state() != null) {
                remember(whole.state());
            }
            state = whole.state();
        } catch (NoSuchFileException e) {
            forget();
        } catch (IOException e) {
            forget();
            throw new UncheckedIOException("cannot read a share-group state file", e);
        }
    }

    private record Whole(SharePartitionState state, int end, boolean legacy) {
    }

    private static Whole decodeWhole(byte[] bytes) {
        if (!StateLogCodec.isLog(bytes)) {
            return new Whole(bytes.length == 0 ? null : StateCodec.decode(bytes), bytes.length, true);
        }
        Replayed r = StateLogCodec.replay(bytes, StateLogCodec.FILE_HEADER_BYTES, bytes.length, null);
        if (r.state() == null) {
            throw new UncheckedIOException(new IOException("corrupt share-group state log: no snapshot"));
        }
        return new Whole(r.state(), r.end(), false);
    }

    /** Notes what the file holds now, to find what the next write changes. */
    private void remember(SharePartitionState s) {
        lastStart = s.startOffset;
        lastEnd = s.endOffset;
        lastTail = StateLogCodec.tail(s);
    }

    private void append(SharePartitionState s) {
        try {
            if (channel == null || legacy) {
                snapshot(s);
                return;
            }
            byte[] frame = StateLogCodec.updateFrame(s, lastStart, lastEnd, lastTail);
            if (frame == null) {
                s.clearChanges();
                written = s;
                return;
            }
            if (updates + frame.length > compactAtBytes(s)) {
                snapshot(s);
                return;
            }
            if (fileSize != length) {
                channel.truncate(length); // a torn tail: a frame after it would never be read
            }
            writeFully(channel, ByteBuffer.wrap(frame), length);
            if (fsync) {
                channel.force(false);
            }
            length += frame.length;
            fileSize = length;
            updates += frame.length;
            s.clearChanges();
            remember(s);
            written = s;
        } catch (IOException | RuntimeException e) {
            forget(); // what reached the file is unknown: read it again next time
            throw e instanceof IOException io ? new UncheckedIOException("cannot write a share-group state file", io)
                    : (RuntimeException) e;
        }
    }

    /** Replaces the file by a new one holding the header and a snapshot of {@code s}, and keeps that one open. */
    private void snapshot(SharePartitionState s) throws IOException {
        byte[] bytes = StateLogCodec.snapshotFile(s);
        Files.createDirectories(file.getParent());
        // A random name (not a UUID: its SecureRandom showed in profiles); CREATE_NEW refuses a clash.
        Path tmp = file.resolveSibling(AtomicFiles.TEMP_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        FileChannel fresh = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            writeFully(fresh, ByteBuffer.wrap(bytes), 0);
            if (fsync) {
                fresh.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            fresh.close();
            Files.deleteIfExists(tmp); // a leftover temp file is never read as state
            throw e;
        }
        if (fsync) {
            AtomicFiles.fsyncDirectory(file.getParent());
        }
        forget();
        keep(fresh);
        fileKey = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        legacy = false;
        length = bytes.length;
        fileSize = length;
        updates = 0;
        s.clearChanges();
        remember(s);
        written = s;
    }

    private void remove() {
        try {
            forget();
            if (Files.deleteIfExists(file)) {
                AtomicFiles.fsyncDirectory(file.getParent());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete a share-group state file", e);
        }
    }

    /** Drops the kept view: the next session reads the file from the start. */
    private void forget() {
        state = null;
        written = null;
        legacy = false;
        fileKey = null;
        if (channel != null) {
            closer.clean();
            closer = null;
            channel = null;
        }
    }

    private void keep(FileChannel c) {
        channel = c;
        OPEN_LOGS.incrementAndGet();
        closer = CLEANER.register(this, new CloseLog(c));
    }

    /** Holds the channel, not the instance (a cleaning action must not keep its object reachable). */
    private record CloseLog(FileChannel channel) implements Runnable {
        @Override
        public void run() {
            OPEN_LOGS.decrementAndGet();
            try {
                channel.close();
            } catch (IOException ignored) {
                // only read from or appended to under the lock: nothing is lost with it
            }
        }
    }

    private static byte[] readFully(FileChannel c, long position, int size) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(size);
        while (buf.hasRemaining()) {
            if (c.read(buf, position + buf.position()) < 0) {
                break; // shorter than its size said: a whole-frame check follows
            }
        }
        return buf.position() == size ? buf.array() : java.util.Arrays.copyOf(buf.array(), buf.position());
    }

    private static void writeFully(FileChannel c, ByteBuffer buf, long position) throws IOException {
        long at = position;
        while (buf.hasRemaining()) {
            at += c.write(buf, at);
        }
    }

    /**
     * A lock file's JVM mutex and open channel. Channels are closed only for the least recently used beyond
     * {@link #MAX_OPEN_LOCKS}, and only while no thread of this JVM holds or waits for that file's lock through them.
     */
    private static final class LockHandle {
        final ReentrantLock mutex = new ReentrantLock();
        private final Path path;
        private FileChannel channel;
        private boolean closed;

        private LockHandle(Path path) {
            this.path = path;
        }

        /** The handle of {@code lockFile} with its mutex held by the caller. */
        static LockHandle acquire(Path lockFile) {
            while (true) {
                LockHandle h;
                synchronized (LOCKS) {
                    h = LOCKS.computeIfAbsent(lockFile, LockHandle::new);
                    evictBeyondLimit(h);
                }
                h.mutex.lock();
                if (!h.closed) {
                    return h;
                }
                h.mutex.unlock(); // evicted meanwhile: take the current handle
            }
        }

        private static void evictBeyondLimit(LockHandle keep) {
            Iterator<LockHandle> it = LOCKS.values().iterator();
            while (LOCKS.size() > MAX_OPEN_LOCKS && it.hasNext()) {
                LockHandle h = it.next();
                if (h == keep || h.mutex.isHeldByCurrentThread() || h.mutex.hasQueuedThreads() || !h.mutex.tryLock()) {
                    continue;
                }
                try {
                    h.closed = true;
                    it.remove();
                    if (h.channel != null) {
                        h.channel.close();
                    }
                } catch (IOException ignored) {
                    // nothing held: no lock to lose
                } finally {
                    h.mutex.unlock();
                }
            }
        }

        /** The open channel of the lock file (opened on first use); called holding the mutex. */
        FileChannel channel() throws IOException {
            if (channel == null || !channel.isOpen()) { // an interrupted thread closes a FileChannel
                Files.createDirectories(path.getParent());
                channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            }
            return channel;
        }
    }
}
