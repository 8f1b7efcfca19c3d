package io.tierlog.log.compaction;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.KafkaClientInternals;
import io.tierlog.log.internal.segment.SegmentCursor;
import org.apache.kafka.common.record.internal.MemoryRecords;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The hot cleaner's rules applied to one segment file anywhere (the cold tier's cleaner downloads a cold segment and
 * runs them on the local copy): the same {@link MemoryRecords#filterTo} with the same filter, so a cold copy is
 * cleaned exactly as a hot one is (offsets and timestamps unchanged, every batch kept with a valid CRC, idempotent
 * producer state intact, tombstones dropped after their delete horizon, records of aborted transactions dropped and
 * markers kept). The aborted transactions come from the cold segments' sidecars. Stateless; thread-safe.
 */
public final class SegmentCompaction {
    private SegmentCompaction() {
    }

    /** Receives each filtered batch, in order: the original batch's header facts and the batch as rewritten. */
    public interface Sink {
        void accept(BatchInfo original, ByteBuffer filtered) throws IOException;
    }

    /**
     * What filtering one segment did.
     *
     * @param changed       whether any batch's bytes differ from the input's
     * @param nextHorizonMs the earliest delete horizon of a tombstone it kept ({@link Long#MAX_VALUE}: none)
     * @param inputBytes    bytes of the input segment
     */
    public record Filtered(boolean changed, long nextHorizonMs, long inputBytes) {
    }

    /**
     * Adds every committed or non-transactional keyed record of the segment at {@code file} to {@code latest} (key
     * &rarr; its offset; later records overwrite), as the hot cleaner maps ({@link KeyMap#add}).
     *
     * @param aborted the batches of the aborted transactions overlapping the segment (its sidecar's)
     * @throws CorruptLogException if a batch fails validation or the file ends inside a batch
     */
    public static void mapLatest(Path file, long base, AbortedBatches aborted, KeyMap latest) throws IOException {
        forEachBatch(file, base, (info, batch) ->
                latest.add(MemoryRecords.readableRecords(batch.slice()).batches().iterator().next(), aborted));
    }

    /**
     * Filters the segment at {@code file} batch by batch into {@code sink}.
     *
     * @param latest            key &rarr; latest offset, from {@link #mapLatest}
     * @param aborted           the batches of the aborted transactions overlapping the segment: their records go
     * @param absentKeyIsLatest true if {@code latest} maps only the dirty part of the log and this segment lies in the
     *                          already cleaned part (where each key occurs once), so a key it lacks is kept
     */
    public static Filtered filter(TopicPartition tp, Path file, long base, KeyMap latest,
                                  AbortedBatches aborted, boolean absentKeyIsLatest, long now,
                                  long deleteRetentionMs, Sink sink) throws IOException {
        KeepLatestFilter filter = new KeepLatestFilter(latest, aborted, absentKeyIsLatest, now, deleteRetentionMs);
        boolean[] changed = {false};
        long size = forEachBatch(file, base, (info, batch) -> {
            MemoryRecords in = MemoryRecords.readableRecords(batch.slice());
            ByteBuffer dest = ByteBuffer.allocate(batch.remaining() + 64);
            MemoryRecords.FilterResult result = KafkaClientInternals.filter(in, filter, dest);
            ByteBuffer filtered = result.outputBuffer().flip();
            if (!filtered.equals(batch.duplicate())) {
                changed[0] = true;
            }
            HotCleaner.checkKept(tp, info, filtered);
            sink.accept(info, filtered);
        });
        return new Filtered(changed[0], filter.nextHorizonMs, size);
    }

    private interface Visitor {
        void visit(BatchInfo info, ByteBuffer batch) throws IOException;
    }

    /** Returns the file's size once every batch was visited. */
    private static long forEachBatch(Path file, long base, Visitor visitor) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            SegmentCursor cursor = new SegmentCursor(ch, base, 0);
            SegmentCursor.Step step;
            while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                visitor.visit(cursor.info(), cursor.batch());
            }
            if (step != SegmentCursor.Step.END) {
                throw new CorruptLogException("segment " + file.getFileName(), cursor.position(),
                        step == SegmentCursor.Step.CORRUPT ? cursor.problem() : "segment ends inside a batch");
            }
            return cursor.position();
        }
    }
}
