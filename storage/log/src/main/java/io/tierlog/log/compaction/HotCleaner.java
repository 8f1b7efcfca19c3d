package io.tierlog.log.compaction;

import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.KafkaClientInternals;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.segment.SegmentCursor;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * Kafka's log cleaner for one partition's sealed hot segments: keeps the last record of each key, drops tombstones
 * once their delete horizon has passed, and never touches the active (newest) segment.
 *
 * <h2>What a pass keeps</h2>
 * The <em>cleanable range</em> is the sealed segments, oldest first, up to (not including) the first one that ends
 * above {@code cleanableBelow} (the caller's bound: the service passes the cold tier's end, so that a segment is never
 * rewritten while it is being uploaded) or whose largest timestamp is younger than {@code min.compaction.lag.ms}.
 * As Kafka's cleaner does, a pass maps the range's dirty segments (at or above the checkpoint's first dirty offset),
 * key &rarr; latest offset, as many as its {@link KeyMap} budget allows; then it rewrites each segment from the start of
 * the range to the last one it mapped (the clean part holds each key once, so a key the map lacks is kept there) with
 * {@link MemoryRecords#filterTo}, kafka-clients' own filter that Kafka's cleaner uses:
 * <ul>
 *   <li>a keyed record survives unless the map holds a later record of its key; records without a key always
 *       survive. Only committed and non-transactional records are mapped, so a committed transactional record is
 *       compacted like any other, and a record of an aborted transaction never shadows an older committed one;</li>
 *   <li>records of aborted transactions (the partition's transaction index lists them) never survive, and transaction
 *       markers always do (ADR 0058). Only stable segments are cleaned: none at or above the last stable offset, so
 *       every transaction a pass meets has ended and the index knows how;</li>
 *   <li>a tombstone (null value) that survives gets the batch's delete horizon, now + {@code delete.retention.ms}
 *       (KIP-534: stored in the batch header); a pass after the horizon drops it;</li>
 *   <li>every batch keeps its header: base offset, last offset, producer id, epoch and base sequence, with a valid
 *       CRC. A batch whose records all went is kept as an empty batch, as Kafka keeps the last batch of a producer.
 *       So the idempotent producers' state replayed from the log is exactly what it was (every batch's sequence
 *       range is still there), and batch offsets stay dense: the writer's recovery scan, the reader's offset checks,
 *       the tierer and the cold reader see a valid log, with sparse record offsets inside batches.</li>
 * </ul>
 * Offsets and record timestamps never change.
 *
 * <h2>Swap protocol (crash safety)</h2>
 * Segments are rewritten one at a time in offset order, each to {@code .tmp-clean-<name>} in the partition directory,
 * fsynced, then renamed over the segment in one atomic {@code rename(2)} and the directory fsynced. A process killed
 * at any point leaves every segment either wholly old or wholly new (never a partial file, never a gap: the name is
 * always there), plus at most a temporary file that the next pass deletes. Old before new is safe because a pass only
 * removes a record when a later record of its key survives the pass, and that later record lies in the same or a
 * later segment, which is rewritten after it: a tombstone is dropped only after every older record of its key went
 * in an earlier segment or an earlier pass.
 *
 * <h2>Readers and writers</h2>
 * Readers open a segment per walk and keep their descriptor, so a read in flight on the old file finishes on the
 * old inode with the old bytes. A read hint (byte position) taken before a swap no longer names a batch boundary of
 * the new file; {@code PartitionReader} detects that (the batch there does not start at the hint's offset) and walks
 * the segment from its start. Writers only append to the active segment, which a pass never touches.
 *
 * <h2>Concurrency</h2>
 * One pass per partition at a time across processes: an exclusive {@code .cleaner.lock} file lock, tried without
 * waiting (a pass that finds it held does nothing). Thread-safe.
 */
public final class HotCleaner {
    private static final Logger LOG = LoggerFactory.getLogger(HotCleaner.class);
    static final String TEMP_PREFIX = AtomicFiles.TEMP_PREFIX + "clean-";
    private static final String LOCK_FILE = ".cleaner.lock";

    /** Points of the swap protocol, for tests that kill a cleaning process at each of them. */
    public interface Steps {
        Steps NONE = (step, segmentBase) -> { };

        /** Called when {@code step} is reached for segment {@code segmentBase} (-1: not about one segment). */
        void reached(Step step, long segmentBase);
    }

    public enum Step {
        /** The key map is built; nothing written yet. */
        MAPPED,
        /** The temporary copy of a segment is written, not yet fsynced. */
        TEMP_WRITTEN,
        /** The temporary copy is durable. */
        TEMP_SYNCED,
        /** The copy has replaced the segment; the directory is not yet fsynced. */
        RENAMED,
        /** The swap of one segment is durable. */
        SWAPPED,
        /** The pass is done and its checkpoint written. */
        DONE
    }

    private final Path dataDir;
    private final HotLog log;
    private final Clock clock;
    private final Steps steps;
    private final long keyMapBytes;

    public HotCleaner(Path dataDir, Clock clock) {
        this(dataDir, clock, Steps.NONE, KeyMap.DEFAULT_BUDGET_BYTES);
    }

    /** @param keyMapBytes the key map's budget per pass ({@link KeyMap}): a pass cleans as far as it could map */
    public HotCleaner(Path dataDir, Clock clock, Steps steps, long keyMapBytes) {
        this.dataDir = dataDir;
        this.log = new HotLog(dataDir);
        this.clock = clock;
        this.steps = steps;
        this.keyMapBytes = keyMapBytes;
    }

    /**
     * Cleans {@code tp} if its dirty ratio reaches {@code min.cleanable.dirty.ratio} or a tombstone's delete horizon
     * has passed; otherwise only measures. A topic whose policy does not compact is left alone.
     *
     * @param cleanableBelow no segment holding an offset at or above this is rewritten ({@link Long#MAX_VALUE}: no
     *                       bound beyond the active segment)
     * @throws CorruptLogException if a segment in the cleanable range fails validation; nothing is rewritten
     */
    public CleanResult clean(TopicPartition tp, TopicConfig config, long cleanableBelow) {
        long start = System.nanoTime();
        if (!config.compacts()) {
            return CleanResult.skipped(0, 0);
        }
        Path dir = dataDir.resolve(tp.dirName());
        if (!Files.isDirectory(dir)) {
            return CleanResult.skipped(0, 0);
        }
        try (FileChannel lockFile = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
            FileLock lock;
            try {
                lock = lockFile.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                return CleanResult.skipped(0, 0);
            }
            try {
                return cleanLocked(tp, dir, config, cleanableBelow, start);
            } finally {
                lock.release();
            }
        } catch (NoSuchFileException e) {
            return CleanResult.skipped(0, 0); // the topic was deleted under us
        } catch (IOException e) {
            throw new UncheckedIOException("cleaning " + tp + " failed", e);
        }
    }

    private CleanResult cleanLocked(TopicPartition tp, Path dir, TopicConfig config, long cleanableBelow, long start)
            throws IOException {
        deleteLeftovers(dir);
        long now = clock.millis();
        // An open transaction may still abort: what lies at or above its first offset is not cleaned yet.
        PartitionTransactions transactions = log.transactions(tp);
        long stableBelow = Math.min(cleanableBelow, transactions.lastStableOffset(Long.MAX_VALUE));
        List<Segment> range = cleanableRange(dir, config, stableBelow, now);
        CleanerCheckpoint checkpoint = CleanerCheckpoint.read(dir);
        long total = 0;
        long dirty = 0;
        for (Segment s : range) {
            total += s.size;
            if (s.end > checkpoint.firstDirtyOffset()) {
                dirty += s.size;
            }
        }
        double ratio = total == 0 ? 0 : (double) dirty / total;
        boolean horizonDue = checkpoint.nextHorizonMs() <= now;
        if (range.isEmpty() || (ratio < config.minCleanableDirtyRatio() || dirty == 0) && !horizonDue) {
            return CleanResult.skipped(ratio, total);
        }

        // As Kafka's cleaner: map the dirty segments only, as many as the budget allows; the clean part holds each key
        // once, so a key the map lacks is kept there. What is not mapped waits for the next pass.
        AbortedBatches aborted = AbortedBatches.of(
                transactions.aborted(range.get(0).base, range.get(range.size() - 1).end));
        KeyMap latest = new KeyMap(keyMapBytes);
        List<Segment> cleaned = new ArrayList<>();
        for (Segment s : range) {
            if (s.end > checkpoint.firstDirtyOffset()) {
                if (latest.full()) {
                    break;
                }
                forEachBatch(dir, s, (info, batch) -> latest.add(asBatch(batch), aborted));
            }
            cleaned.add(s);
        }
        steps.reached(Step.MAPPED, -1);
        long bytesRead = 0;
        long bytesAfter = total;
        int rewritten = 0;
        long nextHorizon = Long.MAX_VALUE;
        for (Segment s : cleaned) {
            Rewrite r = rewrite(tp, dir, s, latest, aborted, config.deleteRetentionMs(), now);
            bytesRead += s.size;
            bytesAfter += r.size - s.size;
            rewritten += r.swapped ? 1 : 0;
            nextHorizon = Math.min(nextHorizon, r.nextHorizonMs);
        }
        long firstDirty = Math.max(cleaned.get(cleaned.size() - 1).end, checkpoint.firstDirtyOffset());
        new CleanerCheckpoint(firstDirty, nextHorizon).write(dir);
        steps.reached(Step.DONE, -1);
        long nanos = System.nanoTime() - start;
        if (rewritten > 0) {
            LOG.info("{}: cleaned {} segments ({} -> {} bytes, {} keys) in {} ms", tp, rewritten, total, bytesAfter,
                    latest.size(), nanos / 1_000_000);
        }
        return new CleanResult(true, ratio, total, bytesRead, bytesAfter, rewritten, nanos, firstDirty);
    }

    /** A sealed segment: its base offset, the offset after it (the next segment's base) and its size. */
    private record Segment(long base, long end, long size) {
    }

    private record Rewrite(long size, boolean swapped, long nextHorizonMs) {
    }

    /** The sealed segments that a pass may rewrite, oldest first. */
    private List<Segment> cleanableRange(Path dir, TopicConfig config, long cleanableBelow, long now)
            throws IOException {
        List<Long> bases = SegmentFiles.segmentBases(dir);
        List<Segment> out = new ArrayList<>();
        for (int i = 0; i + 1 < bases.size(); i++) {
            long base = bases.get(i);
            long end = bases.get(i + 1);
            if (end > cleanableBelow) {
                break;
            }
            Path file = SegmentFiles.log(dir, base);
            long maxTimestamp = -1;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                SegmentCursor cursor = new SegmentCursor(ch, base, 0);
                SegmentCursor.Step step;
                while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                    maxTimestamp = Math.max(maxTimestamp, cursor.info().maxTimestamp());
                }
                if (step != SegmentCursor.Step.END) {
                    throw new CorruptLogException(dir.getFileName() + " segment " + file.getFileName(),
                            cursor.position(), step == SegmentCursor.Step.CORRUPT ? cursor.problem()
                            : "sealed segment ends inside a batch");
                }
                if (config.minCompactionLagMs() > 0 && maxTimestamp > now - config.minCompactionLagMs()) {
                    break;
                }
                out.add(new Segment(base, end, cursor.position()));
            }
        }
        return out;
    }

    private Rewrite rewrite(TopicPartition tp, Path dir, Segment s, KeyMap latest, AbortedBatches aborted,
                            long deleteRetentionMs, long now) throws IOException {
        Path target = SegmentFiles.log(dir, s.base);
        Path temp = dir.resolve(TEMP_PREFIX + SegmentFiles.logName(s.base));
        KeepLatestFilter filter = new KeepLatestFilter(latest, aborted, true, now, deleteRetentionMs);
        boolean[] changed = {false};
        long[] written = {0};
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            forEachBatch(dir, s, (info, batch) -> {
                MemoryRecords in = MemoryRecords.readableRecords(batch.slice());
                ByteBuffer dest = ByteBuffer.allocate(batch.remaining() + 64);
                MemoryRecords.FilterResult result = KafkaClientInternals.filter(in, filter, dest);
                ByteBuffer filtered = result.outputBuffer().flip();
                if (filtered.remaining() != batch.remaining() || !filtered.equals(batch.duplicate())) {
                    changed[0] = true;
                }
                checkKept(tp, info, filtered);
                while (filtered.hasRemaining()) {
                    written[0] += out.write(filtered, written[0]);
                }
            });
            if (!changed[0]) {
                out.close();
                Files.delete(temp);
                return new Rewrite(s.size, false, filter.nextHorizonMs);
            }
            steps.reached(Step.TEMP_WRITTEN, s.base);
            out.force(true);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        steps.reached(Step.TEMP_SYNCED, s.base);
        if (!Files.exists(target)) {
            // Retention removed the segment meanwhile; renaming would bring it back.
            Files.deleteIfExists(temp);
            return new Rewrite(0, false, Long.MAX_VALUE);
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        steps.reached(Step.RENAMED, s.base);
        AtomicFiles.fsyncDirectory(dir);
        steps.reached(Step.SWAPPED, s.base);
        dropSnapshotsInto(dir, s);
        return new Rewrite(written[0], true, filter.nextHorizonMs);
    }

    /** The filtered bytes must be exactly one batch with the original offsets; anything else is a bug, not data. */
    static void checkKept(TopicPartition tp, BatchInfo original, ByteBuffer filtered) {
        MemoryRecords out = MemoryRecords.readableRecords(filtered.duplicate());
        int n = 0;
        for (RecordBatch b : out.batches()) {
            n++;
            if (b.baseOffset() != original.baseOffset() || b.lastOffset() != original.lastOffset() || !b.isValid()) {
                throw new IllegalStateException(tp + ": cleaning batch " + original.baseOffset() + ".."
                        + original.lastOffset() + " produced " + b.baseOffset() + ".." + b.lastOffset());
            }
        }
        if (n != 1) {
            throw new IllegalStateException(tp + ": cleaning batch " + original.baseOffset() + " produced " + n
                    + " batches");
        }
    }

    private interface BatchVisitor {
        void visit(BatchInfo info, ByteBuffer batch) throws IOException;
    }

    private static void forEachBatch(Path dir, Segment s, BatchVisitor visitor) throws IOException {
        Path file = SegmentFiles.log(dir, s.base);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            SegmentCursor cursor = new SegmentCursor(ch, s.base, 0);
            SegmentCursor.Step step;
            while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                visitor.visit(cursor.info(), cursor.batch());
            }
            if (step != SegmentCursor.Step.END) {
                throw new CorruptLogException(dir.getFileName() + " segment " + file.getFileName(), cursor.position(),
                        step == SegmentCursor.Step.CORRUPT ? cursor.problem() : "sealed segment ends inside a batch");
            }
        }
    }

    private static RecordBatch asBatch(ByteBuffer batch) {
        return MemoryRecords.readableRecords(batch.slice()).batches().iterator().next();
    }

    /**
     * Producer snapshots that name a byte position inside {@code s} name a position of the old file. They are older
     * than the writer's newest (taken at the active segment) and only shorten a recovery scan; deleting them makes a
     * writer whose newest snapshot is unreadable scan from an older one or from the first segment, which stays a
     * valid log after cleaning.
     */
    private static void dropSnapshotsInto(Path dir, Segment s) throws IOException {
        for (long offset : SegmentFiles.snapshotOffsets(dir)) {
            if (offset >= s.base && offset <= s.end) {
                ProducerSnapshot snapshot = ProducerSnapshot.read(dir, offset).orElse(null);
                if (snapshot == null || snapshot.segmentBase() == s.base) {
                    Files.deleteIfExists(dir.resolve(SegmentFiles.snapshotName(offset)));
                }
            }
        }
    }

    /** A killed pass may leave its temporary copy; it is never data, whichever side of the rename the kill fell. */
    private static void deleteLeftovers(Path dir) throws IOException {
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, TEMP_PREFIX + "*")) {
            for (Path p : temps) {
                Files.deleteIfExists(p);
            }
        }
    }
}
