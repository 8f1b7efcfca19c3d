package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.HotLog;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreException;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.random.RandomGenerator;

/**
 * Uploads sealed hot segments and commits them to their partition's manifest. One {@link #runOnce()} per
 * {@code tierlog.tiering.interval}.
 *
 * <h2>Per segment</h2>
 * A hot segment is sealed once a newer segment exists, and stable once it lies wholly below the partition's last
 * stable offset: every transaction touching it has ended, so its aborted transactions are all known (Kafka's
 * KIP-405 tiers only such segments too). Each sealed, stable segment whose base offset is at or above the manifest's
 * cold end is, in offset order:
 * <ol>
 *   <li>walked and validated batch by batch ({@link SealedSegment}): a corrupt segment is never uploaded;</li>
 *   <li>uploaded under a fresh upload id: the segment bytes ({@link ObjectStore#put(ObjectKey, Path)}: CRC32C
 *       end to end, multipart when large), then its sidecar (with the segment's aborted transactions);</li>
 *   <li>committed as the next manifest version with a conditional create ({@link ManifestStore#commit}). If
 *       another tierer committed the same offsets first, our two objects are deleted at once.</li>
 * </ol>
 *
 * <h2>Crash behaviour</h2>
 * A crash before the commit leaves the hot copy (never deleted before a commit) and up to two unreferenced
 * objects, which {@link OrphanCollector} deletes after the grace period. A crash after the commit leaves a
 * committed segment whose hot copy retention evicts later. A segment an open transaction holds back (and every
 * segment after it: the cold tier has no gaps) waits for a later pass; transactions end within their timeout, so
 * the wait is bounded, and the held-back bytes count as backlog meanwhile. Cold segments never overlap: the manifest is the only
 * truth and its versions are linear. An upload that took longer than half the orphan grace is abandoned before
 * committing, so the collector can never delete an object a commit is about to reference.
 *
 * <h2>Faults</h2>
 * When the store is unavailable the pass stops, and the next pass waits an exponentially growing, fully jittered
 * delay ({@link Backoff}, measured on the injected clock: nothing sleeps, the hot tier is never blocked). The hot
 * segments stay until they are committed; when their bytes exceed {@link TieringConfig#maxPendingBytes()} the
 * backlog is reported ({@link TieringStats#backlogExceeded()}, a WARN), and the service's produce admission
 * refuses appends with 503 {@code hot-tier-full} until the backlog is back under the limit.
 *
 * <p>Thread-safe: passes are serialized (a manual pass and the scheduler's never interleave).
 */
public final class Tierer {
    private static final Logger LOG = LoggerFactory.getLogger(Tierer.class);

    private final HotLog hotLog;
    private final LogStartMarks marks;
    private final TopicStore topics;
    private final ObjectStore store;
    private final ManifestStore manifests;
    private final TopicGuards guards;
    private final TieringConfig config;
    private final TieringStats stats;
    private final Clock clock;
    private final RandomGenerator random;
    private final Backoff backoff;
    /** Bytes of topic.json this process last saw in the bucket, per topic. */
    private final Map<String, byte[]> publishedTopics = new ConcurrentHashMap<>();

    private int consecutiveFailures;
    private int committedThisPass;
    private long nextAttemptAtMs;

    Tierer(Path dataDir, TopicStore topics, ObjectStore store, ManifestStore manifests, TopicGuards guards,
           TieringConfig config, TieringStats stats, Clock clock, RandomGenerator random) {
        // Each pass visits every partition: one whose directory did not change costs a stat, not a listing.
        this.hotLog = HotLog.reusingSettledListings(dataDir, clock);
        this.marks = new LogStartMarks(dataDir, clock);
        this.topics = topics;
        this.store = store;
        this.manifests = manifests;
        this.guards = guards;
        this.config = config;
        this.stats = stats;
        this.clock = clock;
        this.random = random;
        this.backoff = new Backoff(config.backoffBase(), config.backoffCap(), random);
    }

    /** What one pass did. */
    public record PassResult(boolean ran, int segmentsCommitted, boolean storeUnavailable) {
    }

    /**
     * One pass over every partition of every topic. Returns without touching the store while backing off.
     * Never throws for store faults; they are counted, logged and retried by later passes.
     */
    public synchronized PassResult runOnce() {
        long now = clock.millis();
        if (now < nextAttemptAtMs) {
            updatePending();
            return new PassResult(false, 0, true);
        }
        committedThisPass = 0;
        boolean unavailable = false;
        try {
            for (TopicMetadata topic : topics.list()) {
                tierTopic(topic);
            }
            consecutiveFailures = 0;
            stats.storeAvailable(true);
        } catch (ObjectStoreUnavailableException e) {
            unavailable = true;
            consecutiveFailures++;
            stats.uploadError();
            stats.storeAvailable(false);
            long delay = backoff.delayMs(consecutiveFailures);
            nextAttemptAtMs = clock.millis() + delay;
            LOG.warn("tiering paused: object store unavailable ({} consecutive failures); next attempt in {} ms; "
                    + "hot segments are kept meanwhile: {}", consecutiveFailures, delay, e.getMessage());
        }
        updatePending();
        return new PassResult(true, committedThisPass, unavailable);
    }

    private int tierTopic(TopicMetadata topic) {
        Lock lock = guards.of(topic.name()).readLock();
        lock.lock();
        try {
            if (topics.find(topic.name()).filter(t -> t.id().equals(topic.id())).isEmpty()) {
                return 0; // deleted (or re-created) since we listed it
            }
            if (!publishTopic(topic)) {
                return 0;
            }
            int committed = 0;
            for (int p = 0; p < topic.partitions(); p++) {
                TopicPartition tp = new TopicPartition(topic.name(), p);
                try {
                    committed += tierPartition(tp);
                } catch (CorruptLogException e) {
                    // A person must look at this segment; the other partitions carry on.
                    stats.uploadError();
                    LOG.error("{}: not tiering: {}", tp, e.getMessage());
                } catch (ObjectStoreUnavailableException e) {
                    throw e; // pauses the whole pass: the other partitions would fail the same way
                } catch (ObjectStoreException | UncheckedIOException | IllegalStateException e) {
                    stats.uploadError();
                    LOG.warn("{}: tiering failed, will retry next pass", tp, e);
                }
            }
            return committed;
        } finally {
            lock.unlock();
        }
    }

    /** Makes {@code <topic>/topic.json} match the hot metadata. False if the bucket holds a different topic. */
    private boolean publishTopic(TopicMetadata topic) {
        byte[] wanted = TopicDescriptor.toJson(topic);
        byte[] known = publishedTopics.get(topic.name());
        if (known == null) {
            ObjectKey key = BucketLayout.topicMetadata(topic.name());
            try {
                known = store.get(key);
                TopicMetadata there = TopicDescriptor.fromJson(known);
                if (!there.id().equals(topic.id())) {
                    LOG.warn("topic {}: the bucket holds topic id {} but the hot volume has {}; its deletion did not "
                            + "finish. Not tiering this topic until DELETE /v1/topics/{} is repeated",
                            topic.name(), there.id(), topic.id(), topic.name());
                    return false;
                }
            } catch (ObjectNotFoundException e) {
                if (!removeLeftovers(topic.name())) {
                    // Another tierer published the descriptor meanwhile: check it as if it had been there.
                    return publishTopic(topic);
                }
                known = null;
            } catch (IllegalArgumentException e) {
                LOG.warn("topic {}: unreadable topic.json in the bucket is replaced: {}", topic.name(), e.getMessage());
                known = null;
            }
        }
        if (known == null || !Arrays.equals(known, wanted)) {
            store.put(BucketLayout.topicMetadata(topic.name()), wanted);
        }
        publishedTopics.put(topic.name(), wanted);
        return true;
    }

    /**
     * A topic's descriptor is written before any of its segments and deleted before any of them, so objects under a
     * prefix without a descriptor belong to no live topic: the remains of an interrupted deletion. They must go
     * before this topic commits manifest versions, or the old, higher versions would be taken as current.
     *
     * <p>Another tierer (another node, or a restarted one) may publish the descriptor and start uploading at any
     * moment, so the descriptor is looked for again after the listing: if it is still absent, nothing in the listing
     * can be that tierer's, since it uploads only after its descriptor exists; if it is there now, nothing is
     * deleted. Only listed keys are deleted. Without the second look, two tierers starting on a new topic at once
     * had one delete the other's freshly committed segments and manifest.
     *
     * @return false, deleting nothing, if the topic's descriptor has appeared in the meantime
     */
    private boolean removeLeftovers(String topic) {
        List<ObjectKey> leftovers = store.listAll(BucketLayout.topicPrefix(topic)).map(m -> m.key()).toList();
        if (!leftovers.isEmpty()) {
            if (store.head(BucketLayout.topicMetadata(topic)).isPresent()) {
                return false;
            }
            LOG.warn("topic {}: removing {} objects left in the bucket by an interrupted deletion", topic,
                    leftovers.size());
            store.deleteAll(leftovers);
        }
        manifests.forgetTopic(topic);
        return true;
    }

    void forgetTopic(String topic) {
        publishedTopics.remove(topic);
    }

    private int tierPartition(TopicPartition tp) {
        List<Long> bases = hotLog.segmentBases(tp);
        if (bases.size() < 2) {
            return 0;
        }
        // The cached cold end decides whether there is work, so idle partitions cost no store request.
        long coldEnd = manifests.cached(tp).coldEnd();
        int committed = 0;
        long stable = -1;
        for (int i = 0; i < bases.size() - 1; i++) {
            long base = bases.get(i);
            if (bases.get(i + 1) <= coldEnd) {
                continue; // already cold
            }
            if (stable < 0) {
                // Read after the listing: the BEGIN of any transaction in these segments is indexed before its first
                // batch. The newest segment's base is a high watermark every sealed segment lies below.
                stable = hotLog.transactions(tp).lastStableOffset(bases.get(bases.size() - 1));
            }
            if (bases.get(i + 1) > stable) {
                LOG.debug("{}: segment {} waits for the transaction open at offset {}", tp, base, stable);
                break;
            }
            if (bases.get(i + 1) <= marks.markOf(tp)) {
                if (!skipDeleted(tp, bases.get(i + 1))) {
                    break;
                }
            } else if (uploadAndCommit(tp, base)) {
                committed++;
            }
            coldEnd = manifests.cached(tp).coldEnd();
        }
        return committed;
    }

    /**
     * A sealed segment wholly below the partition's log start mark (its records deleted with DeleteRecords) is never
     * uploaded: deleted data does not reach the bucket. The cold tier has no gaps, so it moves past the segment only
     * once it holds nothing else below the mark (retention drops such cold segments at its next pass); until then the
     * segment waits, as retention would delete it right after an upload. Returns whether the cold tier is past it.
     */
    private boolean skipDeleted(TopicPartition tp, long next) {
        Manifest result = manifests.commit(tp, current -> current.isEmpty() && current.coldEnd() < next
                ? Optional.of(current.skipTo(next)) : Optional.empty());
        boolean past = result.coldEnd() >= next;
        if (past) {
            LOG.debug("{}: offsets below {} were deleted before they were tiered; not uploaded", tp, next);
        }
        return past;
    }

    private boolean uploadAndCommit(TopicPartition tp, long base) {
        SealedSegment segment;
        try {
            segment = SealedSegment.scan(hotLog, tp, base, config.indexIntervalBytes());
        } catch (NoSuchFileException e) {
            return false; // evicted by retention meanwhile: it was committed
        } catch (IOException e) {
            throw new UncheckedIOException(tp + ": cannot read segment " + base, e);
        }
        if (segment == null) {
            return false;
        }
        String uploadId = uploadId();
        ObjectKey segmentKey = BucketLayout.segment(tp, base, uploadId);
        ObjectKey indexKey = BucketLayout.index(tp, base, uploadId);
        long started = clock.millis();
        // A failure here propagates to the pass's handler (which counts and logs it once); whatever landed is an
        // orphan for the collector.
        store.put(segmentKey, segment.file());
        store.put(indexKey, segment.sidecar().toBytes());
        if (clock.millis() - started > config.orphanGrace().toMillis() / 2) {
            LOG.warn("{}: upload of segment {} took {} ms, too close to the orphan grace; discarding it and retrying",
                    tp, base, clock.millis() - started);
            store.deleteAll(List.of(segmentKey, indexKey));
            return false;
        }
        Manifest result = manifests.commit(tp, current -> {
            if (current.coldEnd() > base) {
                return Optional.empty(); // another tierer committed these offsets first
            }
            if (!current.isEmpty() && current.coldEnd() != base) {
                throw new IllegalStateException(tp + ": segment " + base + " does not follow the cold end "
                        + current.coldEnd());
            }
            return Optional.of(current.append(new ColdSegment(segment.baseOffset(), segment.lastOffset(),
                    segment.sizeBytes(), segment.firstTimestamp(), segment.maxTimestamp(), segmentKey, indexKey,
                    segment.crc32c(), clock.millis())));
        });
        if (!result.references(segmentKey)) {
            LOG.info("{}: segment {} was committed by another tierer; deleting our copy {}", tp, base, uploadId);
            store.deleteAll(List.of(segmentKey, indexKey));
            return false;
        }
        stats.uploaded(segment.sizeBytes());
        committedThisPass++;
        LOG.debug("{}: tiered segment {} ({} bytes, offsets {}..{}) as manifest v{}", tp, base, segment.sizeBytes(),
                segment.baseOffset(), segment.lastOffset(), result.version());
        return true;
    }

    private String uploadId() {
        byte[] bytes = new byte[12];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Recomputes the backlog gauges from the hot volume and the cached manifests (no store request). */
    private void updatePending() {
        long segments = 0;
        long bytes = 0;
        for (TopicMetadata topic : topics.list()) {
            for (int p = 0; p < topic.partitions(); p++) {
                TopicPartition tp = new TopicPartition(topic.name(), p);
                List<Long> bases = hotLog.segmentBases(tp);
                long coldEnd = manifests.peek(tp).map(Manifest::coldEnd).orElse(0L);
                for (int i = 0; i < bases.size() - 1; i++) {
                    if (bases.get(i + 1) > coldEnd) {
                        segments++;
                        bytes += Math.max(0, hotLog.segmentBytes(tp, bases.get(i))); // 0: evicted meanwhile
                    }
                }
            }
        }
        boolean exceeded = bytes > config.maxPendingBytes();
        if (exceeded && !stats.backlogExceeded()) {
            LOG.warn("tiering backlog of {} bytes in {} sealed segments exceeds tierlog.tiering.max-pending-bytes = {};"
                    + " produce is refused (503 hot-tier-full) and the hot segments are kept until they are uploaded",
                    bytes, segments, config.maxPendingBytes());
        } else if (!exceeded && stats.backlogExceeded()) {
            LOG.info("tiering backlog back to {} bytes, below the limit of {}", bytes, config.maxPendingBytes());
        }
        stats.pending(segments, bytes, exceeded);
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0; // evicted meanwhile
        }
    }
}
