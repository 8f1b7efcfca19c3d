package io.tierlog.service;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The service's own threads, apart from Quarkus' event loops and worker pool:
 * <ul>
 *   <li>{@link #timers()}: one thread for deadlines, the tail poller, heartbeats and gauge refreshes. Tasks on
 *       it must be short; anything that reads files hands off to {@link #reads()}.</li>
 *   <li>{@link #reads()}: bounded threads that run file reads for long-poll continuations and streams, so the
 *       event loop never blocks and a waiting reader holds no thread. The queue is unbounded but holds only small
 *       tasks (one read step each).</li>
 *   <li>{@link #indexing()}: one thread that catches the hot index up with this process's appends, each catch-up
 *       a little after the append that asked for it ({@link io.tierlog.service.read.AppendIndexing}); one, so that
 *       indexing never takes more than a core from produces and fetches.</li>
 * </ul>
 *
 * <p>Stopping ({@link #stop}, idempotent, also called by {@link Engine} before it closes the index): new tasks are
 * refused, the read steps already queued or running get up to {@link #STOP_GRACE} to finish (each is one bounded
 * read), then whatever is left is interrupted and given {@link #STOP_GRACE} once more. A task offered after stop is
 * dropped with a debug line instead of throwing {@link java.util.concurrent.RejectedExecutionException} into an
 * event loop or a future chain: it belongs to a connection the stopping HTTP server is closing anyway. When stop
 * returns normally, no read of ours is still touching the index, so it may be closed.
 */
@Singleton
public class ServiceThreads {
    private static final Logger LOG = Logger.getLogger(ServiceThreads.class);
    /** Per phase of {@link #stop}: far longer than one read step, short enough for a prompt exit. */
    static final Duration STOP_GRACE = Duration.ofSeconds(5);

    private final ScheduledThreadPoolExecutor timers;
    private final ThreadPoolExecutor reads;
    private final ScheduledThreadPoolExecutor indexing;

    public ServiceThreads() {
        timers = new ScheduledThreadPoolExecutor(1, named("tierlog-timer"), dropWhenStopped("timer"));
        timers.setRemoveOnCancelPolicy(true);
        // Pending deadlines (long-poll timeouts, heartbeats, the tail poller) are not work to finish at shutdown.
        timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timers.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        int threads = Math.max(4, Runtime.getRuntime().availableProcessors() * 2);
        reads = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                named("tierlog-read"), dropWhenStopped("read"));
        indexing = new ScheduledThreadPoolExecutor(1, named("tierlog-indexer"), dropWhenStopped("indexing"));
        // A catch-up waiting out its delay is not owed at shutdown: the index is derived, the next read catches up.
        indexing.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    public ScheduledExecutorService timers() {
        return timers;
    }

    public ExecutorService reads() {
        return reads;
    }

    public ScheduledExecutorService indexing() {
        return indexing;
    }

    /**
     * Stops the pools: see the class comment. Returns once the read and indexing pools have terminated, or after at
     * most twice {@link #STOP_GRACE} for each; logs a warning naming the pool if threads are still running then.
     */
    @PreDestroy
    public synchronized void stop() {
        if (reads.isTerminated() && timers.isTerminated() && indexing.isTerminated()) {
            return;
        }
        timers.shutdown();
        reads.shutdown();
        indexing.shutdown();
        try {
            awaitOrInterrupt(reads, "read");
            awaitOrInterrupt(indexing, "indexing");
            awaitOrInterrupt(timers, "timer");
        } catch (InterruptedException e) {
            reads.shutdownNow();
            indexing.shutdownNow();
            timers.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitOrInterrupt(ThreadPoolExecutor pool, String name) throws InterruptedException {
        if (pool.awaitTermination(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
            return;
        }
        int dropped = pool.shutdownNow().size();
        if (!pool.awaitTermination(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warnf("stopping: %d %s threads still busy after %d s (interrupted); closing the index anyway",
                    pool.getActiveCount(), name, 2 * STOP_GRACE.toSeconds());
        } else if (dropped > 0) {
            LOG.infof("stopping: %d queued %s tasks dropped after %d s", dropped, name, STOP_GRACE.toSeconds());
        }
    }

    private static RejectedExecutionHandler dropWhenStopped(String pool) {
        return (task, executor) -> {
            if (!executor.isShutdown()) {
                // Unreachable with an unbounded queue; kept so a future bound cannot silently lose work.
                throw new java.util.concurrent.RejectedExecutionException(pool + " pool refused a task");
            }
            LOG.debugf("stopping: %s task dropped", pool);
        };
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
