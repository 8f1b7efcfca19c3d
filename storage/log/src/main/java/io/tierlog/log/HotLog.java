package io.tierlog.log;

import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.internal.txn.TxnIndexTrim;
import io.tierlog.log.io.AtomicFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The hot log of one data directory ({@code tierlog.data-dir}), the only owner of its partition directories and the
 * segment files in them: other modules list, append, read, evict, seed and delete through here and never touch the
 * files themselves. Appends go through the {@link PartitionWriter}s it opens, reads through its
 * {@link PartitionReader}s; the on-disk layout (Kafka's {@code <topic>-<partition>/<base, 20 digits>.log} and
 * {@code .snapshot} files, and the transaction index {@code txn.index}) stays inside this module.
 *
 * <p>Thread-safe and stateless beyond the directory: any number of instances over one directory, in any number of
 * processes, agree, since every answer is read from the disk. The exceptions: an optional {@link AppendJournal}
 * that the writers opened here tell what they append, for this process's indexer (it is never read as the log), and,
 * for the background passes, segment listings reused while their directory is unchanged
 * ({@link #reusingSettledListings}).
 * Crash behaviour is per method.
 */
public final class HotLog {
    private final Path dataDir;
    /** Told every batch this instance's writers append, for this process's indexer; null: nobody indexes here. */
    private final AppendJournal journal;
    /** Listings reused while their directory is unchanged; null: every {@link #segmentBases} lists. */
    private final SegmentListings listings;

    public HotLog(Path dataDir) {
        this(dataDir, null);
    }

    /** @param journal told every batch the writers opened here append (null: none) */
    public HotLog(Path dataDir, AppendJournal journal) {
        this(dataDir, journal, null);
    }

    private HotLog(Path dataDir, AppendJournal journal, SegmentListings listings) {
        this.dataDir = dataDir;
        this.journal = journal;
        this.listings = listings;
    }

    /**
     * A hot log whose {@link #segmentBases} reuses a partition's last listing while a {@code stat} of its directory
     * shows it unchanged since then and the change before it at least {@link io.tierlog.log.io.FileVersion#SETTLE}
     * old by {@code clock} ({@link SegmentListings}): for passes that visit every partition again and again.
     */
    public static HotLog reusingSettledListings(Path dataDir, Clock clock) {
        return new HotLog(dataDir, null, new SegmentListings(clock));
    }

    public Path dataDir() {
        return dataDir;
    }

    private Path dir(TopicPartition tp) {
        return dataDir.resolve(tp.dirName());
    }

    // ---- listing -----------------------------------------------------------------------------------------------

    /**
     * Base offsets of the partition's hot segments, ascending (one directory listing, or one {@code stat} where
     * listings are reused); empty if it has none.
     */
    public List<Long> segmentBases(TopicPartition tp) {
        return listings == null ? SegmentFiles.segmentBases(dir(tp)) : listings.bases(tp, dir(tp));
    }

    /** The oldest hot segment's base offset, or -1 when the partition has none. One {@link #segmentBases}. */
    public long oldestSegmentBase(TopicPartition tp) {
        List<Long> bases = segmentBases(tp);
        return bases.isEmpty() ? -1 : bases.get(0);
    }

    /**
     * The partition's hot segments with their sizes, oldest first. A segment removed (by retention, in any process)
     * between the listing and its {@code stat} is left out.
     */
    public List<HotSegment> segments(TopicPartition tp) {
        List<Long> bases = segmentBases(tp);
        List<HotSegment> out = new ArrayList<>(bases.size());
        for (long base : bases) {
            long bytes = segmentBytes(tp, base);
            if (bytes >= 0) {
                out.add(new HotSegment(base, bytes));
            }
        }
        return out;
    }

    /** The size of segment {@code base}, or -1 if there is no such segment (never was, or removed). */
    public long segmentBytes(TopicPartition tp, long base) {
        return reader(tp).segmentBytes(base);
    }

    /** Whether segment {@code base} exists now. */
    public boolean hasSegment(TopicPartition tp, long base) {
        return reader(tp).hasSegment(base);
    }

    /** Whether the partition has a directory on the hot volume (a topic being deleted may leave one behind). */
    public boolean hasPartition(TopicPartition tp) {
        return Files.exists(dir(tp));
    }

    // ---- appending and reading ---------------------------------------------------------------------------------

    /**
     * Opens a writer of the partition (creating its directory); files are opened on the first append. The caller
     * closes it. Several writers of one partition, in this process or others, take turns (see {@link PartitionWriter}).
     */
    public PartitionWriter writer(TopicPartition tp, FsyncPolicy fsync, Duration fsyncInterval, Clock clock) {
        return new PartitionWriter(dataDir, tp, fsync, fsyncInterval, clock, SyncMeters.NONE,
                PartitionWriter.DEFAULT_PRODUCER_ID_EXPIRATION, journal);
    }

    /** As {@link #writer(TopicPartition, FsyncPolicy, Duration, Clock)}, with fsync meters and producer-id expiry. */
    public PartitionWriter writer(TopicPartition tp, FsyncPolicy fsync, Duration fsyncInterval, Clock clock,
                                  SyncMeters syncMeters, Duration producerIdExpiration) {
        return new PartitionWriter(dataDir, tp, fsync, fsyncInterval, clock, syncMeters, producerIdExpiration,
                journal);
    }

    /**
     * Appends one request's batches, one per partition, as one decision: every partition's lock is taken (in one
     * global order), every part's producer fields are checked, and only then is anything written, so a sequence
     * conflict or a corrupt tail in any partition appends nothing. Atomic against conflicts, not crashes: see
     * {@link PartitionWriter}, "Several partitions".
     *
     * @param parts at most one per writer, each writer's partition distinct
     * @return one result per part, in the order of {@code parts}
     */
    public List<AppendResult> append(List<PartitionWriter.Part> parts) {
        return PartitionWriter.appendAll(parts);
    }

    /** A reader of the partition; holds no file open between calls (see {@link PartitionReader}). */
    public PartitionReader reader(TopicPartition tp) {
        return new PartitionReader(dataDir, tp);
    }

    /**
     * The partition's transactions as read_committed readers see them (last stable offset, aborted transactions,
     * open transactions), from its transaction index; no lock, cheap to call per fetch (see
     * {@link PartitionTransactions}).
     */
    public PartitionTransactions transactions(TopicPartition tp) {
        return PartitionTransactions.of(dir(tp));
    }

    /**
     * The file of sealed segment {@code base}, for copying it whole (the tierer's upload). Only a sealed segment's
     * bytes are final: check it with {@link PartitionReader#walkSealed} first. The file may be evicted at any time.
     */
    public Path sealedSegmentFile(TopicPartition tp, long base) {
        return SegmentFiles.log(dir(tp), base);
    }

    // ---- lifecycle ---------------------------------------------------------------------------------------------

    /**
     * Evicts the sealed segments that lie wholly below {@code offset}: those whose successor's base offset is at most
     * {@code offset}. The newest segment is never evicted. The caller decides that the cold tier holds them
     * (retention). Readers in the middle of an evicted segment see {@link PartitionReader.SegmentGoneException}.
     * A crash part-way leaves the older segments evicted and the newer ones in place, as a later call would.
     *
     * @return the segments this call removed (a concurrent eviction by another process is not counted)
     */
    public List<HotSegment> evictBelow(TopicPartition tp, long offset) {
        List<Long> bases = segmentBases(tp);
        List<HotSegment> evicted = new ArrayList<>();
        for (int i = 0; i < bases.size() - 1 && bases.get(i + 1) <= offset; i++) {
            Path file = SegmentFiles.log(dir(tp), bases.get(i));
            try {
                long size = Files.size(file);
                Files.delete(file);
                evicted.add(new HotSegment(bases.get(i), size));
            } catch (NoSuchFileException e) {
                // another process evicted it
            } catch (IOException e) {
                throw new UncheckedIOException(tp + ": cannot evict segment " + bases.get(i), e);
            }
        }
        return evicted;
    }

    /**
     * Drops from the partition's transaction index the transactions that ended below its oldest hot segment: what
     * hot reads, recovery and the tierer need is at or above it, and the cold segments' sidecars carry the aborted
     * transactions of what was tiered. Call after hot segments were removed (retention's eviction); it costs a read
     * of the index (small: trimmed each time) under the partition's lock, and a rewrite only when something ended
     * below. Nothing for a partition without transactions.
     *
     * @return how many index entries were dropped
     */
    public int trimTransactionIndex(TopicPartition tp) {
        Path dir = dir(tp);
        Path file = dir.resolve(TxnIndexEntry.FILE_NAME);
        if (!Files.exists(file)) {
            return 0;
        }
        try {
            // The oldest base is read under the lock too, though it only grows: a transaction that ended below it
            // lies wholly in segments that are gone.
            return PartitionWriter.underLock(dir, () -> {
                long oldest = oldestSegmentBase(tp);
                return oldest < 0 ? 0 : TxnIndexTrim.trim(file, oldest);
            });
        } catch (NoSuchFileException e) {
            return 0; // the partition was deleted meanwhile
        } catch (IOException e) {
            throw new UncheckedIOException(tp + ": cannot trim " + TxnIndexEntry.FILE_NAME, e);
        }
    }

    /**
     * Starts an empty partition's hot log at {@code startOffset} (a node restoring a topic from the cold tier, whose
     * offsets below it live in the bucket): creates an empty segment of that base, durably. Does nothing when the
     * partition already has a segment, here or created concurrently by another process.
     *
     * @return whether this call created the segment
     */
    public boolean seedRestored(TopicPartition tp, long startOffset) {
        Path dir = dir(tp);
        if (!SegmentFiles.segmentBases(dir).isEmpty()) {
            return false;
        }
        try {
            Files.createDirectories(dir);
            Files.createFile(SegmentFiles.log(dir, startOffset));
            AtomicFiles.fsyncDirectory(dir);
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(tp + ": cannot create the first hot segment at " + startOffset, e);
        }
    }

    /**
     * Removes the partition's directory and everything in it (segments, checkpoints, lock file). Idempotent: a
     * crash part-way leaves a partial directory that the next call removes. The caller makes sure nothing appends to
     * the partition any more (its topic's metadata is gone and this process's writers are closed).
     *
     * @return whether there was a directory to remove
     */
    public boolean deletePartition(TopicPartition tp) {
        Path dir = dir(tp);
        PartitionTransactions.forget(dir);
        if (journal != null) {
            journal.forget(tp);
        }
        if (!Files.exists(dir)) {
            return false;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (NoSuchFileException e) {
            // removed concurrently
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete partition " + tp, e);
        }
        return true;
    }
}
