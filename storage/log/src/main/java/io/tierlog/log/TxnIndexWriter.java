package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.internal.io.GroupSync;
import io.tierlog.log.internal.producer.ProducerStateTable;
import io.tierlog.log.internal.txn.TxnIndexEntry;
import io.tierlog.log.internal.txn.TxnIndexState;
import io.tierlog.log.io.AtomicFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.Objects;

/**
 * The writer's side of a partition's transaction index ({@link TxnIndexEntry#FILE_NAME}, read by
 * {@link PartitionTransactions}): BEGIN and END entries appended under the partition lock, in log order.
 *
 * <p>Ordering, which lets readers go without a lock: a BEGIN is written before its transaction's first batch, an
 * END after its marker batch. Every write goes through {@link #ensureBegin}/{@link #ensureEnd}, which write nothing
 * the index already holds, so the writer's own appends and a recovery that replays the same batches (after a writer
 * was killed between a marker and its END) agree. A BEGIN whose batch never reached the log (killed in between, or
 * the write failed) stays open in the index: it only holds back the last stable offset until the coordinator's
 * marker for that producer, which every transaction gets, ends it.
 *
 * <p>On every call it first reads what other writers appended (under the same lock), and truncates an incomplete
 * or damaged last entry: a writer killed mid-write. Damage with more than one entry after it is not a torn write:
 * it is refused as corruption ({@link CorruptLogException}), with nothing dropped. A trim ({@link
 * HotLog#trimTransactionIndex}, under the same lock, by any process) replaces the file by a shorter one: the next
 * call notices another inode under the name and reads the new file from its start. Guarded by the partition
 * writer's mutex and file lock.
 */
final class TxnIndexWriter implements LogRecovery.TxnObserver {
    private static final Logger LOG = LoggerFactory.getLogger(TxnIndexWriter.class);

    private final TopicPartition partition;
    private final Path file;
    private final TxnIndexState state = new TxnIndexState();
    private final GroupSync.Force forceMeter;
    /** Read by group-commit forces outside the lock. */
    private volatile FileChannel channel;
    /** The inode {@link #channel} is open on; while it is open, no other file can have it. */
    private Object fileKey;
    private GroupSync sync;
    /** End of the entries a completed force covers; the index needs no force while it equals {@link #end()}. */
    private long forcedEnd;

    /** @param force forces a channel and meters it (the writer's fsync meter) */
    TxnIndexWriter(TopicPartition partition, Path dir, ChannelForce force) {
        this.partition = partition;
        this.file = dir.resolve(TxnIndexEntry.FILE_NAME);
        this.forceMeter = () -> {
            FileChannel c = channel;
            try {
                if (c != null) {
                    force.force(c);
                }
            } catch (ClosedChannelException e) {
                if (c == channel) {
                    throw e;
                }
                // Replaced after a trim: what was written to it is in the trimmed file, which the trim forced.
            }
        };
    }

    /** Forces one channel (the writer meters every fsync). */
    @FunctionalInterface
    interface ChannelForce {
        void force(FileChannel channel) throws IOException;
    }

    /** End of the valid entries, as this writer knows it. */
    long end() {
        return state.consumed();
    }

    /** The group commit of the index file; null until it has been opened. */
    GroupSync sync() {
        return sync;
    }

    /** Writes BEGIN(producer, epoch, firstOffset) unless the index has it (or a later one, or an open one). */
    void ensureBegin(long producerId, short epoch, long firstOffset) throws IOException {
        catchUp();
        if (!state.hasBegin(producerId, firstOffset)) {
            write(TxnIndexEntry.begin(producerId, epoch, firstOffset));
        }
    }

    /** Writes END(producer, epoch, markerOffset, commit) unless the index has it. */
    void ensureEnd(long producerId, short epoch, long markerOffset, boolean commit) throws IOException {
        catchUp();
        if (!state.hasEnd(markerOffset)) {
            write(TxnIndexEntry.end(producerId, epoch, markerOffset, commit));
        }
    }

    /**
     * A transactional batch or marker written by this writer, or read back from the log by recovery, before the
     * producer table applies it: a marker gets its END, a batch that opens its producer's transaction its BEGIN.
     */
    @Override
    public void replayed(BatchInfo info, ByteBuffer batch, ProducerStateTable producers) throws IOException {
        if (info.control()) {
            TransactionMarker marker = TransactionMarker.read(batch);
            ensureEnd(info.producerId(), info.producerEpoch(), info.baseOffset(), marker.commit());
        } else if (info.transactional() && producers.opensTransaction(info.producerId(), info.producerEpoch())) {
            ensureBegin(info.producerId(), info.producerEpoch(), info.baseOffset());
        }
    }

    /**
     * A checkpoint was loaded: every transaction open in it has its BEGIN (the checkpoint may have become durable
     * and the index entry not, in an OS crash).
     */
    @Override
    public void loaded(Map<Long, ProducerStateTable.Entry> producers) throws IOException {
        for (Map.Entry<Long, ProducerStateTable.Entry> e : producers.entrySet()) {
            if (e.getValue().txnFirstOffset() != ProducerStateTable.NO_TXN) {
                ensureBegin(e.getKey(), e.getValue().epoch(), e.getValue().txnFirstOffset());
            }
        }
    }

    /**
     * The offset of the newest marker the index holds an END for (-1: none), reading what other writers appended.
     * A partition without an index file gets none created.
     */
    @Override
    public long newestEnd() throws IOException {
        if (channel == null && !Files.exists(file)) {
            return -1;
        }
        catchUp();
        return state.newestEnd();
    }

    /** Forces entries not yet forced (on an interval fsync, on close). */
    void forceIfDirty() throws IOException {
        if (channel != null && forcedEnd < end()) {
            long target = end();
            forceMeter.run();
            forcedEnd = target;
        }
    }

    void close() throws IOException {
        if (channel != null) {
            forceIfDirty();
            channel.close();
            channel = null;
        }
    }

    /** Reads what other writers appended; truncates a torn last entry. */
    private void catchUp() throws IOException {
        if (channel != null && replaced()) {
            FileChannel old = channel;
            channel = null;
            old.close();
        }
        if (channel == null) {
            boolean created = !Files.exists(file);
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            if (created) {
                AtomicFiles.fsyncDirectory(file.getParent());
            }
            fileKey = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            sync = new GroupSync(forceMeter);
            state.reset();
            forcedEnd = 0;
        }
        long size = channel.size();
        if (size < state.consumed()) {
            state.reset(); // replaced underneath us: read it anew
            forcedEnd = 0;
        }
        if (size == state.consumed()) {
            return;
        }
        if (!state.readFrom(channel, size)) {
            return;
        }
        long bad = state.consumed();
        if (size - bad >= 2L * TxnIndexEntry.SIZE) {
            // More than one entry after the bad one: not a torn write but damage. Refuse rather than drop entries.
            throw new CorruptLogException(partition + " " + TxnIndexEntry.FILE_NAME, bad,
                    "transaction index entry fails its CRC with " + (size - bad) + " bytes after it");
        }
        LOG.warn("{}: truncating a torn {} entry at {} ({} bytes) left by a writer that died mid-write", partition,
                TxnIndexEntry.FILE_NAME, bad, size - bad);
        channel.truncate(bad);
        channel.force(true);
    }

    /** Whether the name now points at another file than the open one: trimmed (or deleted) by another writer. */
    private boolean replaced() throws IOException {
        try {
            return !Objects.equals(Files.readAttributes(file, BasicFileAttributes.class).fileKey(), fileKey);
        } catch (NoSuchFileException e) {
            return true;
        }
    }

    private void write(TxnIndexEntry entry) throws IOException {
        ByteBuffer bytes = entry.encode();
        long at = state.consumed();
        try {
            while (bytes.hasRemaining()) {
                at += channel.write(bytes, at);
            }
        } catch (IOException e) {
            try {
                channel.truncate(state.consumed());
            } catch (IOException again) {
                e.addSuppressed(again); // the next writer truncates it as a torn entry
            }
            throw e;
        }
        state.apply(entry);
        if (sync != null) {
            sync.wrote(state.consumed());
        }
    }
}
