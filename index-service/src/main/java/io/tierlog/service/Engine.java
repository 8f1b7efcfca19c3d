package io.tierlog.service;

import io.tierlog.ingest.IngestConfig;
import io.tierlog.ingest.IngestService;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.HotTier;
import io.tierlog.service.read.PartitionReads;
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
    IngestService ingest(TierlogConfig config, Clock clock) {
        createDirectory(config.dataDir());
        LOG.infof("hot volume %s, fsync=%s, index %s", config.dataDir().toAbsolutePath(), config.fsync(),
                config.indexDir().toAbsolutePath());
        return new IngestService(new IngestConfig(config.dataDir(), FsyncPolicy.parse(config.fsync()),
                config.fsyncInterval(), config.maxRequestBytes()), clock, new SecureRandom().nextInt());
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
    HotTier hotTier(TierlogConfig config) {
        createDirectory(config.indexDir());
        return new HotTier(config.dataDir(), config.indexDir());
    }

    void closeHotTier(@Disposes HotTier hot) {
        hot.close();
    }

    @Produces
    @Singleton
    PartitionReads reads(HotTier hot, ColdTier cold) {
        return new PartitionReads(hot, cold);
    }

    @Produces
    @Singleton
    AppendWatcher watcher(PartitionReads reads, ServiceThreads threads, TierlogConfig config) {
        return new AppendWatcher(reads::highWatermark, threads.timers(), config.fetch().tailPollInterval());
    }

    void closeWatcher(@Disposes AppendWatcher watcher) {
        watcher.close();
    }

    private static void createDirectory(java.nio.file.Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir.toAbsolutePath(), e);
        }
    }
}
