package io.tierlog.service;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
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
 * </ul>
 */
@Singleton
public class ServiceThreads {
    private final ScheduledThreadPoolExecutor timers;
    private final ThreadPoolExecutor reads;

    public ServiceThreads() {
        timers = new ScheduledThreadPoolExecutor(1, named("tierlog-timer"));
        timers.setRemoveOnCancelPolicy(true);
        int threads = Math.max(4, Runtime.getRuntime().availableProcessors() * 2);
        reads = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                named("tierlog-read"));
    }

    public ScheduledExecutorService timers() {
        return timers;
    }

    public ExecutorService reads() {
        return reads;
    }

    @PreDestroy
    void stop() {
        timers.shutdownNow();
        reads.shutdownNow();
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
