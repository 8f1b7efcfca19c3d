package io.tierlog.service.read;

import io.tierlog.log.TopicPartition;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Wakes readers waiting for a partition to grow past an offset (long-poll fetches, SSE streams).
 *
 * <p>Two sources of wake-ups: {@link #appended} — called by this process's produce path, wakes waiters at once;
 * and a poller that re-reads the end of every partition someone waits on every {@code pollInterval}, which is how
 * appends by other processes (ingest functions on the shared volume) are seen. The poller runs only while
 * somebody waits, so an idle service does no I/O.
 *
 * <p>A waiter is completed with {@code true} once the end exceeds its offset, with {@code false} at its timeout,
 * and never blocks a thread while waiting. Thread-safe.
 *
 * <p>Shutdown: {@link #close} (called on SIGTERM, before the HTTP server stops taking requests) completes every
 * waiter with {@code false} at once, so no continuation is left waiting out its timeout: a long-poll is answered
 * with what is there, a stream ends ({@link #isClosed}). After close no wake-ups happen and nothing is scheduled on
 * the (possibly already stopped) scheduler, and a new waiter is completed with {@code false} at once, so that a
 * request that slipped in just before the server stopped accepting does not hold the graceful stop for its wait.
 */
public final class AppendWatcher implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AppendWatcher.class);

    private final ToLongFunction<TopicPartition> endOf;
    private final ScheduledExecutorService scheduler;
    private final Duration pollInterval;
    private final Map<TopicPartition, Set<Waiter>> waiters = new ConcurrentHashMap<>();
    private ScheduledFuture<?> poller;
    private volatile boolean closed;

    private record Waiter(long offset, CompletableFuture<Boolean> future) {
    }

    public AppendWatcher(ToLongFunction<TopicPartition> endOf, ScheduledExecutorService scheduler, Duration pollInterval) {
        this.endOf = endOf;
        this.scheduler = scheduler;
        this.pollInterval = pollInterval;
    }

    /**
     * Completes with {@code true} as soon as {@code tp}'s end is beyond {@code offset} (possibly at once),
     * or with {@code false} after {@code timeout}. Cancelling the future unregisters the waiter.
     */
    public CompletableFuture<Boolean> awaitBeyond(TopicPartition tp, long offset, Duration timeout) {
        if (closed) {
            return CompletableFuture.completedFuture(false);
        }
        CompletableFuture<Boolean> future = new CompletableFuture<>();
        // The JDK's own delayer thread, not the scheduler, so timeouts still fire while the service stops.
        future.completeOnTimeout(false, timeout.toMillis(), TimeUnit.MILLISECONDS);
        Waiter w = new Waiter(offset, future);
        waiters.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(w);
        future.whenComplete((r, e) -> remove(tp, w));
        if (closed) {
            // close() ran between the check above and the registration and may have missed this waiter.
            future.complete(false);
            return future;
        }
        try {
            ensurePolling();
            // An append that landed before we registered would otherwise wait for the next poll.
            scheduler.execute(() -> check(tp));
        } catch (RejectedExecutionException stopping) {
            // The scheduler stopped before close() (the service is stopping): no polling any more, so the waiter
            // ends at close() or at its timeout. Not completed here, or a stream would step again at once, in a loop.
            LOG.debugf("%s: scheduler stopped; waiter at offset %d ends at close or timeout", tp, offset);
        }
        return future;
    }

    /** This process appended to {@code tp}, which now ends at {@code end} (exclusive). */
    public void appended(TopicPartition tp, long end) {
        Set<Waiter> set = waiters.get(tp);
        if (set != null) {
            for (Waiter w : set) {
                if (end > w.offset) {
                    w.future.complete(true);
                }
            }
        }
    }

    private void remove(TopicPartition tp, Waiter w) {
        waiters.computeIfPresent(tp, (k, set) -> {
            set.remove(w);
            return set.isEmpty() ? null : set;
        });
    }

    private synchronized void ensurePolling() {
        if (closed) {
            return;
        }
        if (poller == null || poller.isDone()) {
            poller = scheduler.scheduleWithFixedDelay(this::pollAll, pollInterval.toMillis(), pollInterval.toMillis(),
                    TimeUnit.MILLISECONDS);
        }
    }

    private void pollAll() {
        for (TopicPartition tp : waiters.keySet()) {
            check(tp);
        }
        synchronized (this) {
            if (waiters.isEmpty() && poller != null) {
                poller.cancel(false);
                poller = null;
            }
        }
    }

    private void check(TopicPartition tp) {
        Set<Waiter> set = waiters.get(tp);
        if (set == null || set.isEmpty()) {
            return;
        }
        try {
            appended(tp, endOf.applyAsLong(tp));
        } catch (RuntimeException e) {
            // A deleted topic or a segment removed mid-scan: the waiters time out or their next read reports it.
            LOG.debugf(e, "%s: cannot read the end of the partition for waiters", tp);
        }
    }

    /** True once {@link #close} ran: the service is stopping, and readers should answer or end rather than wait. */
    public boolean isClosed() {
        return closed;
    }

    /** Number of partitions with waiters (for tests and metrics). */
    public int watchedPartitions() {
        return waiters.size();
    }

    /** Completes every waiter with {@code false} and stops polling; idempotent. See the class comment. */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (poller != null) {
                poller.cancel(false);
                poller = null;
            }
        }
        int woken = 0;
        for (Set<Waiter> set : waiters.values()) {
            for (Waiter w : set) {
                woken += w.future.complete(false) ? 1 : 0;
            }
        }
        waiters.clear();
        if (woken > 0) {
            LOG.infof("stopping: released %d waiting readers (long-polls and streams)", woken);
        }
    }
}
