package io.tierlog.service.read;

import io.tierlog.log.TopicPartition;
import io.tierlog.service.ServiceThreads;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * Keeps the hot index up with this process's own appends, as Kafka's broker keeps its offset index up on append:
 * once an append is acknowledged, the partition's index catches up ({@link HotTier#end}) on the indexing thread, so
 * the first fetch of the new records finds them indexed instead of walking and CRC-checking everything appended
 * since the last catch-up inside its own latency (ADR 0044). Appends by other processes (ingest functions) are still
 * indexed by the reads that need them.
 *
 * <p>At most one catch-up per partition is queued: the partition leaves the queued set just before its catch-up
 * starts, so an append after that queues the next one, and an append before it is covered by it. Thread-safe.
 */
@Singleton
public class AppendIndexing {
    private static final Logger LOG = Logger.getLogger(AppendIndexing.class);

    private final HotTier hot;
    private final ExecutorService indexing;
    private final Set<TopicPartition> queued = ConcurrentHashMap.newKeySet();

    public AppendIndexing(HotTier hot, ServiceThreads threads) {
        this.hot = hot;
        this.indexing = threads.indexing();
    }

    /** Queues a catch-up of {@code tp}'s index unless one is queued already. */
    public void appended(TopicPartition tp) {
        if (!queued.add(tp)) {
            return;
        }
        indexing.execute(() -> {
            queued.remove(tp);
            try {
                hot.end(tp);
            } catch (RuntimeException e) {
                // The next read catches up and reports what is wrong (a corrupt batch, a deleted topic).
                LOG.debugf(e, "%s: index catch-up after an append failed", tp);
            }
        });
    }

    /** Whether a catch-up of {@code tp} is queued and not yet started (for tests). */
    boolean isQueued(TopicPartition tp) {
        return queued.contains(tp);
    }
}
