package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.io.FileLocks;
import io.tierlog.log.internal.io.GroupSync;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.producer.ProducerStateTable;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;

/**
 * Appends record batches to one partition's hot segments. Many writers, in many processes and on many hosts
 * sharing one volume (Lambda instances on EFS), may append to the same partition: they take turns.
 *
 * <h2>The append protocol</h2>
 * <ol>
 *   <li>Take the JVM-wide mutex of the partition directory (shared by all writer instances of it in this JVM),
 *       then an exclusive {@code fcntl} lock on {@code <partition>/.lock}
 *       ({@link FileChannel#lock()}; NFSv4 and EFS honour it across hosts).</li>
 *   <li>Re-read the partition's true end from disk ({@link LogRecovery}): this writer's cached end is only a hint of where to resume
 *       scanning. Every batch found after it (appended by other writers) is validated and applied to the producer
 *       table. A batch cut short at the end of the last segment is a writer killed mid-write: it was never
 *       acknowledged and is truncated, unless its bytes cannot be a torn write (a damaged length field hiding a
 *       complete batch, see {@code SegmentCursor.tornTailProblem}). A complete batch that fails validation, or
 *       whose base offset does not continue the log, is corruption: the append is refused and nothing is
 *       truncated.</li>
 *   <li>Check the producer's epoch and sequence, and its transaction: a non-transactional batch while its
 *       transaction is open is refused ({@code INVALID_TXN_STATE}); a retry is answered with its original offsets.</li>
 *   <li>Build the batch at the log's next offset: our encoding of the records, or a client's validated batch
 *       ({@link ClientBatch}) with that base offset stamped into its header, outside the CRC.</li>
 *   <li>Roll to a new segment if {@code segment.bytes} or {@code segment.ms} says so.</li>
 *   <li>Write the batch (one positional write), release the lock, fsync per {@link FsyncPolicy}, acknowledge.
 *       Under {@code always} the fsync is a group commit ({@link GroupSync}): an append waits for a force that
 *       began after its write, and one force covers every append written before it began, so the appenders queued
 *       behind the lock write while it runs. A retry answered with its original offsets waits for a force too.</li>
 * </ol>
 * A process killed at any point leaves either no trace of the batch, a torn tail that the next writer truncates,
 * or the whole batch (then visible, but unacknowledged: a retry with the producer fields is deduplicated).
 *
 * <h2>Transactions (KIP-98)</h2>
 * A transactional batch ({@link ClientBatch#transactional()}) opens its producer's transaction on the partition at
 * its base offset, unless one is open; {@link #appendMarker} writes the coordinator's commit or abort marker (a
 * Kafka control batch) under the same protocol, which closes it. What read_committed readers need lives in the
 * partition's transaction index ({@link TxnIndexWriter}, read by {@link PartitionTransactions}), written under the
 * lock in this order: the BEGIN entry <em>before</em> the transaction's first batch, the END entry <em>after</em>
 * the marker batch. A reader that reads the high watermark and then the index therefore never meets a transactional
 * batch whose BEGIN it lacks; a missing END only holds the last stable offset back, and recovery (step 2) writes
 * the ones a killed writer left out. Under {@code always} the index is forced too, when the append wrote to it,
 * before the append is acknowledged; a checkpoint is published only after the index entries below it are forced.
 *
 * <h2>Several partitions</h2>
 * {@link #appendAll} appends one request's batches to several partitions: it takes every lock first, in one order,
 * and checks every partition's producer fields before writing any, so a sequence conflict appends nothing.
 *
 * <h2>Checkpoints</h2>
 * On every roll, and every {@value #CHECKPOINT_BYTES} bytes appended by this writer, the writer publishes a
 * {@link ProducerSnapshot} so that a new process scans at most that many bytes to find the end. It is forced to disk
 * under {@code always} only: under the other policies a machine loss may take it, and recovery then scans from an
 * older one (a roll deletes all but the last {@value #SNAPSHOTS_KEPT}) or the oldest hot segment.
 *
 * <p>Other modules get writers from {@link HotLog#writer}. Thread-safe.
 */
public final class PartitionWriter implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionWriter.class);
    /**
     * Bounds the bytes a new writer scans from its checkpoint to the end of the log. Each checkpoint costs a file
     * create, write, fsync, rename and directory fsync: at 4 MiB it took 14% of the produce workers' time with 1 MB
     * batches; at 16 MiB a recovery scan is still a few tens of milliseconds from the page cache.
     */
    static final long CHECKPOINT_BYTES = 16L * 1024 * 1024;
    private static final Runnable NO_PRECONDITION = () -> { };
    /** How long an idempotent producer is remembered after its last batch, unless configured otherwise. */
    public static final Duration DEFAULT_PRODUCER_ID_EXPIRATION = ProducerStateTable.DEFAULT_EXPIRATION;
    private static final int SNAPSHOTS_KEPT = 3;
    private static final int MAX_RETAINED_ENCODE_BUFFER = 8 * 1024 * 1024;

    private final TopicPartition partition;
    private final Path dir;
    private final FsyncPolicy fsync;
    private final Duration fsyncInterval;
    private final Clock clock;
    private final SyncMeters syncMeters;
    /**
     * The JDK allows one fcntl lock per file per JVM: a second channel locking the same file in this JVM gets
     * {@code OverlappingFileLockException} instead of waiting. Every writer of a partition directory in this JVM
     * therefore shares one mutex, taken before the file lock. One small entry per partition ever opened.
     */
    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_MUTEXES = new ConcurrentHashMap<>();

    private final ReentrantLock mutex;
    private final FileChannel lockFile;
    private final ProducerStateTable producers;
    private final LogRecovery recovery;
    private final TxnIndexWriter txnIndex;
    private final AppendJournal journal;

    /** This writer's belief about the end of the log; verified against the disk under the lock. */
    private WriterTail tail;
    private long bytesSinceCheckpoint;
    private ByteBuffer encodeBuffer;
    private long lastFsyncMs;

    /** The tail at segment {@code base}, open on {@code channel}, with its group commit. */
    private WriterTail tail(long base, FileChannel channel, long position, long nextOffset, long segmentCreatedMs) {
        Path file = SegmentFiles.log(dir, base);
        return new WriterTail(base, channel, new GroupSync(() -> forceClosedOrNot(channel, file)), position, nextOffset,
                segmentCreatedMs);
    }

    /**
     * Forces a segment's data to disk for a group commit. The writer may have rolled past the segment and closed
     * this channel since the append that waits on it (a roll forces the old segment first, but the waiter cannot
     * tell), so a closed channel falls back to forcing the file through a channel of its own.
     */
    private void forceClosedOrNot(FileChannel channel, Path file) throws IOException {
        try {
            force(channel);
        } catch (ClosedChannelException e) {
            try (FileChannel again = FileChannel.open(file, StandardOpenOption.WRITE)) {
                force(again);
            }
        }
    }

    /** Every fsync of segment data goes through here, so that {@link SyncMeters#forceNanos} sees each one. */
    private void force(FileChannel channel) throws IOException {
        long start = System.nanoTime();
        channel.force(false);
        syncMeters.forceNanos().accept(System.nanoTime() - start);
    }

    PartitionWriter(Path dataDir, TopicPartition partition, FsyncPolicy fsync, Duration fsyncInterval,
                           Clock clock) {
        this(dataDir, partition, fsync, fsyncInterval, clock, SyncMeters.NONE, ProducerStateTable.DEFAULT_EXPIRATION,
                null);
    }

    PartitionWriter(Path dataDir, TopicPartition partition, FsyncPolicy fsync, Duration fsyncInterval,
                    Clock clock, SyncMeters syncMeters, Duration producerIdExpiration) {
        this(dataDir, partition, fsync, fsyncInterval, clock, syncMeters, producerIdExpiration, null);
    }

    /**
     * @param syncMeters           told the duration of every fsync of segment data and every append's wait for one
     * @param producerIdExpiration how long an idempotent producer is remembered after its last batch
     *                             ({@link ProducerStateTable}, "Expiry")
     * @param journal              told each batch appended, after its write (null: none)
     */
    PartitionWriter(Path dataDir, TopicPartition partition, FsyncPolicy fsync, Duration fsyncInterval,
                           Clock clock, SyncMeters syncMeters, Duration producerIdExpiration, AppendJournal journal) {
        this.journal = journal;
        this.producers = new ProducerStateTable(producerIdExpiration);
        this.syncMeters = syncMeters;
        this.partition = partition;
        this.dir = dataDir.resolve(partition.dirName());
        this.fsync = fsync;
        this.fsyncInterval = fsyncInterval;
        this.clock = clock;
        try {
            Files.createDirectories(dir);
            this.mutex = JVM_MUTEXES.computeIfAbsent(dir.toRealPath(), k -> new ReentrantLock());
            this.lockFile = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open partition " + partition + " in " + dir, e);
        }
        this.lastFsyncMs = clock.millis();
        this.txnIndex = new TxnIndexWriter(partition, dir, this::force);
        this.recovery = new LogRecovery(partition, dir, clock, producers, this::tail, txnIndex);
    }

    /** Work on a partition's files that must not interleave with an append. */
    @FunctionalInterface
    interface LockedWork<T> {
        T run() throws IOException;
    }

    /**
     * Runs {@code work} holding the lock of the partition in {@code dir} as an append holds it (this JVM's mutex of
     * the directory, then the file lock), for maintenance that rewrites a file appends write to (the transaction
     * index's trim). The lock file's channel is closed before the mutex is released: closing any descriptor of a
     * file drops the process's {@code fcntl} locks on it, and no other writer of this JVM holds one then.
     */
    static <T> T underLock(Path dir, LockedWork<T> work) throws IOException {
        ReentrantLock mutex = JVM_MUTEXES.computeIfAbsent(dir.toRealPath(), k -> new ReentrantLock());
        mutex.lock();
        try (FileChannel channel = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
             FileLock ignored = FileLocks.lock(channel)) {
            return work.run();
        } finally {
            mutex.unlock();
        }
    }

    public TopicPartition partition() {
        return partition;
    }

    /**
     * Validates the producer fields, then appends {@code records} as one batch with dense offsets.
     *
     * @throws TierlogException {@code out-of-order-sequence} or {@code fenced-producer}, with nothing appended
     * @throws CorruptLogException if the log's tail holds a corrupt batch; nothing is appended
     */
    public AppendResult append(List<AppendRecord> records, ProducerIdentity producer, TopicConfig config) {
        return appendAll(List.of(Part.of(this, records, producer, String.valueOf(producer.producerId()), config)))
                .get(0);
    }

    /**
     * Appends a batch a client built (validated by {@link io.tierlog.log.format.ClientBatchValidator}) as is,
     * under the same protocol as {@link #append(List, ProducerIdentity, TopicConfig)}: its base offset is stamped
     * with the log's next offset (the field lies outside the CRC, so the client's bytes and CRC stay as sent), and
     * its header's producer fields are checked and recorded exactly as the JSON path's are.
     *
     * @throws TierlogException {@code out-of-order-sequence} or {@code fenced-producer}, with nothing appended
     * @throws CorruptLogException if the log's tail holds a corrupt batch; nothing is appended
     */
    public AppendResult append(ClientBatch batch, TopicConfig config) {
        return append(batch, config, NO_PRECONDITION);
    }

    /**
     * As {@link #append(ClientBatch, TopicConfig)}, with {@code precondition} run under the partition's lock before
     * anything is checked or written; it throws to refuse the append, nothing written. What it saw holds until the
     * batch is in, against anyone who changes it before appending here: the transaction coordinator writes a
     * transaction's prepared state before it appends the transaction's markers, so a batch whose precondition found
     * the transaction ongoing lands before its marker.
     */
    public AppendResult append(ClientBatch batch, TopicConfig config, Runnable precondition) {
        return appendAll(List.of(new Part(this, batch.producer(), String.valueOf(batch.producer().producerId()),
                batch.recordCount(), config, batch.transactional() ? Kind.TRANSACTIONAL : Kind.DATA,
                batch::stampedAt, precondition))).get(0);
    }

    /**
     * Appends the transaction coordinator's marker (KIP-98) as one Kafka control batch, under the same protocol as
     * an append: it closes the producer's open transaction on the partition, and its END entry is in the
     * transaction index before this returns. A marker of a newer epoch becomes the producer's epoch, fencing the
     * older epoch's batches. A marker for a producer with no open transaction here is written too (Kafka does; a
     * coordinator's retried marker is then harmless).
     *
     * @throws TierlogException {@code fenced-producer} if the producer's current epoch is newer; nothing appended
     * @throws CorruptLogException if the log's tail holds a corrupt batch; nothing is appended
     */
    public AppendResult appendMarker(TransactionMarker marker, TopicConfig config) {
        ProducerIdentity producer = new ProducerIdentity(marker.producerId(), marker.producerEpoch(), -1);
        return appendAll(List.of(new Part(this, producer, String.valueOf(marker.producerId()), 1, config, Kind.MARKER,
                baseOffset -> marker.encode(baseOffset, clock.millis()), NO_PRECONDITION))).get(0);
    }

    /** What a part appends: a batch outside any transaction, a transaction's batch, or a transaction marker. */
    private enum Kind {
        DATA, TRANSACTIONAL, MARKER
    }

    /**
     * One partition's share of a produce request for {@link #appendAll}: its records, the producer fields with this
     * partition's sequence, and the producer id as the client named it (problem details name that, not the 64-bit
     * id derived from it).
     */
    public static final class Part {
        private final PartitionWriter writer;
        private final ProducerIdentity producer;
        private final String producerName;
        private final int recordCount;
        private final TopicConfig config;
        private final Kind kind;
        /** Builds the batch for the log's next offset; called under the lock, so its base offset is final. */
        private final LongFunction<ByteBuffer> batchAt;
        /** Run under the lock before anything is checked; throws to refuse (the precondition of an append). */
        private final Runnable precondition;

        private Part(PartitionWriter writer, ProducerIdentity producer, String producerName, int recordCount,
                     TopicConfig config, Kind kind, LongFunction<ByteBuffer> batchAt, Runnable precondition) {
            this.writer = writer;
            this.producer = producer;
            this.producerName = producerName;
            this.recordCount = recordCount;
            this.config = config;
            this.kind = kind;
            this.batchAt = batchAt;
            this.precondition = precondition;
        }

        public static Part of(PartitionWriter writer, List<AppendRecord> records, ProducerIdentity producer,
                              String producerName, TopicConfig config) {
            return new Part(writer, producer, producerName, records.size(), config, Kind.DATA,
                    baseOffset -> RecordBatchCodec.encode(baseOffset, records, producer, writer.encodeBuffer(records)),
                    NO_PRECONDITION);
        }

        /**
         * A part whose batch is already encoded ({@link io.tierlog.log.format.RecordBatchWriter#finish}) with
         * {@code producer}'s fields and its CRC, so that nothing but stamping the base offset and the "unknown"
         * leader epoch (both outside the CRC) happens under the lock. {@code batch} must not change until the
         * append returns.
         */
        public static Part ofEncoded(PartitionWriter writer, ByteBuffer batch, int recordCount,
                                     ProducerIdentity producer, String producerName, TopicConfig config) {
            ByteBuffer bytes = batch.slice();
            return new Part(writer, producer, producerName, recordCount, config, Kind.DATA, baseOffset -> {
                bytes.putLong(0, baseOffset);
                bytes.putInt(RecordBatchCodec.PARTITION_LEADER_EPOCH_OFFSET, RecordBatchCodec.NO_PARTITION_LEADER_EPOCH);
                return bytes.duplicate().clear();
            }, NO_PRECONDITION);
        }
    }

    /**
     * Appends one batch to each part's partition as one decision: every partition's lock is taken (in one global
     * order, the partition directories' order, so that writers locking several partitions cannot deadlock), every
     * tail is brought up to date, and every part's producer fields are checked before anything is written. A
     * conflict in any partition ({@code out-of-order-sequence}, {@code fenced-producer}) or a corrupt tail appends
     * nothing at all. A part that is a retry of a batch already in its partition appends nothing and answers that
     * batch's offsets ({@link AppendResult#duplicate()}); the others are appended. So after a crash between the
     * writes of two partitions, the retried request appends only what is missing.
     *
     * <p>Atomic against conflicts, not against crashes: a process killed between two partitions' writes leaves
     * the earlier ones in place, unacknowledged (a retry deduplicates them). With {@code fsync=always} the answer
     * waits, outside the locks, for a group-commit force of every partition written or answered ({@link GroupSync}).
     *
     * @param parts at most one per writer, each writer's partition distinct
     * @return one result per part, in the order of {@code parts}
     */
    static List<AppendResult> appendAll(List<Part> parts) {
        int n = parts.size();
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparing(i -> parts.get(i).writer.dir));
        AppendResult[] results = new AppendResult[n];
        GroupSync[] syncs = new GroupSync[n];
        long[] durableEnds = new long[n];
        GroupSync[] indexSyncs = new GroupSync[n];
        long[] indexEnds = new long[n];
        List<PartitionWriter> mutexesHeld = new ArrayList<>(n);
        List<FileLock> locksHeld = new ArrayList<>(n);
        try {
            for (int i : order) {
                PartitionWriter w = parts.get(i).writer;
                w.mutex.lock();
                mutexesHeld.add(w);
                locksHeld.add(FileLocks.lock(w.lockFile));
            }
            ProducerStateTable.Verdict[] verdicts = new ProducerStateTable.Verdict[n];
            long[] indexEndsBefore = new long[n];
            for (int i : order) {
                parts.get(i).precondition.run();
            }
            for (int i : order) {
                indexEndsBefore[i] = parts.get(i).writer.txnIndex.end();
                verdicts[i] = parts.get(i).writer.refreshAndCheck(parts.get(i));
            }
            for (int i : order) {
                Part part = parts.get(i);
                PartitionWriter w = part.writer;
                results[i] = verdicts[i] instanceof ProducerStateTable.Duplicate d
                        ? new AppendResult(d.original().firstOffset(), d.original().lastOffset(), true)
                        : w.write(part);
                if (w.fsync == FsyncPolicy.ALWAYS) {
                    // A duplicate too: its original may have been written by a writer that died before its fsync,
                    // so the answer waits for the same force as a new append would.
                    syncs[i] = w.tail.sync;
                    durableEnds[i] = w.tail.position;
                    syncs[i].wrote(durableEnds[i]);
                    if (w.txnIndex.end() != indexEndsBefore[i]) {
                        // Only an append that wrote to the transaction index (or repaired it) waits for its force.
                        indexSyncs[i] = w.txnIndex.sync();
                        indexEnds[i] = w.txnIndex.end();
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            if (NoSpaceLeft.causedBy(e)) {
                throw NoSpaceLeft.refusal(parts.get(0).writer.partition, e);
            }
            throw e instanceof UncheckedIOException u ? u
                    : new UncheckedIOException("append to " + parts.get(0).writer.partition + " failed", (IOException) e);
        } finally {
            releaseAll(locksHeld, mutexesHeld);
        }
        for (int i = 0; i < n; i++) {
            if (syncs[i] != null) {
                PartitionWriter w = parts.get(i).writer;
                try {
                    long waitStart = System.nanoTime();
                    syncs[i].awaitDurable(durableEnds[i]);
                    if (indexSyncs[i] != null) {
                        indexSyncs[i].awaitDurable(indexEnds[i]);
                    }
                    w.syncMeters.durableWaitNanos().accept(System.nanoTime() - waitStart);
                } catch (IOException e) {
                    // Written but not durable (NFS and EFS may report ENOSPC only here): not acknowledged, like a
                    // crash before the fsync; a retry with the producer fields is deduplicated.
                    if (NoSpaceLeft.causedBy(e)) {
                        throw NoSpaceLeft.refusal(w.partition, e);
                    }
                    throw new UncheckedIOException("fsync of " + w.partition
                            + " failed; the append is not acknowledged", e);
                }
            }
        }
        return List.of(results);
    }

    private static void releaseAll(List<FileLock> locks, List<PartitionWriter> mutexes) {
        IOException failure = null;
        for (int i = locks.size() - 1; i >= 0; i--) {
            try {
                locks.get(i).release();
            } catch (IOException e) {
                failure = e;
            }
        }
        for (int i = mutexes.size() - 1; i >= 0; i--) {
            mutexes.get(i).mutex.unlock();
        }
        if (failure != null) {
            throw new UncheckedIOException("releasing a partition lock failed", failure);
        }
    }

    /**
     * Brings the tail up to date and judges the part's producer fields; throws on a conflict. Caller holds the
     * mutex and the file lock.
     */
    private ProducerStateTable.Verdict refreshAndCheck(Part part) throws IOException {
        refreshTail();
        ProducerIdentity producer = part.producer;
        ProducerStateTable.Verdict verdict = part.kind == Kind.MARKER
                ? producers.checkMarker(producer.producerId(), producer.epoch(), clock.millis())
                : producers.check(producer, part.recordCount, part.kind == Kind.TRANSACTIONAL, clock.millis());
        if (verdict instanceof ProducerStateTable.InvalidTxnState t) {
            throw new TierlogException(ErrorType.INVALID_TXN_STATE, "producer '" + part.producerName + "' sent a "
                    + "non-transactional batch to partition " + partition.partition() + " while its transaction there "
                    + "is open since offset " + t.txnFirstOffset(),
                    Map.of("txnFirstOffset", t.txnFirstOffset(), "partition", partition.partition()));
        }
        if (verdict instanceof ProducerStateTable.OutOfOrder o) {
            throw new TierlogException(ErrorType.OUT_OF_ORDER_SEQUENCE, "producer '" + part.producerName + "' epoch "
                    + producer.epoch() + " sent sequence " + producer.sequence() + " to partition "
                    + partition.partition() + "; expected " + o.expected(),
                    Map.of("expectedSequence", o.expected(), "partition", partition.partition()));
        }
        if (verdict instanceof ProducerStateTable.Fenced f) {
            throw new TierlogException(ErrorType.FENCED_PRODUCER, "producer '" + part.producerName + "' epoch "
                    + producer.epoch() + " is older than the current epoch " + f.currentEpoch() + " on partition "
                    + partition.partition(),
                    Map.of("currentEpoch", (int) f.currentEpoch(), "partition", partition.partition()));
        }
        return verdict;
    }

    /**
     * Builds the part's batch at the log's next offset, rolls if due, writes it; a batch that opens its producer's
     * transaction gets its BEGIN entry first. Caller holds the lock.
     */
    private AppendResult write(Part part) throws IOException {
        ByteBuffer batch = part.batchAt.apply(tail.nextOffset);
        if (part.kind == Kind.TRANSACTIONAL
                && producers.opensTransaction(part.producer.producerId(), part.producer.epoch())) {
            // Before the batch: a reader that sees the batch below the high watermark must find its BEGIN.
            txnIndex.ensureBegin(part.producer.producerId(), part.producer.epoch(), tail.nextOffset);
        }
        long appendTime = AppendResult.NO_TIMESTAMP;
        // A marker is stamped with the append time when it is built; it is Kafka's control batch as is.
        if (part.config.logAppendTime() && part.kind != Kind.MARKER) {
            // Taken under the lock: the stamped times follow the append order as far as the writers' clocks agree.
            appendTime = clock.millis();
            RecordBatchCodec.stampLogAppendTime(batch, appendTime);
        }
        maybeRoll(batch.remaining(), part.config);
        AppendResult written = write(batch);
        return appendTime == AppendResult.NO_TIMESTAMP ? written
                : new AppendResult(written.baseOffset(), written.lastOffset(), false, appendTime);
    }

    /**
     * A buffer for encoding {@code records}: the retained one when it is large enough, else a new one, retained
     * if it is at most {@value #MAX_RETAINED_ENCODE_BUFFER} bytes. Reuse spares a large batch the allocation and
     * zeroing of a fresh buffer per append (a 1 MB heap buffer per append cost more than the write). Caller holds
     * the mutex.
     */
    private ByteBuffer encodeBuffer(List<AppendRecord> records) {
        int bound = RecordBatchCodec.sizeBound(records);
        if (encodeBuffer != null && encodeBuffer.capacity() >= bound) {
            return encodeBuffer;
        }
        ByteBuffer fresh = ByteBuffer.allocate(bound);
        if (bound <= MAX_RETAINED_ENCODE_BUFFER) {
            encodeBuffer = fresh;
        }
        return fresh;
    }

    /**
     * An idempotent producer the partition knows: its current epoch, the last sequence of its newest batch (-1 if it
     * has none here yet), when a writer last applied one of its batches, and where its open transaction on the
     * partition began (-1 when none is open).
     */
    public record ActiveProducer(long producerId, short epoch, int lastSequence, long lastSeenMs,
                                 long currentTxnStartOffset) {
    }

    /**
     * The idempotent producers the partition knows and has not expired, in producer id order, with every writer's
     * appends counted: it takes the partition's lock and catches up with the log as an append does, so a producer that
     * appended through another process is in it. Creates nothing: an empty partition has none.
     */
    public List<ActiveProducer> activeProducers() {
        mutex.lock();
        try (FileLock lock = FileLocks.lock(lockFile)) {
            if (!recovery.refresh(tail, t -> tail = t, this::checkpoint)) {
                return List.of();
            }
            producers.expire(clock.millis());
            List<ActiveProducer> out = new ArrayList<>();
            producers.entries().forEach((id, e) -> out.add(new ActiveProducer(id, e.epoch(),
                    e.batches().isEmpty() ? -1 : e.batches().get(e.batches().size() - 1).lastSequence(), e.lastSeenMs(),
                    e.txnFirstOffset())));
            out.sort(Comparator.comparingLong(ActiveProducer::producerId));
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the producers of " + partition + " failed", e);
        } finally {
            mutex.unlock();
        }
    }

    /** The end of the log as this writer last verified it (a hint; other writers may have appended since). */
    public long cachedNextOffset() {
        mutex.lock();
        try {
            return tail == null ? -1 : tail.nextOffset;
        } finally {
            mutex.unlock();
        }
    }

    private AppendResult write(ByteBuffer batch) throws IOException {
        int size = batch.remaining();
        long position = tail.position;
        try {
            while (batch.hasRemaining()) {
                position += tail.channel.write(batch, position);
            }
        } catch (IOException e) {
            truncateFailedWrite(e);
            throw e;
        }
        batch.flip();
        long now = clock.millis();
        // fsync=always forces after the lock is released (append), as a group commit.
        if (fsync == FsyncPolicy.INTERVAL && now - lastFsyncMs >= fsyncInterval.toMillis()) {
            force(tail.channel);
            txnIndex.forceIfDirty();
            lastFsyncMs = now;
        }
        BatchInfo info = RecordBatchCodec.info(tail.segmentBase, tail.position, batch);
        if (info.transactional()) {
            // After the batch: a marker's END (its transaction's BEGIN was written before the batch).
            txnIndex.replayed(info, batch, producers);
        }
        producers.apply(info, now);
        if (journal != null) {
            journal.appended(partition, info, batch.getInt(batch.position() + RecordBatchCodec.CRC_OFFSET), batch);
        }
        tail.position = info.endPosition();
        tail.nextOffset = info.nextOffset();
        bytesSinceCheckpoint += size;
        if (bytesSinceCheckpoint >= CHECKPOINT_BYTES) {
            try {
                checkpoint();
            } catch (UncheckedIOException | CorruptLogException e) {
                // The batch is written: failing the append now would refuse a request that is in the log. A checkpoint
                // only shortens a later recovery scan, so it is retried after the next append instead.
                LOG.warn("{}: checkpoint at offset {} failed; retried on the next append", partition, tail.nextOffset, e);
            }
        }
        return new AppendResult(info.baseOffset(), info.lastOffset(), false);
    }

    /**
     * Takes a batch whose write failed part-way (typically {@code ENOSPC}) back out of the segment, so that the next
     * append, by this writer or another, starts at the same end and the partition stays usable. The bytes were
     * never acknowledged and a reader never serves an incomplete batch. If the truncation fails too, the next
     * append's scan truncates the same bytes as a torn tail.
     */
    private void truncateFailedWrite(IOException cause) {
        try {
            if (tail.channel.size() > tail.position) {
                tail.channel.truncate(tail.position);
            }
            LOG.warn("{}: write at {} in segment {} failed ({}); truncated back, nothing appended", partition,
                    tail.position, tail.segmentBase, cause.getMessage());
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    private void maybeRoll(int batchSize, TopicConfig config) throws IOException {
        if (tail.position == 0) {
            return;
        }
        boolean full = tail.position + batchSize > config.segmentBytes();
        boolean old = clock.millis() - tail.segmentCreatedMs >= config.segmentMs();
        if (full || old) {
            // Seal the old segment durably before anything can tier it, whatever the fsync policy.
            force(tail.channel);
            openSegment(tail.nextOffset);
        }
    }

    /** Creates segment {@code base}, makes it the tail and checkpoints there. */
    private void openSegment(long base) throws IOException {
        long now = clock.millis();
        Path file = SegmentFiles.log(dir, base);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        AtomicFiles.fsyncDirectory(dir);
        if (tail != null) {
            tail.channel.close();
        }
        tail = tail(base, channel, 0, base, now);
        LOG.debug("{}: rolled to segment {}", partition, base);
        checkpoint();
        pruneCheckpoints();
    }

    private void checkpoint() {
        long newestTxnEnd;
        try {
            // Recorded, not forced: a forced index stalled every append of the partition behind the fsync (ext4
            // commits its journal with the segments' dirty data); recovery skips a checkpoint the index lags.
            newestTxnEnd = txnIndex.newestEnd();
        } catch (IOException e) {
            throw new UncheckedIOException("reading the transaction index of " + partition + " failed", e);
        }
        producers.expire(clock.millis());
        // Forced only when the appends are, for the same stall; a lost snapshot costs scan time.
        new ProducerSnapshot(tail.segmentBase, tail.position, tail.nextOffset, tail.segmentCreatedMs,
                producers.entries(), newestTxnEnd).writeTo(dir, fsync == FsyncPolicy.ALWAYS);
        bytesSinceCheckpoint = 0;
    }

    /**
     * Deletes all but the newest {@value #SNAPSHOTS_KEPT} checkpoints. Only at a roll, which already stalls the
     * partition for its segment's fsync: a delete frees blocks, and a file system mounted with online discard waits
     * for the device there (tens of milliseconds each, measured), which on every checkpoint held the partition's lock.
     */
    private void pruneCheckpoints() {
        List<Long> snapshots = SegmentFiles.snapshotOffsets(dir);
        for (int i = 0; i < snapshots.size() - SNAPSHOTS_KEPT; i++) {
            try {
                Files.deleteIfExists(dir.resolve(SegmentFiles.snapshotName(snapshots.get(i))));
            } catch (IOException e) {
                LOG.debug("{}: could not delete old snapshot {}", partition, snapshots.get(i), e);
            }
        }
    }

    /**
     * Brings {@link #tail} and the producer table up to the true end of the log on disk ({@link LogRecovery}), and
     * creates the first segment of an empty partition. Caller holds the lock.
     */
    private void refreshTail() throws IOException {
        if (!recovery.refresh(tail, t -> tail = t, this::checkpoint)) {
            openSegment(0);
        }
    }

    private void closeTail() throws IOException {
        if (tail != null) {
            tail.channel.close();
            tail = null;
        }
    }

    /** Forces unsynced appends to disk (for {@code interval} and {@code never}) and releases files. */
    @Override
    public void close() throws IOException {
        mutex.lock();
        try {
            if (tail != null) {
                force(tail.channel);
            }
            txnIndex.close();
            closeTail();
            lockFile.close();
        } finally {
            mutex.unlock();
        }
    }
}
