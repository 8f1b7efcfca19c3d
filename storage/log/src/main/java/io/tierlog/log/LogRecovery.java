package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.producer.ProducerStateTable;
import io.tierlog.log.internal.segment.SegmentCursor;
import io.tierlog.log.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Finds the true end of one partition's log on disk for its writer (Kafka keeps this in {@code LogLoader}): from the
 * writer's cached tail, else from the newest usable producer-state checkpoint, else from the oldest hot segment; it
 * validates every batch after that point and applies it to the producer table, truncates a torn tail left by a writer
 * killed mid-append, and refuses (with {@link CorruptLogException}) a corrupt batch or a gap in the offsets. Every
 * transactional batch and marker it applies is shown to the transaction index first ({@link TxnObserver}), which
 * adds a BEGIN or END the index lacks.
 *
 * <p>Runs before every append, since other processes may have appended since this writer last looked. The caller
 * holds the partition's mutex and file lock. Not thread-safe on its own.
 */
final class LogRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);

    /** Opens a tail at a segment (the writer attaches its group commit and fsync metering). */
    interface TailOpener {
        WriterTail open(long base, FileChannel channel, long position, long nextOffset, long segmentCreatedMs);
    }

    /**
     * Keeps the transaction index in step with the batches recovery applies ({@link TxnIndexWriter}), so that a
     * writer killed between a marker and its index entry, or between a checkpoint and a BEGIN, is repaired.
     */
    interface TxnObserver {
        /** A transactional batch or marker, before the producer table applies it. */
        void replayed(BatchInfo info, ByteBuffer batch, ProducerStateTable producers) throws IOException;

        /** The producer table was loaded from a checkpoint. */
        void loaded(Map<Long, ProducerStateTable.Entry> producers) throws IOException;

        /** The offset of the newest marker the transaction index holds an END for, -1 when none. */
        long newestEnd() throws IOException;
    }

    private final TopicPartition partition;
    private final Path dir;
    private final Clock clock;
    private final ProducerStateTable producers;
    private final TailOpener opener;
    private final TxnObserver txns;

    LogRecovery(TopicPartition partition, Path dir, Clock clock, ProducerStateTable producers, TailOpener opener,
                TxnObserver txns) {
        this.partition = partition;
        this.dir = dir;
        this.clock = clock;
        this.producers = producers;
        this.opener = opener;
        this.txns = txns;
    }

    /**
     * Brings the tail and the producer table up to the true end of the log on disk. {@code track} is told every tail
     * this moves to (null when it closes the cached one), before anything that may fail, so the writer's view stays
     * consistent when this throws.
     *
     * <p>Fast path (every append after the first): the cached tail segment still exists, so scan it from the cached
     * position and follow successors by name, since a roll names the new segment after the offset where the old
     * one ends. That costs two {@code stat}s instead of a directory listing. The listing, with its gap checks,
     * runs when the cached segment is gone or on the first append of the writer.
     *
     * @param cached           the writer's tail, or null
     * @param checkpointLegacy called (with the tail tracked) after replaying batches whose producer sequences may be
     *                         numbered per request, so that the next process does not replay them as such again
     * @return false when the partition has no segment: the tail is closed and the producer table empty, and the writer
     *         creates the first segment
     * @throws CorruptLogException if a complete batch fails validation or the offsets have a gap; nothing is truncated
     */
    boolean refresh(WriterTail cached, Consumer<WriterTail> track, Runnable checkpointLegacy) throws IOException {
        if (cached != null && Files.exists(SegmentFiles.log(dir, cached.segmentBase))) {
            scanForward(cached, track);
            return true;
        }
        List<Long> bases = SegmentFiles.segmentBases(dir);
        if (cached != null) {
            track.accept(null);
            cached.channel.close();
        }
        if (bases.isEmpty()) {
            producers.clear();
            return false;
        }
        // Batches after a checkpoint of the old format, or with none, may number sequences per request.
        Start found = fromCheckpoint(bases);
        if (found == null) {
            // No usable checkpoint: rebuild from the oldest hot segment. Producer state of evicted segments is gone,
            // which only means a retry of a batch that old is no longer recognised.
            producers.clear();
            long first = bases.get(0);
            found = new Start(opener.open(first, openForWrite(first), 0, first, clock.millis()), true);
        }
        WriterTail start = found.tail();
        boolean legacy = found.legacy();
        track.accept(start);
        producers.replayingLegacy(legacy);
        WriterTail end;
        try {
            end = scanForward(start, track);
        } finally {
            producers.replayingLegacy(false);
        }
        if (legacy) {
            // From here on batches are Kafka-numbered: a checkpoint of the current format marks where.
            checkpointLegacy.run();
        }
        // Successors are followed by name; a newer segment that is not in that chain means a gap in the offsets.
        List<Long> after = SegmentFiles.segmentBases(dir);
        if (after.get(after.size() - 1) != end.segmentBase) {
            throw new CorruptLogException(where(end), end.position, "segment " + after.get(after.size() - 1)
                    + " exists beyond the end of the log at offset " + end.nextOffset);
        }
        return true;
    }

    /** Where a full recovery starts, and whether the batches after it may number sequences per request. */
    private record Start(WriterTail tail, boolean legacy) {
    }

    /**
     * The tail at the newest usable checkpoint, with the producer table loaded from it; null when there is none.
     * Batches after a checkpoint of the old format replay as legacy (see {@link ProducerStateTable}).
     */
    private Start fromCheckpoint(List<Long> bases) throws IOException {
        List<Long> snapshots = SegmentFiles.snapshotOffsets(dir);
        for (int i = snapshots.size() - 1; i >= 0; i--) {
            ProducerSnapshot s = ProducerSnapshot.read(dir, snapshots.get(i)).orElse(null);
            if (s != null && bases.contains(s.segmentBase())
                    && Files.size(SegmentFiles.log(dir, s.segmentBase())) >= s.position()) {
                if (indexLost(s, bases.get(0))) {
                    LOG.warn("{}: checkpoint at offset {} is ahead of the transaction index (its END of the marker at "
                            + "{} is missing: an OS crash before the index was written back); recovering from an "
                            + "older point", partition, s.nextOffset(), s.newestTxnEnd());
                    continue;
                }
                producers.load(s.producers(), clock.millis());
                txns.loaded(s.producers());
                return new Start(opener.open(s.segmentBase(), openForWrite(s.segmentBase()), s.position(),
                        s.nextOffset(), s.segmentCreatedMs()), s.perRequestSequences());
            }
        }
        return null;
    }

    /**
     * Whether the transaction index lost entries {@code s} counts on: the END of its newest marker is missing. A
     * marker below the oldest hot segment is not asked for: a trim drops such ENDs, and no hot read needs them.
     * Entries are appended in log order, so with that END present every earlier one is.
     */
    private boolean indexLost(ProducerSnapshot s, long oldestHotBase) throws IOException {
        return s.newestTxnEnd() >= oldestHotBase && txns.newestEnd() < s.newestTxnEnd();
    }

    /** Validates and applies every batch after {@code tail}, following successors by name; returns the last tail. */
    private WriterTail scanForward(WriterTail tail, Consumer<WriterTail> track) throws IOException {
        long now = clock.millis();
        while (true) {
            SegmentCursor cursor = new SegmentCursor(tail.channel, tail.segmentBase, tail.position);
            boolean firstBatch = tail.position == 0;
            SegmentCursor.Step step;
            while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                BatchInfo info = cursor.info();
                if (info.baseOffset() != tail.nextOffset) {
                    throw new CorruptLogException(where(tail), info.position(), "batch base offset " + info.baseOffset()
                            + " where " + tail.nextOffset + " was expected");
                }
                if (firstBatch && info.maxTimestamp() > 0) {
                    tail.segmentCreatedMs = Math.min(tail.segmentCreatedMs, info.maxTimestamp());
                    firstBatch = false;
                }
                if (info.transactional()) {
                    txns.replayed(info, cursor.batch(), producers);
                }
                producers.apply(info, now);
                tail.position = info.endPosition();
                tail.nextOffset = info.nextOffset();
            }
            if (step == SegmentCursor.Step.CORRUPT) {
                throw new CorruptLogException(where(tail), cursor.position(), cursor.problem());
            }
            // A roll names the next segment after this one's end offset; an empty segment has no successor.
            long successor = tail.nextOffset;
            boolean last = successor == tail.segmentBase || !Files.exists(SegmentFiles.log(dir, successor));
            if (step == SegmentCursor.Step.INCOMPLETE) {
                if (!last) {
                    throw new CorruptLogException(where(tail), cursor.position(), "batch cut short before a later segment");
                }
                String notTorn = cursor.tornTailProblem();
                if (notTorn != null) {
                    throw new CorruptLogException(where(tail), cursor.position(), notTorn);
                }
                long size = tail.channel.size();
                LOG.warn("{}: truncating torn batch at {} in segment {} ({} bytes) left by a writer that died mid-append",
                        partition, tail.position, tail.segmentBase, size - tail.position);
                tail.channel.truncate(tail.position);
                tail.channel.force(true);
            }
            if (last) {
                return tail;
            }
            tail.channel.close();
            tail = opener.open(successor, openForWrite(successor), 0, successor, clock.millis());
            track.accept(tail);
        }
    }

    private String where(WriterTail tail) {
        return partition + " segment " + SegmentFiles.logName(tail.segmentBase);
    }

    private FileChannel openForWrite(long base) throws IOException {
        return FileChannel.open(SegmentFiles.log(dir, base), StandardOpenOption.READ, StandardOpenOption.WRITE);
    }
}
