package io.tierlog.service.read;

import io.tierlog.log.TopicPartition;
import io.tierlog.service.ServiceThreads;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the hot index up with this process's own appends, as Kafka's broker keeps its offset index up on append:
 * once an append is acknowledged, the partition's index catches up ({@link HotTier#end}) on the indexing thread, so
 * the first fetch of the new records finds them indexed instead of walking and CRC-checking everything appended
 * since the last catch-up inside its own latency (ADR 0044). Appends by other processes (ingest functions) are still
 * indexed by the reads that need them.
 *
 * <p>At most one catch-up per partition is queued: the partition leaves the queued set just before its catch-up
 * starts, so an append after that queues the next one, and an append before it is covered by it. A catch-up starts
 * {@link #DELAY} after the append that queued it, so the appends of that time share it: each catch-up lists the
 * partition, checks where it resumes and commits to RocksDB, which per append of a busy partition cost as much CPU as
 * the produce path itself. A read in that time walks the few batches not yet indexed, as it does after another
 * process's appends. Thread-safe.
 */
@Singleton
public class AppendIndexing {
    private static final Logger LOG = Logger.getLogger(AppendIndexing.class);

    /** How long a catch-up waits for more appends to the partition before it starts. */
    static final Duration DELAY = Duration.ofMillis(20);

    private final HotTier hot;
    private final ScheduledExecutorService indexing;
    private final long delayNanos;
    private final Set<TopicPartition> queued = ConcurrentHashMap.newKeySet();

    @Inject
    public AppendIndexing(HotTier hot, ServiceThreads threads) {
        this(hot, threads, DELAY);
    }

    AppendIndexing(HotTier hot, ServiceThreads threads, Duration delay) {
        this.hot = hot;
        this.indexing = threads.indexing();
        this.delayNanos = delay.toNanos();
    }

    /**
     * Ends reads' reuse of {@code tp}'s end (an acknowledged append is in every later read) and queues a catch-up of
     * its index unless one is queued already.
     */
    public void appended(TopicPartition tp) {
        hot.appendedHere(tp);
        if (!queued.add(tp)) {
            return;
        }
        indexing.schedule(() -> {
            queued.remove(tp);
            try {
                hot.end(tp);
            } catch (RuntimeException e) {
                // The next read catches up and reports what is wrong (a corrupt batch, a deleted topic).
                LOG.debugf(e, "%s: index catch-up after an append failed", tp);
            }
        }, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** Whether a catch-up of {@code tp} is queued and not yet started (for tests). */
    boolean isQueued(TopicPartition tp) {
        return queued.contains(tp);
    }
}
