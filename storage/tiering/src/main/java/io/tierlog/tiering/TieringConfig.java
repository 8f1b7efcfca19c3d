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
 * @param chunkBytes         size of a cache entry, and of the ranged GET of a point read (a read at a random
 *                           offset) or of a sequential reader's first chunk
 * @param cacheBytes         bound of the on-disk chunk cache
 * @param readAheadBytes     bytes a sequential cold reader keeps requested ahead of itself, once its access is
 *                           found sequential (0: no read-ahead) ({@code tierlog.tiering.read-ahead-bytes})
 * @param fetchThreads       GETs in flight at most (the read-ahead executor's size)
 * @param backoffBase        first retry delay after the store was unavailable
 * @param backoffCap         largest retry delay
 * @param rangeBytes         the largest ranged GET: a sequential reader's GETs grow from one chunk to this
 *                           ({@code tierlog.tiering.range-bytes}); rounded down to whole chunks
 * @param readAheadMemoryBytes bound of the fetched chunks held in memory per node, for all readers together: half
 *                           for chunks requested and not read yet (GETs in flight, landed chunks kept until read),
 *                           half for chunks read recently ({@code tierlog.tiering.read-ahead-memory-bytes})
 */
public record TieringConfig(long maxPendingBytes, Duration orphanGrace, int keepManifestVersions,
                            int indexIntervalBytes, int chunkBytes, long cacheBytes, long readAheadBytes,
                            int fetchThreads, Duration backoffBase, Duration backoffCap, int rangeBytes,
                            long readAheadMemoryBytes) {

    public static final TieringConfig DEFAULTS = new TieringConfig(
            10L * 1024 * 1024 * 1024, Duration.ofHours(1), 10, 64 * 1024, 1024 * 1024, 512L * 1024 * 1024,
            32L * 1024 * 1024, 8, Duration.ofMillis(200), Duration.ofSeconds(30), 8 * 1024 * 1024,
            128L * 1024 * 1024);

    public TieringConfig {
        if (maxPendingBytes < 0 || keepManifestVersions < 1 || indexIntervalBytes < 1 || chunkBytes < 4096
                || cacheBytes < chunkBytes || readAheadBytes < 0 || fetchThreads < 1 || rangeBytes < chunkBytes
                || readAheadMemoryBytes < 2L * rangeBytes) {
            throw new IllegalArgumentException("invalid tiering config: " + this);
        }
        if (orphanGrace.isNegative() || backoffBase.isNegative() || backoffCap.compareTo(backoffBase) < 0) {
            throw new IllegalArgumentException("invalid tiering durations: " + this);
        }
    }

    public TieringConfig withChunkBytes(int bytes) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, bytes,
                Math.max(cacheBytes, bytes), readAheadBytes, fetchThreads, backoffBase, backoffCap,
                Math.max(rangeBytes, bytes), Math.max(readAheadMemoryBytes, 2L * Math.max(rangeBytes, bytes)));
    }

    /** Read-ahead of {@code bytes} ahead of a sequential reader, with {@code threads} GETs in flight at most. */
    public TieringConfig withReadAhead(long bytes, int threads) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, bytes, threads, backoffBase, backoffCap, rangeBytes, readAheadMemoryBytes);
    }

    /** Ranged GETs of at most {@code bytes}, and {@code memoryBytes} of fetched chunks in memory at most. */
    public TieringConfig withRanges(int bytes, long memoryBytes) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, readAheadBytes, fetchThreads, backoffBase, backoffCap, bytes, memoryBytes);
    }

    public TieringConfig withMaxPendingBytes(long bytes) {
        return new TieringConfig(bytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, readAheadBytes, fetchThreads, backoffBase, backoffCap, rangeBytes, readAheadMemoryBytes);
    }

    public TieringConfig withCacheBytes(long bytes) {
        return new TieringConfig(maxPendingBytes, orphanGrace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                bytes, readAheadBytes, fetchThreads, backoffBase, backoffCap, rangeBytes, readAheadMemoryBytes);
    }

    public TieringConfig withOrphanGrace(Duration grace) {
        return new TieringConfig(maxPendingBytes, grace, keepManifestVersions, indexIntervalBytes, chunkBytes,
                cacheBytes, readAheadBytes, fetchThreads, backoffBase, backoffCap, rangeBytes, readAheadMemoryBytes);
    }
}
