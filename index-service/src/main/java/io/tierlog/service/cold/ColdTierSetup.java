package io.tierlog.service.cold;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tierlog.log.compaction.CompactionStats;
import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;
import io.tierlog.objectstore.s3.S3ObjectStore;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.tiering.ColdCompactionStats;
import io.tierlog.tiering.SegmentEvictionListener;
import io.tierlog.tiering.StoreRequests;
import io.tierlog.tiering.TieredStorage;
import io.tierlog.tiering.TieringConfig;
import io.tierlog.tiering.TieringStats;
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
    TieredStorage tieredStorage(TierlogConfig config, ObjectStore store, Clock clock, MeterRegistry registry,
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
        bindMetrics(storage.stats(), registry);
        bindCompactionMetrics(storage.compactionStats(), registry);
        bindColdCompactionMetrics(storage.coldCompactionStats(), registry);
        return storage;
    }

    void closeTieredStorage(@Disposes TieredStorage storage) {
        storage.close();
    }

    @Produces
    @Singleton
    ColdTier coldTier(TieredStorage storage, MeterRegistry registry) {
        return new ColdTier(storage, registry);
    }

    private static void bindMetrics(TieringStats s, MeterRegistry registry) {
        Gauge.builder("tierlog_tiering_pending_segments", s, TieringStats::pendingSegments)
                .description("Sealed hot segments not yet committed to the cold tier").register(registry);
        Gauge.builder("tierlog_tiering_pending_bytes", s, TieringStats::pendingBytes)
                .description("Bytes of sealed hot segments not yet committed to the cold tier").register(registry);
        Gauge.builder("tierlog_tiering_backlog_exceeded", s, x -> x.backlogExceeded() ? 1 : 0)
                .description("1 while pending bytes exceed tierlog.tiering.max-pending-bytes").register(registry);
        Gauge.builder("tierlog_cold_store_available", s, x -> x.storeAvailable() ? 1 : 0)
                .description("0 while the tierer finds the object store unavailable").register(registry);
        FunctionCounter.builder("tierlog_tiering_upload_errors", s, TieringStats::uploadErrors)
                .description("Failed tiering attempts (uploads or commits)").register(registry);
        FunctionCounter.builder("tierlog_tiering_uploaded_segments", s, TieringStats::segmentsUploaded)
                .register(registry);
        FunctionCounter.builder("tierlog_tiering_uploaded_bytes", s, TieringStats::bytesUploaded).register(registry);
        FunctionCounter.builder("tierlog_cold_cache_hits", s, TieringStats::cacheHits)
                .description("Cold chunk reads served from the on-disk cache").register(registry);
        FunctionCounter.builder("tierlog_cold_cache_misses", s, TieringStats::cacheMisses)
                .description("Cold chunk reads that needed a ranged GET").register(registry);
        FunctionCounter.builder("tierlog_cold_cache_admissions_deferred", s, TieringStats::cacheAdmissionsDeferred)
                .description("Fetched chunks not written to the on-disk cache on their first fetch (a scan's)")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_cache_writes_dropped", s, TieringStats::cacheWritesDropped)
                .description("Fetched chunks not written to the on-disk cache because its disk writes were behind")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_range_gets", s, TieringStats::rangeGets).register(registry);
        FunctionCounter.builder("tierlog_cold_read_ahead_unread_released", s, TieringStats::readAheadUnreadReleased)
                .description("Chunks fetched ahead of a cold reader and released unread after 60 s (reader gone)")
                .register(registry);
        FunctionCounter.builder("tierlog_retention_hot_segments_evicted", s, TieringStats::hotSegmentsEvicted)
                .register(registry);
        FunctionCounter.builder("tierlog_retention_cold_segments_deleted", s, TieringStats::coldSegmentsDeleted)
                .register(registry);
        FunctionCounter.builder("tierlog_tiering_orphans_deleted", s, TieringStats::orphansDeleted)
                .register(registry);
    }

    private static void bindCompactionMetrics(CompactionStats s, MeterRegistry registry) {
        Gauge.builder("tierlog_compaction_max_dirty_ratio", s, CompactionStats::maxDirtyRatio)
                .description("Largest dirty/cleanable bytes ratio of a compacted partition in the last pass")
                .register(registry);
        FunctionCounter.builder("tierlog_compaction_cleaned_bytes", s, CompactionStats::bytesCleaned)
                .description("Bytes of hot segments read by the cleaner to compact them").register(registry);
        FunctionCounter.builder("tierlog_compaction_removed_bytes", s, CompactionStats::bytesRemoved)
                .description("Bytes compaction removed from hot segments").register(registry);
        FunctionCounter.builder("tierlog_compaction_rewritten_segments", s, CompactionStats::segmentsRewritten)
                .register(registry);
        FunctionCounter.builder("tierlog_compaction_passes", s, CompactionStats::passes).register(registry);
        FunctionCounter.builder("tierlog_compaction_pass_seconds", s, CompactionStats::passSeconds)
                .description("Total time of compaction passes (divide by tierlog_compaction_passes for time per pass)")
                .register(registry);
    }

    private static void bindColdCompactionMetrics(ColdCompactionStats s, MeterRegistry registry) {
        Gauge.builder("tierlog_cold_compaction_max_dirty_ratio", s, ColdCompactionStats::maxDirtyRatio)
                .description("Largest dirty/cleanable bytes ratio of a compacted partition's cold tier in the last pass")
                .register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_cleaned_bytes", s, ColdCompactionStats::bytesRead)
                .description("Bytes of cold segments downloaded and filtered by the cold cleaner").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_written_bytes", s, ColdCompactionStats::bytesWritten)
                .description("Bytes of compacted objects the cold cleaner uploaded").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_replaced_segments", s, ColdCompactionStats::segmentsReplaced)
                .register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_retired_deleted", s, ColdCompactionStats::retiredDeleted)
                .description("Replaced cold objects deleted after the orphan grace").register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_passes", s, ColdCompactionStats::passes).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_pass_seconds", s, ColdCompactionStats::passSeconds)
                .description("Total time of cold compaction passes (divide by tierlog_cold_compaction_passes)")
                .register(registry);
        StoreRequests r = s.requests();
        String requests = "Object-store requests of the cold cleaner (an upload counts once even when multipart)";
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::gets).tag("kind", "get")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::puts).tag("kind", "put")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::lists).tag("kind", "list")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::deletes).tag("kind", "delete")
                .description(requests).register(registry);
        FunctionCounter.builder("tierlog_cold_compaction_requests", r, StoreRequests::heads).tag("kind", "head")
                .description(requests).register(registry);
    }
}
