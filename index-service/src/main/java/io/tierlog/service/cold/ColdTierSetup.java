package io.tierlog.service.cold;

import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.metrics.Meters;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringConfig;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.s3.S3Client;

import java.security.SecureRandom;
import java.time.Clock;

/**
 * Builds the cold tier from configuration: the object store named by {@code tierlog.cold.store} ({@code filesystem}
 * under {@code tierlog.cold.filesystem.dir}, or {@code s3} through quarkus-amazon-s3's client with
 * {@code tierlog.cold.s3.bucket/prefix}), the {@link TieredStorage} over it with its chunk cache under
 * {@code <tierlog.index-dir>/cold-cache}, and the tiering metrics.
 */
@Singleton
public class ColdTierSetup {
    private static final Logger LOG = Logger.getLogger(ColdTierSetup.class);

    @Produces
    @Singleton
    ObjectStore coldStore(TierlogConfig config, Instance<S3Client> s3) {
        String kind = config.cold().store().trim().toLowerCase(java.util.Locale.ROOT);
        switch (kind) {
            case "filesystem" -> {
                LOG.infof("cold tier: filesystem store at %s", config.cold().filesystem().dir().toAbsolutePath());
                return new FilesystemObjectStore(config.cold().filesystem().dir());
            }
            case "s3" -> {
                String bucket = config.cold().s3().bucket().orElseThrow(() -> new IllegalStateException(
                        "tierlog.cold.store=s3 needs tierlog.cold.s3.bucket"));
                String prefix = config.cold().s3().prefix().orElse("");
                LOG.infof("cold tier: s3://%s/%s", bucket, prefix);
                return new S3ObjectStore(s3.get(), bucket, prefix);
            }
            default -> throw new IllegalStateException("tierlog.cold.store must be 'filesystem' or 's3', not '"
                    + config.cold().store() + "'");
        }
    }

    void closeColdStore(@Disposes ObjectStore store) {
        store.close();
    }

    @Produces
    @Singleton
    TieredStorage tieredStorage(TierlogConfig config, ObjectStore store, Clock clock, Meters meters,
                                SegmentEvictionListener dropIndexEntries) {
        TierlogConfig.Tiering t = config.tiering();
        long readAhead = t.readAheadChunks().map(chunks -> 2L * chunks * t.chunkBytes()).orElse(t.readAheadBytes());
        TieringConfig tiering = new TieringConfig(t.maxPendingBytes(), t.orphanGrace(),
                TieringConfig.DEFAULTS.keepManifestVersions(), TieringConfig.DEFAULTS.indexIntervalBytes(),
                t.chunkBytes(), t.cacheBytes(), readAhead, t.fetchThreads(),
                TieringConfig.DEFAULTS.backoffBase(), TieringConfig.DEFAULTS.backoffCap(),
                Math.max(t.rangeBytes(), t.chunkBytes()),
                Math.max(t.readAheadMemoryBytes(), 2L * Math.max(t.rangeBytes(), t.chunkBytes())));
        TieredStorage storage = new TieredStorage(config.dataDir(), config.indexDir().resolve("cold-cache"), store,
                tiering, clock, new SecureRandom(), dropIndexEntries);
        meters.tiering(storage.stats());
        meters.compaction(storage.compactionStats());
        meters.coldCompaction(storage.coldCompactionStats());
        return storage;
    }

    void closeTieredStorage(@Disposes TieredStorage storage) {
        storage.close();
    }

    @Produces
    @Singleton
    ColdTier coldTier(TieredStorage storage, Meters meters) {
        return new ColdTier(storage, meters);
    }
}
