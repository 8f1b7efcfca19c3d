package io.tierlog.tiering;

import io.tierlog.log.HotLog;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.CompactionStats;
import io.tierlog.log.compaction.HotCleaner;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.ObjectStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.random.RandomGenerator;

/**
 * The cold tier of one node, assembled: the {@link Tierer}, {@link RetentionEnforcer}, {@link OrphanCollector},
 * {@link ColdReader} and {@link ColdRestorer} over one {@link ObjectStore} and the hot volume. Callers schedule
 * {@link #runTieringPass()}, {@link #runRetentionPass()} and {@link #runOrphanCollection()} (each from one thread
 * at a time); reads may come from any thread. It does not route reads: the caller decides, from the partition's
 * hot segments, whether an offset is hot or cold, and asks the {@link #reader()} for cold ones. The store is owned
 * by the caller.
 *
 * <p>See docs/adr/0004-tiered-storage.md for the bucket layout, the commit protocol and the crash rules.
 */
public final class TieredStorage implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TieredStorage.class);

    private final Path dataDir;
    private final TopicStore topics;
    private final ObjectStore store;
    private final AttributingObjectStore attributed;
    private final TieringStats stats = new TieringStats();
    private final TopicGuards guards = new TopicGuards();
    private final ManifestStore manifests;
    private final Tierer tierer;
    private final RetentionEnforcer retention;
    private final CompactionStats compactionStats = new CompactionStats();
    private final HotCompactor compactor;
    private final ColdCompactionStats coldCompactionStats = new ColdCompactionStats();
    private final ColdCompactor coldCompactor;
    private final OrphanCollector orphans;
    private final ColdReader reader;
    private final ColdRestorer restorer;
    private final ExecutorService fetchers;
    private final ExecutorService manifestRefresher;
    private final ChunkCache cache;

    /**
     * @param dataDir  the hot volume ({@code tierlog.data-dir})
     * @param cacheDir the chunk cache directory ({@code <tierlog.index-dir>/cold-cache}); emptied on open
     * @param random   upload ids and backoff jitter
     */
    public TieredStorage(Path dataDir, Path cacheDir, ObjectStore store, TieringConfig config, Clock clock,
                         RandomGenerator random, SegmentEvictionListener listener) {
        this.dataDir = dataDir;
        this.store = store;
        this.topics = new TopicStore(dataDir, clock);
        // One thread: reloads are rare (one per partition read per 30 s) and a hanging store should tie up one.
        this.manifestRefresher = Executors.newSingleThreadExecutor(daemonThreads("tierlog-manifest-refresh"));
        // The cold cleaner's requests (through the shared manifest store too) are counted by this view of the bucket.
        this.attributed = new AttributingObjectStore(store);
        // The hot listing lets the passes skip partitions that never sealed a segment without asking the bucket.
        HotLog hotLog = HotLog.reusingSettledListings(dataDir, clock);
        this.manifests = new ManifestStore(attributed, clock, config.keepManifestVersions(), config.orphanGrace(),
                manifestRefresher, hotLog::segmentBases);
        this.tierer = new Tierer(dataDir, topics, store, manifests, guards, config, stats, clock, random);
        this.retention = new RetentionEnforcer(dataDir, topics, store, manifests, guards, stats, clock, listener);
        this.compactor = new HotCompactor(topics, manifests, guards, new HotCleaner(dataDir, clock), compactionStats);
        this.coldCompactor = new ColdCompactor(topics, attributed, manifests, guards, config, coldCompactionStats, clock,
                random, ColdCompactor.Steps.NONE);
        this.orphans = new OrphanCollector(store, manifests, clock, config.orphanGrace(), stats);
        this.fetchers = Executors.newFixedThreadPool(config.fetchThreads(), daemonThreads("tierlog-cold-fetch"));
        // Half the read-ahead memory for chunks requested and not read yet (in flight or landed, pinned until read),
        // half for chunks read recently: together within the bound.
        long memory = config.readAheadMemoryBytes();
        this.cache = new ChunkCache(cacheDir, config.chunkBytes(), config.cacheBytes(), memory / 2, memory / 2, store,
                fetchers, stats, clock);
        // One reader's window and the range that tops it up fit in the half for unread chunks, with room for two
        // chunks of another reader: a lone reader's prefetches are never refused for want of memory.
        long window = Math.min(config.readAheadBytes(),
                Math.max(config.chunkBytes(), memory / 2 - config.rangeBytes() - 2L * config.chunkBytes()));
        this.reader = new ColdReader(store, manifests, cache, window, config.rangeBytes());
        this.restorer = new ColdRestorer(dataDir, topics, store, manifests);
    }

    public TieringStats stats() {
        return stats;
    }

    public ColdReader reader() {
        return reader;
    }

    /** The chunk cache (for tests of its bounds). */
    ChunkCache chunkCache() {
        return cache;
    }

    public ManifestStore manifests() {
        return manifests;
    }

    public Tierer.PassResult runTieringPass() {
        return tierer.runOnce();
    }

    public RetentionEnforcer.PassResult runRetentionPass() {
        return retention.runOnce();
    }

    /**
     * Compacts every partition whose {@code cleanup.policy} compacts, on both tiers: the sealed, already tiered hot
     * segments ({@link HotCleaner}), then the committed cold segments ({@link ColdCompactor}). Returns how many
     * partitions were cleaned, counting each tier's cleaning of a partition once.
     */
    public int runCompactionPass() {
        return compactor.runOnce() + coldCompactor.runOnce();
    }

    /** Compacts the cold tier only ({@link ColdCompactor}); returns how many partitions were compacted. */
    public int runColdCompactionPass() {
        return coldCompactor.runOnce();
    }

    public CompactionStats compactionStats() {
        return compactionStats;
    }

    public ColdCompactionStats coldCompactionStats() {
        return coldCompactionStats;
    }

    /** The bucket as the manifest store and the cold cleaner reach it (counting the cleaner's requests). */
    AttributingObjectStore attributedStore() {
        return attributed;
    }

    /** Collects orphans of every partition of every topic; returns how many objects were deleted. */
    public int runOrphanCollection() {
        int deleted = 0;
        for (TopicMetadata topic : topics.list()) {
            Lock lock = guards.of(topic.name()).readLock();
            lock.lock();
            try {
                for (int p = 0; p < topic.partitions(); p++) {
                    deleted += orphans.collect(new TopicPartition(topic.name(), p));
                }
            } catch (ObjectStoreUnavailableException e) {
                LOG.warn("orphan collection paused: object store unavailable: {}", e.getMessage());
                return deleted;
            } finally {
                lock.unlock();
            }
        }
        return deleted;
    }

    /**
     * Restores topics and hot start offsets from the bucket (see {@link ColdRestorer}), then loads the manifests of
     * every topic's partitions in the background, so that no first read after a start waits for one. Run before
     * serving.
     */
    public List<String> restoreFromBucket() {
        List<String> restored = restorer.restore();
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicMetadata t : topics.list()) {
            for (int p = 0; p < t.partitions(); p++) {
                partitions.add(new TopicPartition(t.name(), p));
            }
        }
        manifests.warm(partitions);
        return restored;
    }

    /**
     * The tiers of one partition from the cached manifest (a LIST at most every 30 s per partition; while the store
     * is unavailable the last manifest seen is used). A partition that never sealed a hot segment has no cold tier and
     * costs no LIST ({@link ManifestStore#cachedUnlessNeverSealed(TopicPartition, List)}).
     *
     * @param hotBases all of the partition's hot segment bases, ascending, as just listed
     */
    public PartitionTiers tiers(TopicPartition tp, List<Long> hotBases) {
        Manifest m;
        try {
            m = manifests.cachedUnlessNeverSealed(tp, hotBases);
        } catch (ObjectStoreUnavailableException e) {
            // Never loaded and the store is down: describe the hot tier alone, so hot reads keep working (a read
            // below the hot start then reaches the cold reader, which answers cold-tier-unavailable).
            m = Manifest.EMPTY;
        }
        long oldestHot = hotBases.isEmpty() ? 0 : hotBases.get(0);
        long start;
        if (m.version() == 0) {
            start = oldestHot;
        } else if (!m.isEmpty()) {
            start = m.logStartOffset();
        } else {
            start = Math.max(m.logStartOffset(), oldestHot);
        }
        return new PartitionTiers(start, m.isEmpty() ? start : m.coldEnd(), m.totalBytes(), m.segments().size());
    }

    /**
     * Deletes {@code <topic>/topic.json}, so no node restores the topic from the bucket any more. The first step of a
     * topic deletion, before the hot data goes: if the store is down the deletion fails having changed nothing.
     *
     * @throws ObjectStoreUnavailableException if the store cannot be reached
     */
    public void deleteTopicDescriptor(String topic) {
        store.delete(BucketLayout.topicMetadata(topic));
    }

    /**
     * Removes all of a topic's objects ({@code <topic>/} entirely), descriptor first. Call after the hot metadata is
     * gone, so no tiering pass picks the topic up again. Waits for a running pass on the topic to finish. Objects
     * left by a failed call are removed by repeating it, or by the tierer when a topic of that name is created
     * again (it finds no descriptor, so nothing under the prefix can be live).
     *
     * @throws ObjectStoreUnavailableException if the store cannot be reached; repeat the call
     */
    public int deleteTopic(String topic) {
        Lock lock = guards.of(topic).writeLock();
        lock.lock();
        try {
            deleteTopicDescriptor(topic);
            List<ObjectKey> keys = store.listAll(BucketLayout.topicPrefix(topic)).map(ObjectMetadata::key).toList();
            if (!keys.isEmpty()) {
                store.deleteAll(keys);
            }
            manifests.forgetTopic(topic);
            tierer.forgetTopic(topic);
            LOG.info("topic {}: deleted {} objects from the cold tier", topic, keys.size());
            return keys.size();
        } finally {
            lock.unlock();
        }
    }

    public Path dataDir() {
        return dataDir;
    }

    /** Stops the fetch threads and empties the chunk cache; does not close the store. */
    @Override
    public void close() {
        manifestRefresher.shutdownNow();
        fetchers.shutdownNow();
        try {
            fetchers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        cache.close();
    }

    private static ThreadFactory daemonThreads(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
