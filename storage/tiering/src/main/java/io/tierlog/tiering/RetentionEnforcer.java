package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.HotLog;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreException;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

/**
 * Retention on both tiers, one {@link #runOnce()} per {@code tierlog.retention.check-interval}. A segment's age
 * is its largest record timestamp (Kafka's rule), compared with the injected clock.
 *
 * <h2>Total retention ({@code retention.ms}, {@code retention.bytes}: the whole log)</h2>
 * Deletes whole cold segments, oldest first: first a manifest without them and with {@code logStartOffset}
 * moved to the first remaining offset is committed, then their objects are deleted. A crash between the two
 * leaves unreferenced objects for the {@link OrphanCollector}; a reader never finds a manifest entry whose
 * object is gone because of retention. {@code retention.bytes} counts cold bytes plus hot bytes not yet cold.
 * Segments wholly below a partition's {@link LogStartMarks mark} (records deleted with DeleteRecords) go the same
 * way at the next pass, whatever the retention settings and cleanup policy.
 * Hot segments not yet uploaded are never deleted by it: nothing leaves the log before it reached S3.
 *
 * <h2>Local retention ({@code local.retention.ms}, {@code local.retention.bytes}: the hot tier)</h2>
 * Their -2 (the default) means the total's value ({@link TopicConfig#effectiveLocalRetentionMs()}).
 * Evicts sealed hot segments oldest first, and only those whose offsets a freshly listed manifest shows
 * committed (and whose segment object exists): never the active segment, never an un-uploaded one. Segments
 * below {@code logStartOffset} are evicted too. Each eviction is reported to the {@link SegmentEvictionListener}
 * (the index drops its entries). A pass that evicted trims the partition's transaction index
 * ({@link HotLog#trimTransactionIndex}): the aborted transactions of evicted segments are in their sidecars.
 *
 * <p>Thread-safe: passes are serialized.
 */
public final class RetentionEnforcer {
    private static final Logger LOG = LoggerFactory.getLogger(RetentionEnforcer.class);

    private final HotLog hotLog;
    private final TopicStore topics;
    private final ObjectStore store;
    private final ManifestStore manifests;
    private final TopicGuards guards;
    private final TieringStats stats;
    private final Clock clock;
    private final SegmentEvictionListener listener;
    private final LogStartMarks marks;

    RetentionEnforcer(Path dataDir, TopicStore topics, ObjectStore store, ManifestStore manifests, TopicGuards guards,
                      TieringStats stats, Clock clock, SegmentEvictionListener listener) {
        this.hotLog = HotLog.reusingSettledListings(dataDir, clock); // as the tierer's: every pass, every partition
        this.topics = topics;
        this.store = store;
        this.manifests = manifests;
        this.guards = guards;
        this.stats = stats;
        this.clock = clock;
        this.listener = listener;
        this.marks = new LogStartMarks(dataDir, clock);
    }

    /** What one pass did. */
    public record PassResult(int coldSegmentsDeleted, int hotSegmentsEvicted) {
    }

    /** Enforces retention on every partition. Store faults stop the pass (retried at the next one). */
    public synchronized PassResult runOnce() {
        int cold = 0;
        int hot = 0;
        for (TopicMetadata topic : topics.list()) {
            Lock lock = guards.of(topic.name()).readLock();
            lock.lock();
            try {
                for (int p = 0; p < topic.partitions(); p++) {
                    TopicPartition tp = new TopicPartition(topic.name(), p);
                    try {
                        cold += enforceTotal(tp, topic.config());
                        hot += enforceLocal(tp, topic.config());
                    } catch (ObjectStoreUnavailableException e) {
                        LOG.warn("retention paused: object store unavailable at {}: {}", tp, e.getMessage());
                        return new PassResult(cold, hot);
                    } catch (ObjectStoreException | UncheckedIOException e) {
                        LOG.warn("{}: retention failed, will retry next pass", tp, e);
                    }
                }
            } finally {
                lock.unlock();
            }
        }
        return new PassResult(cold, hot);
    }

    /** Deletes expired cold segments of one partition, manifest first. Returns how many. */
    int enforceTotal(TopicPartition tp, TopicConfig config) {
        long deletedBelow = marks.markOf(tp);
        if (!byRetention(config) && deletedBelow == 0) {
            return 0;
        }
        // Total retention deletes cold segments only: a partition that never sealed one costs no store request.
        Manifest known = manifests.cachedUnlessNeverSealed(tp);
        if (known.isEmpty()) {
            return 0;
        }
        long hotOnlyBytes = hotBytesAbove(tp, known.coldEnd());
        if (expiredCount(known, config, hotOnlyBytes, deletedBelow) == 0) {
            return 0;
        }
        AtomicReference<List<ColdSegment>> dropped = new AtomicReference<>(List.of());
        Manifest result = manifests.commit(tp, current -> {
            int n = expiredCount(current, config, hotBytesAbove(tp, current.coldEnd()), deletedBelow);
            dropped.set(current.segments().subList(0, n));
            return n == 0 ? Optional.empty() : Optional.of(current.dropOldest(n));
        });
        List<ColdSegment> gone = dropped.get();
        if (gone.isEmpty()) {
            return 0;
        }
        List<ObjectKey> keys = new ArrayList<>();
        for (ColdSegment s : gone) {
            keys.add(s.segmentKey());
            keys.add(s.indexKey());
        }
        store.deleteAll(keys);
        stats.coldSegmentsDeleted(gone.size());
        LOG.info("{}: retention deleted {} cold segments; logStartOffset is now {} (manifest v{})", tp, gone.size(),
                result.logStartOffset(), result.version());
        return gone.size();
    }

    private static boolean byRetention(TopicConfig config) {
        return config.deletesByRetention() && (config.retentionMs() != -1 || config.retentionBytes() != -1);
    }

    /**
     * How many of the oldest cold segments go: those wholly below {@code deletedBelow} (records deleted with
     * DeleteRecords, whatever the topic's retention, as Kafka removes them), then those that break
     * {@code retention.ms} or {@code retention.bytes}.
     */
    private int expiredCount(Manifest m, TopicConfig config, long hotOnlyBytes, long deletedBelow) {
        List<ColdSegment> segments = m.segments();
        int n = 0;
        while (n < segments.size() && segments.get(n).lastOffset() < deletedBelow) {
            n++;
        }
        if (!byRetention(config)) {
            return n;
        }
        if (config.retentionMs() != -1) {
            long cutoff = clock.millis() - config.retentionMs();
            while (n < segments.size() && segments.get(n).maxTimestamp() < cutoff) {
                n++;
            }
        }
        if (config.retentionBytes() != -1) {
            long size = m.totalBytes() + hotOnlyBytes;
            for (int i = 0; i < n; i++) {
                size -= segments.get(i).sizeBytes();
            }
            while (n < segments.size() && size - segments.get(n).sizeBytes() >= config.retentionBytes()) {
                size -= segments.get(n).sizeBytes();
                n++;
            }
        }
        return n;
    }

    /** Evicts hot segments that local retention allows, oldest first. Returns how many. */
    int enforceLocal(TopicPartition tp, TopicConfig config) {
        List<Long> bases = hotLog.segmentBases(tp);
        if (bases.size() < 2) {
            return 0;
        }
        long hotBytes = 0;
        for (long base : bases) {
            hotBytes += sizeOf(tp, base);
        }
        Manifest manifest = manifests.cached(tp);
        boolean fresh = false;
        int evicted = 0;
        for (int i = 0; i < bases.size() - 1; i++) {
            long base = bases.get(i);
            long next = bases.get(i + 1);
            long size = sizeOf(tp, base);
            if (!wanted(manifest, base, next, size, hotBytes, config)) {
                break;
            }
            if (!fresh) {
                // Only a manifest listed just now may authorise deleting the hot copy (see ManifestStore).
                manifest = manifests.load(tp);
                fresh = true;
                if (!wanted(manifest, base, next, size, hotBytes, config)) {
                    break;
                }
            }
            if (next > manifest.logStartOffset() && !coldCopyExists(manifest, base)) {
                LOG.warn("{}: segment {} is in manifest v{} but its object is missing; keeping the hot copy", tp,
                        base, manifest.version());
                break;
            }
            hotLog.evictBelow(tp, next); // removes segment base alone: the iterations before evicted the older ones
            hotBytes -= size;
            evicted++;
            stats.hotSegmentEvicted();
            listener.evicted(tp, base, next);
            LOG.debug("{}: evicted hot segment {} (cold end {}, logStartOffset {})", tp, base, manifest.coldEnd(),
                    manifest.logStartOffset());
        }
        if (evicted > 0) {
            // Transactions that ended below the hot tier are in the sidecars now; once per pass that evicted.
            int dropped = hotLog.trimTransactionIndex(tp);
            if (dropped > 0) {
                LOG.debug("{}: dropped {} transaction index entries below the hot tier", tp, dropped);
            }
        }
        return evicted;
    }

    /** Whether local retention wants hot segment {@code [base, next)} gone, and the manifest allows it. */
    private boolean wanted(Manifest m, long base, long next, long size, long hotBytes, TopicConfig config) {
        if (next <= m.logStartOffset() && m.version() > 0) {
            return true; // below the start of the log: total retention removed it
        }
        if (next > m.coldEnd()) {
            return false; // not (wholly) committed to the cold tier
        }
        // -2 (the default) resolves to the total: a user who sets only retention.ms gets it on the hot tier too.
        long localBytes = config.effectiveLocalRetentionBytes();
        long localMs = config.effectiveLocalRetentionMs();
        if (localBytes != -1 && hotBytes > localBytes) {
            return true;
        }
        if (localMs != -1) {
            Optional<ColdSegment> cold = m.segmentFor(base);
            long maxTs = cold.map(ColdSegment::maxTimestamp).orElse(Long.MAX_VALUE);
            return maxTs < clock.millis() - localMs;
        }
        return false;
    }

    private boolean coldCopyExists(Manifest m, long base) {
        return m.segmentFor(base).map(s -> store.head(s.segmentKey()).isPresent()).orElse(false);
    }

    private long hotBytesAbove(TopicPartition tp, long coldEnd) {
        List<Long> bases = hotLog.segmentBases(tp);
        long bytes = 0;
        for (int i = 0; i < bases.size(); i++) {
            boolean last = i == bases.size() - 1;
            if (last || bases.get(i + 1) > coldEnd) {
                bytes += sizeOf(tp, bases.get(i));
            }
        }
        return bytes;
    }

    /** A hot segment's size; 0 once evicted. */
    private long sizeOf(TopicPartition tp, long base) {
        return Math.max(0, hotLog.segmentBytes(tp, base));
    }
}
