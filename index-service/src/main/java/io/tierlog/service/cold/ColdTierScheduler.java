package io.tierlog.service.cold;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.tiering.TieredStorage;
import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs the cold tier's background work on one dedicated thread (uploads must never occupy the read pool or the
 * timer thread): on start, restores topics and hot start offsets from the bucket (a fresh node), then a tiering
 * pass every {@code tierlog.tiering.interval}, retention and compaction every {@code tierlog.retention.check-interval} and orphan
 * collection every {@code tierlog.tiering.orphan-check-interval}. A failing pass is logged and the schedule goes
 * on (an exception would cancel a periodic task).
 */
@Singleton
public class ColdTierScheduler {
    private static final Logger LOG = Logger.getLogger(ColdTierScheduler.class);

    /** How long stopping waits for a running pass to notice its interrupt. */
    static final Duration STOP_GRACE = Duration.ofSeconds(5);

    private final TieredStorage storage;
    private final TierlogConfig config;
    private ScheduledExecutorService executor;

    public ColdTierScheduler(TieredStorage storage, TierlogConfig config) {
        this.storage = storage;
        this.config = config;
    }

    /** Early (before the HTTP server accepts requests), so a fresh node serves restored topics from the start. */
    void start(@Observes @Priority(10) StartupEvent event) {
        try {
            List<String> restored = storage.restoreFromBucket();
            if (!restored.isEmpty()) {
                LOG.infof("restored %d topics from the cold tier: %s", restored.size(), restored);
            }
        } catch (RuntimeException e) {
            // A node must come up with S3 down too; hot data is served and restore is retried at the next start.
            LOG.warnf(e, "could not restore topics from the cold tier; serving the hot volume only");
        }
        if (!config.tiering().enabled()) {
            LOG.info("tiering disabled (tierlog.tiering.enabled=false)");
            return;
        }
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "tierlog-tierer");
            t.setDaemon(true);
            return t;
        });
        schedule("tiering", config.tiering().interval(), storage::runTieringPass);
        schedule("retention", config.retention().checkInterval(), storage::runRetentionPass);
        schedule("compaction", config.retention().checkInterval(), storage::runCompactionPass);
        schedule("orphan collection", config.tiering().orphanCheckInterval(), storage::runOrphanCollection);
    }

    private void schedule(String what, Duration every, Runnable task) {
        long ms = Math.max(1, every.toMillis());
        executor.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.warnf(e, "%s pass failed; retrying in %d ms", what, ms);
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Interrupts a running pass and waits up to {@link #STOP_GRACE} for it to end, so the object store and the
     * tiered storage are not closed under an upload. A pass that ignores the interrupt is logged and left: the
     * thread is a daemon, and an upload cut short is uploaded again by a later pass under a new upload id while the
     * orphan collector removes the partial objects (docs/adr/0004-tiered-storage.md, "Crash at any step").
     */
    void stop(@Observes ShutdownEvent event) {
        if (executor == null) {
            return;
        }
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warnf("stopping: a cold tier pass is still running after %d s; closing the cold tier anyway",
                        STOP_GRACE.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
