package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.compaction.CleanResult;
import io.tierlog.log.compaction.CompactionStats;
import io.tierlog.log.compaction.HotCleaner;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectStoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.util.concurrent.locks.Lock;

/**
 * One compaction pass over the hot tier: every partition of every topic whose {@code cleanup.policy} compacts is
 * cleaned by {@link HotCleaner}, bounded by the partition's cold end. Only segments already committed to the cold
 * tier are rewritten, so the tierer (which uploads the segments at and above the cold end, from a path it walked
 * first) never uploads a file swapped under it. Runs under the topic's read lock like retention, so a topic deletion
 * waits for it. A failure in one partition is logged and the pass goes on. Not reentrant: callers run passes from
 * one thread.
 */
final class HotCompactor {
    private static final Logger LOG = LoggerFactory.getLogger(HotCompactor.class);

    private final TopicStore topics;
    private final ManifestStore manifests;
    private final TopicGuards guards;
    private final HotCleaner cleaner;
    private final CompactionStats stats;

    HotCompactor(TopicStore topics, ManifestStore manifests, TopicGuards guards, HotCleaner cleaner,
                 CompactionStats stats) {
        this.topics = topics;
        this.manifests = manifests;
        this.guards = guards;
        this.cleaner = cleaner;
        this.stats = stats;
    }

    /** Returns how many partitions were cleaned. */
    int runOnce() {
        long start = System.nanoTime();
        double maxRatio = 0;
        int cleaned = 0;
        for (TopicMetadata topic : topics.list()) {
            if (!topic.config().compacts()) {
                continue;
            }
            Lock lock = guards.of(topic.name()).readLock();
            lock.lock();
            try {
                for (int p = 0; p < topic.partitions(); p++) {
                    TopicPartition tp = new TopicPartition(topic.name(), p);
                    try {
                        CleanResult r = cleaner.clean(tp, topic.config(), manifests.cachedUnlessNeverSealed(tp).coldEnd());
                        stats.partition(r);
                        maxRatio = Math.max(maxRatio, r.dirtyRatio());
                        cleaned += r.ran() ? 1 : 0;
                    } catch (CorruptLogException | UncheckedIOException | ObjectStoreException e) {
                        LOG.warn("{}: compaction failed, will retry next pass", tp, e);
                    }
                }
            } finally {
                lock.unlock();
            }
        }
        stats.pass(System.nanoTime() - start, maxRatio);
        return cleaned;
    }
}
