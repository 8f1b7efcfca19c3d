package io.tierlog.index;

import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The index of the hot log: one RocksDB in one directory (the index-service passes
 * {@code <tierlog.index-dir>/rocksdb}) holding, per partition, sparse offset entries, time entries and the
 * indexer's checkpoint. It is derived data: deleting the directory loses nothing, and {@link HotIndexer}
 * rebuilds it from the segments.
 *
 * <h2>Key layout</h2>
 * All numbers are big-endian, so RocksDB's bytewise key order is numeric order and {@code seekForPrev} finds
 * floors. Every key of a partition starts with the partition prefix
 * <pre>
 *   prefix = topic (UTF-8) | 0x00 | partition (int32)
 * </pre>
 * Topic names are {@code [A-Za-z0-9._-]+} and never contain 0x00, so no partition's prefix is a prefix of
 * another's and each partition is one contiguous key range.
 * <pre>
 *   key                                        value
 *   prefix | 0x01 | offset (int64)             segmentBase (int64) | position (int64)         offset entry
 *   prefix | 0x02 | timestamp ^ 2^63 (int64)   offset | segmentBase | position (3 x int64)     time entry
 *   prefix | 0x03                              {@link IndexCheckpoint} (49 bytes)               checkpoint
 *   prefix | 0x04 | record key (any bytes)     offset (int64)                                   key entry
 *   0x00 "tierlog-index-format"                format version (int32)
 * </pre>
 * The sign bit of a timestamp is flipped so that negative timestamps (Kafka's -1, "none") sort first.
 *
 * <h2>Entries</h2>
 * An <b>offset entry</b> names a batch boundary: the batch with base offset {@code offset} starts at byte
 * {@code position} of segment {@code segmentBase}. The indexer writes one at the first batch of every segment and
 * then at the first batch after at least {@code index.interval.bytes} (Kafka's default 4096) of batch bytes, as
 * Kafka's {@code OffsetIndex} does. Because every segment starts with an entry, the floor entry of an offset
 * lies in the segment that holds the offset, which is what {@code PartitionReader.read} needs from a hint.
 *
 * <p>A <b>time entry</b> {@code (T, p)} is written together with the offset entry at boundary {@code p} when the
 * running maximum timestamp {@code T} (over all batches indexed so far, the batch at {@code p} included) is greater
 * than that of the previous time entry, as Kafka's {@code TimeIndex} appends only increasing timestamps. Both
 * {@code T} and {@code p} therefore increase from entry to entry, and every batch before {@code p}'s end has a max
 * timestamp {@code <= T}.
 *
 * <p>A <b>key entry</b> holds the offset of the latest record with that key (Kafka's record key bytes), written as
 * the indexer passes each record; a tombstone deletes the entry. Compaction never removes a key's latest record,
 * so the offset stays readable; retention may (then the record is below the log start: no such key).
 *
 * <h2>Search</h2>
 * <ul>
 *   <li>{@link #floor}: {@code seekForPrev(prefix|0x01|offset)}; the key found is the answer if it is still an
 *       offset key of this partition.</li>
 *   <li>{@link #forTimestamp}{@code (ts)}: empty if the checkpoint's running maximum is {@code < ts} (nothing
 *       indexed reaches ts). Otherwise {@code seekForPrev(prefix|0x02|ts-1)}: the greatest entry with
 *       {@code T < ts}; every batch up to its boundary has max {@code < ts}, so the first batch with max
 *       {@code >= ts} lies at or after that boundary. With no such entry the answer is the partition's first
 *       offset entry.</li>
 * </ul>
 * A lookup is one RocksDB seek: O(log n) in the number of entries, answered from the block cache when warm.
 *
 * <h2>Crash behaviour</h2>
 * The indexer writes entries and the checkpoint that covers them in one {@link WriteBatch}, which RocksDB applies
 * atomically, so after any crash the index holds entries for exactly the prefix of the log up to the checkpoint.
 * Writes are not fsynced (the WAL reaches the OS on every write, so a process crash loses nothing; a machine crash
 * may lose the last writes, which are re-indexed from the segments). A store that RocksDB reports corrupt, or one
 * written by an incompatible version of this code, is deleted and recreated empty on {@link #open}.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe. Reads never block one another. Writes to one partition ({@link #dropSegmentsBelow},
 * {@link #dropPartition} and the indexer's commits) are serialized by a per-partition lock; a commit is a
 * compare-and-set on the checkpoint, so an indexer racing a drop never resurrects dropped entries. Calls after
 * {@link #close} throw {@link IllegalStateException}; {@code close} waits for calls in progress.
 */
public final class LogIndex implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogIndex.class);
    /** 2: key entries (a store of format 1 has none for what it indexed, so it is rebuilt). */
    private static final int FORMAT_VERSION = 2;
    private static final long BLOCK_CACHE_BYTES = 16L * 1024 * 1024;
    private static final long WRITE_BUFFER_BYTES = 8L * 1024 * 1024;
    private static final int MAX_OPEN_FILES = 256;
    private static final int LOCK_STRIPES = 64;

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    private final LRUCache cache;
    private final BlockBasedTableConfig tableConfig;
    private final Options options;
    private final WriteOptions writeOptions;
    private final RocksDB db;
    /** Open/closed: every call holds the read lock, {@link #close} the write lock, so no call sees a freed handle. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private final ReentrantLock[] partitionLocks = new ReentrantLock[LOCK_STRIPES];
    /** Lowest segment still indexed, per partition, as set by drops since open: commits skip entries below it. */
    private final ConcurrentMap<TopicPartition, Long> droppedBelow = new ConcurrentHashMap<>();
    /**
     * Each partition's checkpoint as last read or written, so the per-fetch catch-up and hint skip a RocksDB get: this
     * process is the store's only writer (RocksDB's lock file), and every write of a checkpoint updates this under the
     * partition's lock, as does the first read.
     */
    private final ConcurrentMap<TopicPartition, Optional<IndexCheckpoint>> checkpoints = new ConcurrentHashMap<>();
    private boolean closed;

    private LogIndex(Path dir) {
        this.dir = dir;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            partitionLocks[i] = new ReentrantLock();
        }
        this.cache = new LRUCache(BLOCK_CACHE_BYTES);
        this.tableConfig = new BlockBasedTableConfig().setBlockCache(cache).setBlockSize(16 * 1024)
                .setCacheIndexAndFilterBlocks(true);
        // A small service's settings: bounded memory (one small cache, two small memtables) and file handles;
        // LZ4 because entries are small, similar and cheap to compress; a quiet info log.
        this.options = new Options().setCreateIfMissing(true)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setTableFormatConfig(tableConfig)
                .setWriteBufferSize(WRITE_BUFFER_BYTES)
                .setMaxWriteBufferNumber(2)
                .setMaxOpenFiles(MAX_OPEN_FILES)
                .setMaxBackgroundJobs(2)
                .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                .setKeepLogFileNum(2)
                .setMaxLogFileSize(1024 * 1024);
        // Derived data: a lost tail of writes is re-indexed, so no fsync per write.
        this.writeOptions = new WriteOptions().setSync(false);
        RocksDB opened = null;
        try {
            Files.createDirectories(dir);
            opened = openOrRecreate();
        } catch (IOException e) {
            closeOptions();
            throw new UncheckedIOException("cannot create index directory " + dir, e);
        } catch (RuntimeException e) {
            closeOptions();
            throw e;
        }
        this.db = opened;
    }

    /**
     * Opens (creating if missing) the index in {@code dir}. The directory belongs to the index alone: pass a
     * dedicated one such as {@code <tierlog.index-dir>/rocksdb}, not a directory shared with other data (a store
     * that is corrupt or of an unknown format has its RocksDB files deleted there and is recreated empty, then
     * rebuilt by the indexer).
     *
     * @throws IndexException if RocksDB cannot open the directory, e.g. another process holds it open
     */
    public static LogIndex open(Path dir) {
        return new LogIndex(dir);
    }

    private RocksDB openOrRecreate() {
        RocksDB opened;
        try {
            opened = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            if (!isCorruption(e)) {
                throw new IndexException("cannot open index in " + dir + ": " + e.getMessage(), e);
            }
            LOG.warn("index in {} is corrupt ({}); deleting it, the indexer rebuilds it from the segments", dir,
                    e.getMessage());
            return destroyAndOpen();
        }
        try {
            byte[] format = opened.get(IndexKeys.FORMAT_KEY);
            if (format == null && isEmpty(opened)) {
                opened.put(writeOptions, IndexKeys.FORMAT_KEY, formatValue());
                return opened;
            }
            if (format != null && Arrays.equals(format, formatValue())) {
                return opened;
            }
            LOG.warn("index in {} has format {} (this code writes {}); deleting it, the indexer rebuilds it", dir,
                    format == null ? "unknown" : ByteBuffer.wrap(format).getInt(), FORMAT_VERSION);
            opened.close();
            return destroyAndOpen();
        } catch (RocksDBException e) {
            opened.close();
            throw new IndexException("cannot read index format in " + dir + ": " + e.getMessage(), e);
        }
    }

    private RocksDB destroyAndOpen() {
        try {
            RocksDB.destroyDB(dir.toString(), options);
            RocksDB opened = RocksDB.open(options, dir.toString());
            opened.put(writeOptions, IndexKeys.FORMAT_KEY, formatValue());
            return opened;
        } catch (RocksDBException e) {
            throw new IndexException("cannot recreate index in " + dir + ": " + e.getMessage(), e);
        }
    }

    private static boolean isCorruption(RocksDBException e) {
        Status s = e.getStatus();
        return s != null && s.getCode() == Status.Code.Corruption;
    }

    private static boolean isEmpty(RocksDB db) {
        try (RocksIterator it = db.newIterator()) {
            it.seekToFirst();
            return !it.isValid();
        }
    }

    private static byte[] formatValue() {
        return ByteBuffer.allocate(Integer.BYTES).putInt(FORMAT_VERSION).array();
    }

    /** Greatest indexed batch boundary with offset {@code <= offset}, as a read hint for {@code PartitionReader.read}. */
    public Optional<Position> floor(TopicPartition tp, long offset) {
        if (offset < 0) {
            // Offsets are >= 0; a negative one would sort after them all as an unsigned key.
            return Optional.empty();
        }
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        return read(() -> {
            try (RocksIterator it = db.newIterator()) {
                it.seekForPrev(IndexKeys.offsetKey(prefix, offset));
                return offsetEntryAt(it, prefix);
            }
        });
    }

    /**
     * A batch boundary from which scanning forward finds the first record with timestamp {@code >= timestamp};
     * empty if nothing indexed has a timestamp that large. The first such record may lie after the indexed end
     * (in batches not yet indexed) only when this returns empty.
     */
    public Optional<Position> forTimestamp(TopicPartition tp, long timestamp) {
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        return read(() -> {
            IndexCheckpoint cp = checkpointOf(prefix);
            if (cp == null || cp.maxTimestamp() < timestamp) {
                return Optional.empty();
            }
            try (RocksIterator it = db.newIterator()) {
                if (timestamp != Long.MIN_VALUE) {
                    it.seekForPrev(IndexKeys.timeKey(prefix, timestamp - 1));
                    if (it.isValid() && IndexKeys.hasKind(it.key(), prefix, IndexKeys.KIND_TIME)) {
                        ByteBuffer v = ByteBuffer.wrap(it.value());
                        return Optional.of(new Position(v.getLong(), v.getLong(), v.getLong()));
                    }
                }
                return firstOffsetEntry(it, prefix);
            }
        });
    }

    /**
     * The offset of the latest record with {@code recordKey} indexed so far; empty if none, or if the latest was a
     * tombstone. One RocksDB get.
     */
    public java.util.OptionalLong latestOffset(TopicPartition tp, byte[] recordKey) {
        byte[] key = IndexKeys.recordKeyKey(IndexKeys.partitionPrefix(tp), ByteBuffer.wrap(recordKey));
        return read(() -> {
            byte[] v = db.get(key);
            return v == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(ByteBuffer.wrap(v).getLong());
        });
    }

    /** Where indexing of the partition stopped (a batch boundary and the next offset), if ever indexed. */
    public Optional<Position> indexedEnd(TopicPartition tp) {
        return checkpoint(tp).map(IndexCheckpoint::end);
    }

    /**
     * Drops the entries pointing into hot segments below {@code segmentBase} (they were evicted). Idempotent.
     * The checkpoint is kept: if it points into a dropped segment, the indexer resumes at the oldest segment left.
     */
    public void dropSegmentsBelow(TopicPartition tp, long segmentBase) {
        if (segmentBase <= 0) {
            return;
        }
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        write(tp, () -> {
            droppedBelow.merge(tp, segmentBase, Math::max);
            try (WriteBatch batch = new WriteBatch(); RocksIterator it = db.newIterator()) {
                // Offset entries are keyed by offset, and a segment's base is the offset of its first batch.
                batch.deleteRange(IndexKeys.offsetKey(prefix, 0), IndexKeys.offsetKey(prefix, segmentBase));
                // Time entries' offsets increase with their keys: delete up to the first one still in the hot log.
                byte[] timeStart = IndexKeys.kindKey(prefix, IndexKeys.KIND_TIME);
                byte[] timeEnd = IndexKeys.kindKey(prefix, (byte) (IndexKeys.KIND_TIME + 1));
                it.seek(timeStart);
                byte[] firstKept = timeEnd;
                for (; it.isValid() && IndexKeys.hasKind(it.key(), prefix, IndexKeys.KIND_TIME); it.next()) {
                    if (ByteBuffer.wrap(it.value()).getLong(Long.BYTES) >= segmentBase) {
                        firstKept = it.key();
                        break;
                    }
                }
                batch.deleteRange(timeStart, firstKept);
                db.write(writeOptions, batch);
            }
            return null;
        });
    }

    /** Drops everything indexed for the partition, its checkpoint included (topic deleted or log rewritten). */
    public void dropPartition(TopicPartition tp) {
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        write(tp, () -> {
            droppedBelow.remove(tp);
            db.deleteRange(writeOptions, prefix, IndexKeys.partitionEnd(prefix));
            checkpoints.put(tp, Optional.empty());
            return null;
        });
    }

    /** Closes RocksDB, waiting for calls in progress. Idempotent. */
    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            db.close();
            closeOptions();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    private void closeOptions() {
        writeOptions.close();
        options.close();
        cache.close();
    }

    // ---- the indexer's side (package-private) ----

    /** The partition's indexer checkpoint, if it was ever indexed (and the checkpoint is readable). */
    Optional<IndexCheckpoint> checkpoint(TopicPartition tp) {
        Optional<IndexCheckpoint> known = read(() -> checkpoints.get(tp));
        if (known != null) {
            return known;
        }
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        return write(tp, () -> {
            Optional<IndexCheckpoint> stored = Optional.ofNullable(checkpointOf(prefix));
            checkpoints.put(tp, stored);
            return stored;
        });
    }

    /** The partition's oldest offset entry. */
    Optional<Position> firstEntry(TopicPartition tp) {
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        return read(() -> {
            try (RocksIterator it = db.newIterator()) {
                return firstOffsetEntry(it, prefix);
            }
        });
    }

    /**
     * Writes {@code update} and {@code next} atomically if the stored checkpoint still equals {@code expected}
     * (null: none). Entries pointing below a segment dropped since {@link #open} are skipped.
     *
     * @return false, writing nothing, if the checkpoint changed (a drop or another indexer got there first)
     */
    boolean commit(TopicPartition tp, IndexCheckpoint expected, IndexUpdate update, IndexCheckpoint next) {
        byte[] prefix = IndexKeys.partitionPrefix(tp);
        return write(tp, () -> {
            IndexCheckpoint current = checkpointOf(prefix);
            if (current == null ? expected != null : !current.equals(expected)) {
                return false;
            }
            long floor = droppedBelow.getOrDefault(tp, Long.MIN_VALUE);
            try (WriteBatch batch = new WriteBatch()) {
                for (Position p : update.offsets()) {
                    if (p.segmentBase() >= floor) {
                        batch.put(IndexKeys.offsetKey(prefix, p.offset()),
                                ByteBuffer.allocate(2 * Long.BYTES).putLong(p.segmentBase()).putLong(p.position()).array());
                    }
                }
                for (IndexUpdate.TimeEntry t : update.times()) {
                    Position p = t.position();
                    if (p.segmentBase() >= floor) {
                        batch.put(IndexKeys.timeKey(prefix, t.timestamp()), ByteBuffer.allocate(3 * Long.BYTES)
                                .putLong(p.offset()).putLong(p.segmentBase()).putLong(p.position()).array());
                    }
                }
                for (var k : update.keys().entrySet()) {
                    byte[] key = IndexKeys.recordKeyKey(prefix, k.getKey());
                    if (k.getValue() == IndexUpdate.TOMBSTONE) {
                        batch.delete(key);
                    } else {
                        batch.put(key, ByteBuffer.allocate(Long.BYTES).putLong(k.getValue()).array());
                    }
                }
                batch.put(IndexKeys.checkpointKey(prefix), next.encode());
                db.write(writeOptions, batch);
            }
            checkpoints.put(tp, Optional.of(next));
            return true;
        });
    }

    private IndexCheckpoint checkpointOf(byte[] prefix) throws RocksDBException {
        byte[] value = db.get(IndexKeys.checkpointKey(prefix));
        IndexCheckpoint cp = IndexCheckpoint.decode(value);
        if (value != null && cp == null) {
            LOG.warn("unreadable index checkpoint for partition prefix {}; the partition will be re-indexed",
                    new String(prefix, 0, prefix.length - 5, StandardCharsets.UTF_8));
        }
        return cp;
    }

    private static Optional<Position> firstOffsetEntry(RocksIterator it, byte[] prefix) {
        it.seek(IndexKeys.kindKey(prefix, IndexKeys.KIND_OFFSET));
        return offsetEntryAt(it, prefix);
    }

    private static Optional<Position> offsetEntryAt(RocksIterator it, byte[] prefix) {
        if (!it.isValid() || !IndexKeys.hasKind(it.key(), prefix, IndexKeys.KIND_OFFSET)) {
            return Optional.empty();
        }
        ByteBuffer v = ByteBuffer.wrap(it.value());
        return Optional.of(new Position(IndexKeys.offsetOf(it.key()), v.getLong(), v.getLong()));
    }

    @FunctionalInterface
    private interface DbCall<T> {
        T call() throws RocksDBException;
    }

    private <T> T read(DbCall<T> call) {
        lifecycle.readLock().lock();
        try {
            requireOpen();
            return call.call();
        } catch (RocksDBException e) {
            throw new IndexException("index read in " + dir + " failed: " + e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    private <T> T write(TopicPartition tp, DbCall<T> call) {
        lifecycle.readLock().lock();
        ReentrantLock lock = partitionLocks[Math.floorMod(tp.hashCode(), LOCK_STRIPES)];
        lock.lock();
        try {
            requireOpen();
            return call.call();
        } catch (RocksDBException e) {
            throw new IndexException("index write for " + tp + " in " + dir + " failed: " + e.getMessage(), e);
        } finally {
            lock.unlock();
            lifecycle.readLock().unlock();
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("index in " + dir + " is closed");
        }
    }
}
