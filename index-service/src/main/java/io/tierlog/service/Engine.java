package io.tierlog.service;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.ProduceAdmission;
import io.tierlog.log.AppendJournal;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.LogStartMarks;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.api.DrainRoute;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import io.tierlog.service.metrics.ServiceMetrics;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.HotTier;
import io.tierlog.service.read.PartitionReads;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringStats;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.time.Clock;

/**
 * Builds the engine's parts once, from {@link TierlogConfig}: the produce path ({@link IngestService}, the
 * code the Lambda runs), the tier-agnostic read path, the append watcher and the threads they use.
 *
 * <p>Stopping (SIGTERM), in this order, within {@code tierlog.shutdown.timeout} (Quarkus' graceful shutdown,
 * {@code quarkus.shutdown.timeout}, is set to it). At once, from a JVM shutdown hook of ours that runs beside
 * Quarkus' own: new requests are answered 503 {@code service-stopping} ({@link DrainRoute}), and the append watcher
 * releases every waiter ({@link AppendWatcher#close}), so each waiting long-poll is answered 200 with what is there
 * (usually nothing) and each stream ends after a {@code retry:} line. Meanwhile Quarkus waits for the requests in
 * flight: produces finish their appends and are answered.
 * Only then does it close the HTTP server and fire {@link ShutdownEvent}, on which the watcher is closed again (a
 * no-op, or the first close when stopped otherwise than by a signal) and {@link ServiceThreads#stop} lets the read
 * steps already queued finish, within a bound. Then the partition writers are closed (forcing what is unsynced) and
 * the RocksDB index: the {@link HotTier} disposer stops the threads again first (a no-op by then), as CDI does not
 * order the destruction of singletons. ServiceShutdownIT shows the whole sequence on the packaged service.
 */
@Singleton
public class Engine {
    private static final Logger LOG = Logger.getLogger(Engine.class);

    @Produces
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }

    @Produces
    @Singleton
    IngestService ingest(TierlogConfig config, Clock clock, ServiceMetrics metrics, ProduceAdmission admission,
                         AppendJournal journal) {
        createDirectory(config.dataDir());
        LOG.infof("hot volume %s, fsync=%s, index %s", config.dataDir().toAbsolutePath(), config.fsync(),
                config.indexDir().toAbsolutePath());
        return new IngestService(new IngestConfig(config.dataDir(), FsyncPolicy.parse(config.fsync()),
                config.fsyncInterval(), config.maxRequestBytes(), config.producerIdExpiration()), clock,
                new SecureRandom()::nextInt, metrics.syncMeters(), admission, journal);
    }

    /** This process's appends, handed from its writers to its indexer so that it does not read them back. */
    @Produces
    @Singleton
    AppendJournal appendJournal() {
        return new AppendJournal();
    }

    /** Backpressure of the hot tier: the volume's fill and the upload backlog (503 {@code hot-tier-full}). */
    @Produces
    @Singleton
    ProduceAdmission admission(TierlogConfig config, Clock clock, TieredStorage cold) {
        TieringStats stats = cold.stats();
        return new ProduceAdmission(config.dataDir(), config.hot().maxUsedRatio(), stats::backlogExceeded,
                ProduceAdmission.DEFAULT_RETRY_AFTER, clock);
    }

    void closeIngest(@Disposes IngestService ingest) {
        ingest.close();
    }

    @Produces
    @Singleton
    TopicStore topics(IngestService ingest) {
        return ingest.topics();
    }

    @Produces
    @Singleton
    HotTier hotTier(TierlogConfig config, Clock clock, AppendJournal journal) {
        createDirectory(config.indexDir());
        return new HotTier(config.dataDir(), config.indexDir(), clock, journal);
    }

    void closeHotTier(@Disposes HotTier hot, ServiceThreads threads) {
        // No read of ours may be inside RocksDB when it closes; stop() is idempotent and bounded.
        threads.stop();
        hot.close();
    }

    /**
     * What the cold tier does when it evicts hot segments: their index entries are dropped at once (reads below the
     * hot start go to the cold tier anyway). Made here, beside the hot tier, so that cold/ needs nothing of read/.
     */
    @Produces
    @Singleton
    SegmentEvictionListener dropIndexEntries(HotTier hot) {
        return (tp, segmentBase, nextBase) -> {
            try {
                hot.segmentsEvicted(tp, nextBase);
            } catch (RuntimeException e) {
                LOG.warnf(e, "%s: could not drop index entries below %d; they are dropped on the next eviction", tp,
                        nextBase);
            }
        };
    }

    @Produces
    @Singleton
    PooledDirectMemory directMemory(Meters meters) {
        PooledDirectMemory memory = new PooledDirectMemory();
        meters.directMemory(memory, PooledDirectMemory::heldBytes);
        return memory;
    }

    @Produces
    @Singleton
    PartitionReads reads(HotTier hot, ColdTier cold, PooledDirectMemory memory, TierlogConfig config, Clock clock) {
        return new PartitionReads(hot, cold, memory, new LogStartMarks(config.dataDir(), clock));
    }

    @Produces
    @Singleton
    AppendWatcher watcher(PartitionReads reads, ServiceThreads threads, TierlogConfig config) {
        return new AppendWatcher(reads::highWatermark, threads.timers(), config.fetch().tailPollInterval());
    }

    void closeWatcher(@Disposes AppendWatcher watcher) {
        watcher.close();
    }

    /**
     * Registers the first step of stopping (see the class comment) as a JVM shutdown hook: Quarkus runs its graceful
     * shutdown from its own hook before any CDI event, and that shutdown waits for every request in flight, waiting
     * long-polls and streams included, so they must be released from outside it. Not in tests and dev mode, whose
     * applications stop without a signal, many times per JVM.
     */
    void drainOnSignal(@Observes StartupEvent event, AppendWatcher watcher, DrainRoute drain) {
        if (LaunchMode.current() == LaunchMode.NORMAL) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                LOG.info("stopping: new requests refused, long-polls and streams released, requests in flight answered");
                drain.drain();
                watcher.close();
            }, "tierlog-drain"));
        }
    }

    /** The second step of stopping; see the class comment. */
    void stopping(@Observes ShutdownEvent event, AppendWatcher watcher, ServiceThreads threads) {
        long started = System.nanoTime();
        watcher.close();
        threads.stop();
        LOG.infof("stopping: waiters released and read threads stopped in %d ms",
                (System.nanoTime() - started) / 1_000_000);
    }

    private static void createDirectory(java.nio.file.Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir.toAbsolutePath(), e);
        }
    }
}
