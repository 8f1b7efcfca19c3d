package io.tierlog.log;

import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.io.FileLocks;
import io.tierlog.log.io.FileVersion;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Log start offsets moved into a partition by deleting records (Kafka's DeleteRecords): below its mark a partition's
 * records are gone for every reader, whatever the segments still hold, until retention removes those segments.
 *
 * <p>A mark is one small file in the partition's directory on the hot volume ({@value #FILE}, the offset in decimal),
 * published whole ({@link AtomicFiles#replace}) under a lock ({@value #LOCK}) that every process on the volume takes,
 * so a mark only ever moves forward and an answered move survives a crash. A reader checks the file on each call: one
 * {@code stat} when it is absent (almost every partition), and its version ({@link FileVersion}: identity, size and
 * modification time, trusted once settled) when present, so a move made by another instance is seen at its next read.
 * A deleted topic takes its marks with its directory.
 *
 * <p>Thread-safe: threads of one process are serialized per partition first (a JVM may not hold two {@link FileLock}s
 * on one file).
 */
public final class LogStartMarks {
    static final String FILE = "log-start";
    static final String LOCK = "log-start.lock";
    private static final Map<Path, ReentrantLock> JVM_MUTEXES = new ConcurrentHashMap<>();

    private final Path dataDir;
    private final Clock clock;
    private final Map<TopicPartition, Seen> seen = new ConcurrentHashMap<>();

    /** The file as last read: its version, whether that is settled, and the offset it held. */
    private record Seen(FileVersion version, boolean settled, long offset) {
    }

    /** For tests and tools: the system clock decides when a mark file settled (see {@link FileVersion}). */
    public LogStartMarks(Path dataDir) {
        this(dataDir, Clock.systemUTC());
    }

    public LogStartMarks(Path dataDir, Clock clock) {
        this.dataDir = dataDir;
        this.clock = clock;
    }

    /** The partition's mark: records below it are deleted; 0 when none were. */
    public long markOf(TopicPartition tp) {
        Path file = dataDir.resolve(tp.dirName()).resolve(FILE);
        if (!new File(file.toString()).exists()) { // no exception on the common path: one stat
            seen.remove(tp);
            return 0;
        }
        long now = clock.millis();
        try {
            FileVersion version = FileVersion.of(Files.readAttributes(file, BasicFileAttributes.class));
            Seen last = seen.get(tp);
            if (last != null && last.settled && version.equals(last.version)) {
                return last.offset;
            }
            long offset = parse(Files.readAllBytes(file), file);
            seen.put(tp, new Seen(version, version.settledBy(now), offset));
            return offset;
        } catch (NoSuchFileException gone) {
            seen.remove(tp); // its topic was deleted meanwhile
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the log start mark of " + tp, e);
        }
    }

    /**
     * Moves the partition's mark to {@code offset} if that is past it, durably, and returns the mark as it is after
     * the call (never below what it was). The caller checks the offset against the partition's high watermark, which
     * only grows, so another process cannot make it invalid meanwhile.
     */
    public long advance(TopicPartition tp, long offset) {
        Path dir = dataDir.resolve(tp.dirName());
        try {
            Files.createDirectories(dir);
            ReentrantLock mutex = JVM_MUTEXES.computeIfAbsent(dir.toRealPath(), k -> new ReentrantLock());
            mutex.lock();
            try (FileChannel lockFile = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                 FileLock ignored = FileLocks.lock(lockFile)) {
                Path file = dir.resolve(FILE);
                long current = Files.exists(file) ? parse(Files.readAllBytes(file), file) : 0;
                if (offset <= current) {
                    return current;
                }
                AtomicFiles.replace(file, Long.toString(offset).getBytes(StandardCharsets.US_ASCII));
                return offset;
            } finally {
                mutex.unlock();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot move the log start of " + tp, e);
        }
    }

    private static long parse(byte[] bytes, Path file) {
        String text = new String(bytes, StandardCharsets.US_ASCII).trim();
        try {
            long offset = Long.parseLong(text);
            if (offset < 0) {
                throw new NumberFormatException("negative");
            }
            return offset;
        } catch (NumberFormatException e) {
            throw new TierlogException(ErrorType.INTERNAL, "the log start mark " + file.getFileName()
                    + " of a partition is damaged: '" + (text.length() > 40 ? text.substring(0, 40) : text) + "'");
        }
    }
}
