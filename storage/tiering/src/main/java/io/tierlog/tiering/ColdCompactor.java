package io.tierlog.tiering;

import io.tierlog.log.PartitionTransactions;
import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.AbortedBatches;
import io.tierlog.log.compaction.KeyMap;
import io.tierlog.log.compaction.SegmentCompaction;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ByteRange;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStoreException;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The cold tier's cleaner: compacts the committed cold segments of every partition whose {@code cleanup.policy}
 * compacts, with the hot cleaner's rules ({@link SegmentCompaction}: last committed record per key, offsets and
 * timestamps unchanged, batches rebuilt with valid CRCs and every batch header kept, tombstones dropped after
 * {@code delete.retention.ms}, records of aborted transactions dropped, transaction markers kept). A segment's aborted
 * transactions are those its sidecar lists (every one overlapping it: it was tiered below the last stable offset).
 *
 * <h2>A pass over one partition</h2>
 * <ol>
 *   <li>Retired objects older than the grace ({@link TieringConfig#orphanGrace()}) are dropped from the manifest by a
 *       commit, then deleted.</li>
 *   <li>The cleanable range is the cold segments from the start up to the first one younger than
 *       {@code min.compaction.lag.ms}; the dirty part is what lies at or above the manifest's
 *       {@link Manifest.Cleaner#cleanedEnd()}. Unless the dirty ratio reaches {@code min.cleanable.dirty.ratio} or a
 *       kept tombstone's horizon is due, nothing more happens.</li>
 *   <li>As Kafka's cleaner: the dirty segments are downloaded and mapped (key &rarr; latest offset), as many as the
 *       {@link KeyMap}'s budget allows, records of aborted transactions not mapped (the range ends at the last one
 *       mapped; the rest waits for the next pass); then every segment of the range, oldest first, is filtered
 *       against the map into new objects of about {@code segment.bytes} (small compacted segments are merged; an
 *       unchanged segment on its own is kept as it is). The cleaned part holds each key at most once, so a key the
 *       map lacks is kept there.</li>
 *   <li>Each new object and its sidecar (with the aborted transactions of its inputs' sidecars that overlap it: the
 *       records of those are gone, but their markers stay, and a reader that read the old objects may still need
 *       them) are uploaded under a fresh upload id (new keys: nothing stored is overwritten), and committed by
 *       {@link ManifestStore#commit}: the next manifest version replaces the input segments by the new ones and lists
 *       the inputs' objects as {@link Manifest.Retired}. The last commit of a pass also moves the cleaner's checkpoint
 *       to the end of the range.</li>
 * </ol>
 *
 * <h2>Crash and race behaviour</h2>
 * A manifest version is the only truth and is created atomically, so a crash (or exception) at any point leaves the
 * old version or the new one current, never a mix: before a commit the uploads are unreferenced orphans (collected
 * by {@link OrphanCollector} after the grace); after it the old objects are retired ones, kept for the grace and then
 * deleted, by the next pass or, if that deletion is interrupted, by the orphan collector. Any prefix of a pass is a
 * valid compaction (a record goes only when a later record of its key survives, in the same or a later segment), so
 * a pass may commit in several steps. A tierer appending a segment meanwhile makes our conditional create fail; the
 * change is re-applied to the new version, which keeps the appended segment. If retention removed an input segment
 * meanwhile, the change is dropped and its uploads deleted. Uploads are committed within half the grace of the first
 * one, or discarded, so the orphan collector never deletes an object a commit is about to reference.
 *
 * <h2>Readers</h2>
 * A reader that loaded an older version reads the old objects, which stay for the grace (far longer than a
 * manifest is cached, {@value ManifestStore#REFRESH_MS} ms, plus a read). Offsets are those of the old segments
 * (batches stay dense), so a reader that moves on to a newer version mid-read continues at the same offset.
 *
 * <p>Not reentrant: passes run from one thread (the compaction schedule), under each topic's read lock.
 */
public final class ColdCompactor {
    private static final Logger LOG = LoggerFactory.getLogger(ColdCompactor.class);
    /** Size of the ranged GETs that download a cold segment. */
    static final int DOWNLOAD_CHUNK = 8 * 1024 * 1024;

    /** Points of a pass, for tests that fail the cleaner at each of them. */
    public interface Steps {
        Steps NONE = (step, tp) -> { };

        void reached(Step step, TopicPartition tp);
    }

    public enum Step {
        /** A compacted object is uploaded, its sidecar not yet; nothing committed. */
        SEGMENT_UPLOADED,
        /** A compacted object and its sidecar are uploaded; nothing committed. */
        UPLOADED,
        /** About to create the manifest version that swaps the segments. */
        COMMITTING,
        /** The swap is committed; the replaced objects are retired, nothing deleted. */
        COMMITTED,
        /** Expired retired objects are dropped from the manifest; not yet deleted. */
        RETIRED_DROPPED
    }

    /** What a pass did for one partition. */
    public record Result(boolean ran, long bytesRead, long bytesWritten, int segmentsReplaced, int commits) {
        static final Result SKIPPED = new Result(false, 0, 0, 0, 0);
    }

    private final TopicStore topics;
    private final AttributingObjectStore store;
    private final ManifestStore manifests;
    private final TopicGuards guards;
    private final TieringConfig config;
    private final ColdCompactionStats stats;
    private final Clock clock;
    private final RandomGenerator random;
    private final Steps steps;
    private final long keyMapBytes;

    /**
     * @param store     the bucket, as {@code manifests} reaches it too, so a pass's requests (its manifest loads and
     *                  commits included) are counted into {@link ColdCompactionStats#requests()}
     */
    ColdCompactor(TopicStore topics, AttributingObjectStore store, ManifestStore manifests, TopicGuards guards,
                  TieringConfig config, ColdCompactionStats stats, Clock clock, RandomGenerator random, Steps steps) {
        this(topics, store, manifests, guards, config, stats, clock, random, steps, KeyMap.DEFAULT_BUDGET_BYTES);
    }

    /** @param keyMapBytes the key map's budget per pass ({@link KeyMap}): a pass cleans as far as it could map */
    ColdCompactor(TopicStore topics, AttributingObjectStore store, ManifestStore manifests, TopicGuards guards,
                  TieringConfig config, ColdCompactionStats stats, Clock clock, RandomGenerator random, Steps steps,
                  long keyMapBytes) {
        this.topics = topics;
        this.store = store;
        this.manifests = manifests;
        this.guards = guards;
        this.config = config;
        this.stats = stats;
        this.clock = clock;
        this.random = random;
        this.steps = steps;
        this.keyMapBytes = keyMapBytes;
    }

    /** One pass over every compacted topic; returns how many partitions were compacted. Store faults are logged. */
    int runOnce() {
        long start = System.nanoTime();
        int compacted = 0;
        try {
            for (TopicMetadata topic : topics.list()) {
                if (!topic.config().compacts()) {
                    continue;
                }
                Lock lock = guards.of(topic.name()).readLock();
                lock.lock();
                try {
                    if (topics.find(topic.name()).filter(t -> t.id().equals(topic.id())).isEmpty()) {
                        continue; // deleted meanwhile
                    }
                    for (int p = 0; p < topic.partitions(); p++) {
                        TopicPartition tp = new TopicPartition(topic.name(), p);
                        try {
                            compacted += compact(tp, topic.config()).ran() ? 1 : 0;
                        } catch (ObjectStoreUnavailableException e) {
                            throw e;
                        } catch (CorruptLogException | UncheckedIOException | ObjectStoreException
                                 | IllegalStateException e) {
                            stats.failed(e);
                            LOG.warn("{}: cold compaction failed, will retry next pass", tp, e);
                        }
                    }
                } finally {
                    lock.unlock();
                }
            }
        } catch (ObjectStoreUnavailableException e) {
            stats.failed(e);
            LOG.warn("cold compaction paused: object store unavailable: {}", e.getMessage());
        }
        stats.pass(System.nanoTime() - start);
        return compacted;
    }

    /** Compacts one partition's cold tier if its dirty ratio or a tombstone horizon asks for it. */
    Result compact(TopicPartition tp, TopicConfig topicConfig) {
        return store.attributing(stats.requests(), () -> compactCounted(tp, topicConfig));
    }

    private Result compactCounted(TopicPartition tp, TopicConfig topicConfig) {
        long now = clock.millis();
        // The manifest in memory (refreshed in the background) tells whether anything is due, so a clean partition
        // costs no store request per pass; a pass that acts loads the current one.
        Manifest known = manifests.cachedUnlessNeverSealed(tp);
        if (!retiredExpired(known, now) && !cleaningDue(known, topicConfig, now)) {
            return Result.SKIPPED;
        }
        Manifest m = deleteExpiredRetired(tp, manifests.load(tp), now);
        List<ColdSegment> range = cleanableRange(m, topicConfig, now);
        if (range.isEmpty()) {
            return Result.SKIPPED;
        }
        long cleanedEnd = Math.max(m.cleaner().cleanedEnd(), m.coldStart());
        stats.dirtyRatio(dirtyRatio(range, cleanedEnd));
        if (!cleaningDue(m, topicConfig, now)) {
            return Result.SKIPPED;
        }
        Path work;
        try {
            work = Files.createTempDirectory("tierlog-cold-clean-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return new Pass(tp, topicConfig, range, cleanedEnd, now, work).run();
        } catch (IOException e) {
            throw new UncheckedIOException(tp + ": cold compaction failed", e);
        } finally {
            deleteTree(work);
        }
    }

    /** Whether a pass over {@code m} would rewrite anything: dirty enough, or a tombstone horizon has come. */
    private static boolean cleaningDue(Manifest m, TopicConfig config, long now) {
        List<ColdSegment> range = cleanableRange(m, config, now);
        if (range.isEmpty()) {
            return false;
        }
        double dirty = dirtyRatio(range, Math.max(m.cleaner().cleanedEnd(), m.coldStart()));
        return (dirty > 0 && dirty >= config.minCleanableDirtyRatio()) || m.cleaner().nextHorizonMs() <= now;
    }

    /** The share of {@code range}'s bytes in segments that end after {@code cleanedEnd}. */
    private static double dirtyRatio(List<ColdSegment> range, long cleanedEnd) {
        long total = 0;
        long dirty = 0;
        for (ColdSegment s : range) {
            total += s.sizeBytes();
            dirty += s.nextOffset() > cleanedEnd ? s.sizeBytes() : 0;
        }
        return total == 0 ? 0 : (double) dirty / total;
    }

    private boolean retiredExpired(Manifest m, long now) {
        long cutoff = now - config.orphanGrace().toMillis();
        return m.retired().stream().anyMatch(r -> r.retiredAtMs() <= cutoff);
    }

    /** The cold segments a pass may rewrite: from the first, up to the first younger than the compaction lag. */
    private static List<ColdSegment> cleanableRange(Manifest m, TopicConfig config, long now) {
        List<ColdSegment> out = new ArrayList<>();
        for (ColdSegment s : m.segments()) {
            if (config.minCompactionLagMs() > 0 && s.maxTimestamp() > now - config.minCompactionLagMs()) {
                break;
            }
            out.add(s);
        }
        return out;
    }

    /** One partition's pass: the state between downloading, filtering, uploading and committing. */
    private final class Pass {
        private final TopicPartition tp;
        private final TopicConfig topicConfig;
        private final List<ColdSegment> range;
        private final long cleanedEnd;
        private final long now;
        private final Path work;
        private final Map<ObjectKey, Path> downloaded = new HashMap<>();
        /** Sidecar key &rarr; what it says of aborted transactions. */
        private final Map<ObjectKey, Sidecar> sidecars = new HashMap<>();
        /** Objects uploaded and not yet committed, each with the input segments it replaces. */
        private final List<CompactedUpload> pending = new ArrayList<>();
        private long firstPendingAtMs = -1;
        private long bytesRead;
        private long bytesWritten;
        private int replaced;
        private int commits;
        private int objectNumber;

        Pass(TopicPartition tp, TopicConfig topicConfig, List<ColdSegment> range, long cleanedEnd, long now,
             Path work) {
            this.tp = tp;
            this.topicConfig = topicConfig;
            this.range = range;
            this.cleanedEnd = cleanedEnd;
            this.now = now;
            this.work = work;
        }

        Result run() throws IOException {
            // The dirty segments, as many as the key map's budget allows; the pass cleans up to the last one mapped.
            KeyMap latest = new KeyMap(keyMapBytes);
            List<ColdSegment> cleaning = new ArrayList<>();
            for (ColdSegment s : range) {
                if (s.nextOffset() > cleanedEnd) {
                    if (latest.full()) {
                        break;
                    }
                    Path file = download(s);
                    downloaded.put(s.segmentKey(), file);
                    SegmentCompaction.mapLatest(file, s.baseOffset(), abortedBatchesOf(s), latest);
                }
                cleaning.add(s);
            }
            long nextHorizon = Long.MAX_VALUE;
            CompactedObject object = null;
            try {
                for (int i = 0; i < cleaning.size(); i++) {
                    ColdSegment s = cleaning.get(i);
                    Path file = downloaded.containsKey(s.segmentKey()) ? downloaded.remove(s.segmentKey())
                            : download(s);
                    if (object == null) {
                        object = new CompactedObject(work.resolve("out-" + objectNumber++), config.indexIntervalBytes());
                    }
                    CompactedObject target = object;
                    // Every key of a dirty segment is in the map; a key missing from it lies once in the clean part.
                    SegmentCompaction.Filtered f = SegmentCompaction.filter(tp, file, s.baseOffset(), latest,
                            abortedBatchesOf(s), true, now, topicConfig.deleteRetentionMs(), target::write);
                    Files.delete(file);
                    target.add(s, f.changed());
                    nextHorizon = Math.min(nextHorizon, f.nextHorizonMs());
                    if (target.sizeBytes() >= topicConfig.segmentBytes() || i == cleaning.size() - 1) {
                        object.close();
                        object = null;
                        finish(target);
                        if (firstPendingAtMs >= 0 && clock.millis() - firstPendingAtMs > config.orphanGrace().toMillis() / 4) {
                            commit(null); // a long pass commits as it goes (see class)
                        }
                    }
                }
            } finally {
                if (object != null) {
                    object.close();
                }
            }
            commit(new Manifest.Cleaner(cleaning.get(cleaning.size() - 1).nextOffset(), nextHorizon));
            Result r = new Result(true, bytesRead, bytesWritten, replaced, commits);
            stats.partition(bytesRead, bytesWritten, replaced);
            LOG.info("{}: cold compaction read {} bytes of {} segments, wrote {} bytes, replaced {} segments in {} "
                    + "commits", tp, bytesRead, cleaning.size(), bytesWritten, replaced, commits);
            return r;
        }

        /** Uploads an object worth uploading; it waits in {@link #pending} for the next commit. */
        private void finish(CompactedObject object) throws IOException {
            if (!object.worthUploading()) {
                Files.delete(object.file);
                return;
            }
            String uploadId = uploadId();
            long base = object.inputs().get(0).baseOffset();
            ObjectKey segmentKey = BucketLayout.segment(tp, base, uploadId);
            ObjectKey indexKey = BucketLayout.index(tp, base, uploadId);
            if (firstPendingAtMs < 0) {
                firstPendingAtMs = clock.millis();
            }
            SegmentSidecar sidecar = object.sidecar(abortedOf(object.inputs()));
            CompactedUpload upload = new CompactedUpload(List.copyOf(object.inputs()),
                    object.entry(segmentKey, indexKey, now));
            pending.add(upload); // before the puts: a failed put leaves keys that the abort deletes
            store.put(segmentKey, object.file);
            steps.reached(Step.SEGMENT_UPLOADED, tp);
            store.put(indexKey, sidecar.toBytes());
            bytesWritten += object.sizeBytes();
            Files.delete(object.file);
            steps.reached(Step.UPLOADED, tp);
        }

        /** Commits the pending swaps, and the cleaner's checkpoint if given. */
        private void commit(Manifest.Cleaner checkpoint) {
            List<CompactedUpload> swaps = List.copyOf(pending);
            pending.clear();
            if (firstPendingAtMs >= 0 && clock.millis() - firstPendingAtMs > config.orphanGrace().toMillis() / 2) {
                LOG.warn("{}: cold compaction uploads are older than half the orphan grace; discarding them", tp);
                deleteUploads(swaps);
                throw new IllegalStateException(tp + ": cold compaction took too long to commit");
            }
            firstPendingAtMs = -1;
            steps.reached(Step.COMMITTING, tp);
            long committedAt = clock.millis();
            // If this throws, the create may or may not have happened: the uploads stay for the orphan collector.
            Manifest result = manifests.commit(tp, current -> swap(current, swaps, checkpoint, committedAt));
            if (!swaps.isEmpty() && !result.references(swaps.get(0).output().segmentKey())) {
                LOG.info("{}: cold segments changed under the cold compaction (retention?); discarding its uploads",
                        tp);
                deleteUploads(swaps);
                return;
            }
            commits++;
            for (CompactedUpload u : swaps) {
                replaced += u.inputs().size();
            }
            steps.reached(Step.COMMITTED, tp);
        }

        /** The aborted transactions of {@code inputs}, from their sidecars (read_committed readers need them). */
        private List<AbortedTransaction> abortedOf(List<ColdSegment> inputs) {
            List<AbortedTransaction> out = List.of();
            for (ColdSegment s : inputs) {
                out = PartitionTransactions.union(out, abortedOf(s));
            }
            return out;
        }

        /** The aborted transactions overlapping {@code s}: its sidecar's, read once per pass. */
        private List<AbortedTransaction> abortedOf(ColdSegment s) {
            return sidecarOf(s).aborted();
        }

        /**
         * The batches of {@code s} that aborted transactions wrote. A segment tiered before sidecars listed them
         * (version 1) has unknown outcomes: the pass fails on its first transactional batch rather than guess.
         */
        private AbortedBatches abortedBatchesOf(ColdSegment s) {
            Sidecar sidecar = sidecarOf(s);
            return sidecar.listsAborted() ? AbortedBatches.of(sidecar.aborted())
                    : AbortedBatches.unknown("its sidecar " + s.indexKey().value() + " predates aborted transactions");
        }

        private Sidecar sidecarOf(ColdSegment s) {
            return sidecars.computeIfAbsent(s.indexKey(), key -> {
                byte[] bytes = store.get(key);
                try {
                    return new Sidecar(SegmentSidecar.fromBytes(bytes).aborted(), SegmentSidecar.listsAborted(bytes));
                } catch (IllegalArgumentException e) {
                    throw new CorruptLogException("cold sidecar " + key.value(), 0, e.getMessage());
                }
            });
        }

        private Path download(ColdSegment s) throws IOException {
            Path file = work.resolve("in-" + s.baseOffset());
            CRC32C crc = new CRC32C();
            try (OutputStream out = Files.newOutputStream(file)) {
                for (long pos = 0; pos < s.sizeBytes(); pos += DOWNLOAD_CHUNK) {
                    byte[] chunk = store.getRange(s.segmentKey(),
                            ByteRange.of(pos, Math.min(DOWNLOAD_CHUNK, s.sizeBytes() - pos)));
                    crc.update(chunk);
                    out.write(chunk);
                }
            }
            if ((int) crc.getValue() != s.crc32c()) {
                throw new CorruptLogException("cold segment " + s.segmentKey().value(), 0,
                        "CRC32C of the object does not match the manifest's");
            }
            bytesRead += s.sizeBytes();
            return file;
        }
    }

    /** What a cold segment's sidecar says of aborted transactions, and whether it says anything (version 2). */
    private record Sidecar(List<AbortedTransaction> aborted, boolean listsAborted) {
    }

    /** A compacted object and the consecutive cold segments it replaces. */
    private record CompactedUpload(List<ColdSegment> inputs, ColdSegment output) {
    }

    /**
     * The manifest change of a commit: each swap's inputs, found at consecutive positions by their object keys, are
     * replaced by its output and retired; the checkpoint (if any) replaces the cleaner's. Empty (nothing to do) if an
     * input is gone, i.e. retention or another cleaner changed the range. Pure, as {@link ManifestStore#commit} needs.
     */
    static Optional<Manifest> swap(Manifest current, List<CompactedUpload> swaps, Manifest.Cleaner checkpoint,
                                   long nowMs) {
        List<ColdSegment> segments = new ArrayList<>(current.segments());
        List<Manifest.Retired> retired = new ArrayList<>(current.retired());
        for (CompactedUpload u : swaps) {
            int at = indexOf(segments, u.inputs().get(0).segmentKey());
            if (at < 0 || at + u.inputs().size() > segments.size()) {
                return Optional.empty();
            }
            for (int i = 0; i < u.inputs().size(); i++) {
                if (!segments.get(at + i).segmentKey().equals(u.inputs().get(i).segmentKey())) {
                    return Optional.empty();
                }
            }
            segments.subList(at, at + u.inputs().size()).clear();
            segments.add(at, u.output());
            for (ColdSegment in : u.inputs()) {
                retired.add(new Manifest.Retired(in.segmentKey(), nowMs));
                retired.add(new Manifest.Retired(in.indexKey(), nowMs));
            }
        }
        Manifest.Cleaner cleaner = current.cleaner();
        if (checkpoint != null && !current.isEmpty()) {
            // Retention may have removed the range meanwhile; the checkpoint never points below the log.
            cleaner = new Manifest.Cleaner(Math.max(checkpoint.cleanedEnd(), current.coldStart()),
                    checkpoint.nextHorizonMs());
        }
        if (swaps.isEmpty() && cleaner.equals(current.cleaner())) {
            return Optional.empty();
        }
        return Optional.of(new Manifest(current.version() + 1, current.logStartOffset(), segments, cleaner, retired));
    }

    private static int indexOf(List<ColdSegment> segments, ObjectKey segmentKey) {
        for (int i = 0; i < segments.size(); i++) {
            if (segments.get(i).segmentKey().equals(segmentKey)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Drops retired objects older than the grace from the manifest (a commit), then deletes them. A crash between
     * the two leaves unreferenced old objects, which the orphan collector deletes.
     */
    private Manifest deleteExpiredRetired(TopicPartition tp, Manifest m, long now) {
        if (!retiredExpired(m, now)) {
            return m;
        }
        long cutoff = now - config.orphanGrace().toMillis();
        Manifest result = manifests.commit(tp, current -> {
            List<Manifest.Retired> keep = current.retired().stream().filter(r -> r.retiredAtMs() > cutoff).toList();
            if (keep.size() == current.retired().size()) {
                return Optional.empty();
            }
            return Optional.of(new Manifest(current.version() + 1, current.logStartOffset(), current.segments(),
                    current.cleaner(), keep));
        });
        steps.reached(Step.RETIRED_DROPPED, tp);
        List<ObjectKey> expired = m.retired().stream().filter(r -> r.retiredAtMs() <= cutoff)
                .map(Manifest.Retired::key).filter(k -> !result.references(k)).toList();
        if (!expired.isEmpty()) {
            store.deleteAll(expired);
            stats.retiredDeleted(expired.size());
            LOG.info("{}: deleted {} objects retired by cold compaction more than {} ago", tp, expired.size(),
                    config.orphanGrace());
        }
        return result;
    }

    private void deleteUploads(List<CompactedUpload> uploads) {
        List<ObjectKey> keys = new ArrayList<>();
        for (CompactedUpload u : uploads) {
            keys.add(u.output().segmentKey());
            keys.add(u.output().indexKey());
        }
        if (!keys.isEmpty()) {
            store.deleteAll(keys);
        }
    }

    private String uploadId() {
        byte[] bytes = new byte[12];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("cannot delete the cold compaction work directory {}: {}", dir, e.toString());
        }
    }
}
