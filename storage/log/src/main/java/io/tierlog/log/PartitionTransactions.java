package io.tierlog.log;

import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.internal.txn.TxnIndexState;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What read_committed readers of one partition need (KIP-98), read from its transaction index without the writer's
 * lock: the last stable offset, the aborted transactions of a fetched range, and the open transactions.
 *
 * <p>Callers read the high watermark first and ask this second: the writer indexes a transaction's BEGIN before its
 * first batch ({@link PartitionWriter}, "Transactions"), so every transactional batch below that high watermark is
 * covered. An END the index lacks yet only holds the last stable offset back.
 *
 * <p>The index is append-only between trims (which drop transactions that ended below the oldest hot segment, see
 * {@link HotLog#trimTransactionIndex}): what was read is cached per partition directory for the whole process, and
 * each call costs one {@code stat}, plus a read of the new entries when the file changed. An incomplete or damaged
 * last entry (a writer killed mid-write) is not read; a file shorter than what was read, another file under the same
 * name (the partition deleted and re-created, or the index trimmed), or one whose last entry read is no longer where
 * it was (trimmed), is read anew; no file means no transactions. Thread-safe; any number of
 * instances, in any number of processes.
 */
public final class PartitionTransactions {
    /** A transaction of {@code producerId} from {@code firstOffset} that its abort marker at {@code lastOffset} ended. */
    public record AbortedTransaction(long producerId, long firstOffset, long lastOffset) {
    }

    /**
     * One entry per partition directory with a transaction index that was asked about in this process, a few hundred
     * bytes plus its aborts. An entry goes when its file is found missing (never written, or the partition deleted by
     * any instance) or when this process deletes the partition ({@link #forget}).
     */
    private static final ConcurrentHashMap<Path, Cached> CACHE = new ConcurrentHashMap<>();

    private final Cached cached;

    private PartitionTransactions(Cached cached) {
        this.cached = cached;
    }

    /** The transactions of the partition in {@code partitionDir}; {@link HotLog#transactions} is the public door. */
    static PartitionTransactions of(Path partitionDir) {
        return new PartitionTransactions(CACHE.computeIfAbsent(indexFile(partitionDir), Cached::new));
    }

    /** Drops what was read of the partition in {@code partitionDir} (its directory is being deleted). */
    static void forget(Path partitionDir) {
        CACHE.remove(indexFile(partitionDir));
    }

    /** Whether what was read of the partition in {@code partitionDir} is kept (for tests). */
    static boolean isCached(Path partitionDir) {
        return CACHE.containsKey(indexFile(partitionDir));
    }

    private static Path indexFile(Path partitionDir) {
        return partitionDir.toAbsolutePath().normalize().resolve(TxnIndexEntry.FILE_NAME);
    }

    /** {@code min(highWatermark, the smallest first offset of an open transaction)}. */
    public long lastStableOffset(long highWatermark) {
        synchronized (cached) {
            return Math.min(highWatermark, cached.refreshed().firstOpenOffset());
        }
    }

    /**
     * The aborted transactions with {@code lastOffset >= fromOffset} and {@code firstOffset < toOffsetExclusive},
     * ordered by first offset: what Kafka's FetchResponse {@code aborted_transactions} lists for a fetched range.
     */
    public List<AbortedTransaction> aborted(long fromOffset, long toOffsetExclusive) {
        synchronized (cached) {
            List<AbortedTransaction> out = new ArrayList<>();
            for (TxnIndexState.Aborted a : cached.refreshed().aborted(fromOffset, toOffsetExclusive)) {
                out.add(new AbortedTransaction(a.producerId(), a.firstOffset(), a.lastOffset()));
            }
            return out;
        }
    }

    /** Producer id to the first offset of its open transaction (DescribeProducers, ListTransactions). */
    public Map<Long, Long> openTransactions() {
        synchronized (cached) {
            return Map.copyOf(cached.refreshed().open());
        }
    }

    /**
     * {@code a} and {@code b} as one list without duplicates, ordered by first offset (then producer): Kafka's
     * FetchResponse {@code aborted_transactions} for a range that two sources answer (the hot index and the cold
     * segments' sidecars).
     */
    public static List<AbortedTransaction> union(List<AbortedTransaction> a, List<AbortedTransaction> b) {
        if (b.isEmpty()) {
            return a;
        }
        TreeSet<AbortedTransaction> all = new TreeSet<>(Comparator
                .comparingLong(AbortedTransaction::firstOffset)
                .thenComparingLong(AbortedTransaction::producerId)
                .thenComparingLong(AbortedTransaction::lastOffset));
        all.addAll(a);
        all.addAll(b);
        return List.copyOf(all);
    }

    /** The index of one partition as read so far. Guarded by itself. */
    private static final class Cached {
        private final Path file;
        private final TxnIndexState state = new TxnIndexState();
        /** Identity of the file read (inode), to notice a re-created one that is already longer. */
        private Object fileKey;
        /** Modification time when last read: a trimmed file may have the old size (and, reused, the old inode). */
        private FileTime modified;

        Cached(Path file) {
            this.file = file;
        }

        TxnIndexState refreshed() {
            try {
                BasicFileAttributes attrs;
                try {
                    attrs = Files.readAttributes(file, BasicFileAttributes.class);
                } catch (NoSuchFileException e) {
                    state.reset();
                    fileKey = null;
                    // Nothing to keep: most partitions never have transactions. A caller holding this entry still
                    // reads the file anew; the next one starts a new entry.
                    CACHE.remove(file, this);
                    return state;
                }
                long size = attrs.size();
                if (size < state.consumed() || !Objects.equals(attrs.fileKey(), fileKey)) {
                    state.reset();
                    fileKey = attrs.fileKey();
                }
                boolean grew = size - state.consumed() >= TxnIndexEntry.SIZE;
                if (grew || !attrs.lastModifiedTime().equals(modified)) {
                    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                        if (!state.continuesIn(channel)) {
                            state.reset(); // trimmed: the entries moved
                        }
                        state.readFrom(channel, channel.size());
                    } catch (NoSuchFileException e) {
                        state.reset();
                        fileKey = null;
                    }
                    modified = attrs.lastModifiedTime();
                }
                return state;
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + file + " failed", e);
            }
        }
    }
}
