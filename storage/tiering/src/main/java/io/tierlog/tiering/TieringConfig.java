package io.tierlog.tiering;

import java.time.Duration;

/**
 * The knobs of the cold tier. Immutable; validated at construction.
 *
 * @param maxPendingBytes    hot bytes in sealed-but-not-uploaded segments above which the backlog is reported
 *                           (metric, readiness detail, WARN). Nothing is deleted and produce keeps working: the
 *                           hot segments are simply kept until S3 takes them ({@code tierlog.tiering.max-pending-bytes})
 * @param orphanGrace        how old an unreferenced object must be before the orphan collector deletes it; must be
 *                           far longer than one upload-and-commit takes
 * @param keepManifestVersions how many manifest versions to keep per partition
 * @param indexIntervalBytes bytes between sidecar entries
 * @param chunkBytes         size of a ranged GET and of a cache entry
 * @param cacheBytes         bound of the on-disk chunk cache
 * @param readAheadChunks    read-ahead depth of a sequential cold reader: twice this many chunks are requested
 *                           ahead of it (at most {@code fetchThreads} of them at once), and about as many chunks
 *                           are held in memory per node ({@code tierlog.tiering.read-ahead-chunks})
 * @param fetchThreads       GETs in flight at most (the read-ahead executor's size)
 * @param backoffBase        first retry delay after the store was unavailable
 * @param backoffCap         largest retry delay
 */
public record TieringConfig(long maxPendingBytes, Duration orphanGrace, int keepManifestVersions,
                            int indexIntervalBytes, int chunkBytes, long cacheBytes, int readAheadChunks,
                            int fetchThreads, Duration backoffBase, Duration backoffCap) {

    public static final TieringConfig DEFAULTS = new TieringConfig(
            10L * 1024 * 1024 * 1024, Duration.ofHours(1), 10, 64 * 1024, 1024 * 1024, 512L * 1024 * 1024,
            8, 8, Duration.ofMillis(200), Duration.ofSeconds(30));

    public TieringConfig {
        if (maxPendingBytes < 0 || keepManifestVersions < 1 || indexIntervalBytes < 1 || chunkBytes < 4096
                || cacheBytes < chunkBytes || readAheadChunks < 0 || fetchThreads < 1) {
            throw new IllegalArgumentException("invalid tiering config: " + this);
        }
        if (orphanGrace.isNegative() || backoffBase.isNegative() || backoffCap.compareTo(backoffBase) < 0) {
            throw new IllegalArgumentException("invalid tiering durations: " + this);
        }
    }

    public TieringConfig withChunkBytes(int bytes) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, bytes,
                Math.max(cacheBytes, bytes), readAheadChunks, fetchThreads, backoffBase, backoffCap);
    }

    public TieringConfig withReadAhead(int chunks, int threads) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, chunks, threads, backoffBase, backoffCap);
    }

    public TieringConfig withMaxPendingBytes(long bytes) {
        return new TieringConfig(bytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, readAheadChunks, fetchThreads, backoffBase, backoffCap);
    }

    public TieringConfig withCacheBytes(long bytes) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                bytes, readAheadChunks, fetchThreads, backoffBase, backoffCap);
    }

    public TieringConfig withOrphanGrace(Duration grace) {
        return new TieringConfig(maxPendingBytes, grace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, readAheadChunks, fetchThreads, backoffBase, backoffCap);
    }
}
