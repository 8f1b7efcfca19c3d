package io.tierlog.tiering;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters and gauges of the cold tier, read by the service's metrics binder (Micrometer lives in the service,
 * not here). Thread-safe; all values are monotonic counters except the gauges named {@code pending*} and
 * {@link #backlogExceeded()}, which the tierer sets after each pass.
 */
public final class TieringStats {
    private final AtomicLong pendingSegments = new AtomicLong();
    private final AtomicLong pendingBytes = new AtomicLong();
    private volatile boolean backlogExceeded;
    private volatile boolean storeAvailable = true;
    private final LongAdder uploadErrors = new LongAdder();
    private final LongAdder segmentsUploaded = new LongAdder();
    private final LongAdder bytesUploaded = new LongAdder();
    private final LongAdder orphansDeleted = new LongAdder();
    private final LongAdder hotSegmentsEvicted = new LongAdder();
    private final LongAdder coldSegmentsDeleted = new LongAdder();
    private final LongAdder cacheHits = new LongAdder();
    private final LongAdder cacheMisses = new LongAdder();
    private final LongAdder cacheWritesDropped = new LongAdder();
    private final LongAdder cacheAdmissionsDeferred = new LongAdder();
    private final LongAdder rangeGets = new LongAdder();
    private final LongAdder rangeGetBytes = new LongAdder();
    private final LongAdder readAheadUnreadReleased = new LongAdder();

    /** Sealed hot segments not yet committed to the cold tier, as of the last tiering pass. */
    public long pendingSegments() {
        return pendingSegments.get();
    }

    public long pendingBytes() {
        return pendingBytes.get();
    }

    /** True while pending bytes exceed {@link TieringConfig#maxPendingBytes()}. */
    public boolean backlogExceeded() {
        return backlogExceeded;
    }

    /** False after the last store call of the tierer failed as unavailable, until one succeeds. */
    public boolean storeAvailable() {
        return storeAvailable;
    }

    public long uploadErrors() {
        return uploadErrors.sum();
    }

    public long segmentsUploaded() {
        return segmentsUploaded.sum();
    }

    public long bytesUploaded() {
        return bytesUploaded.sum();
    }

    public long orphansDeleted() {
        return orphansDeleted.sum();
    }

    public long hotSegmentsEvicted() {
        return hotSegmentsEvicted.sum();
    }

    public long coldSegmentsDeleted() {
        return coldSegmentsDeleted.sum();
    }

    public long cacheHits() {
        return cacheHits.sum();
    }

    public long cacheMisses() {
        return cacheMisses.sum();
    }

    /** Fetched chunks not written to the on-disk cache because its disk writes were behind. */
    public long cacheWritesDropped() {
        return cacheWritesDropped.sum();
    }

    /**
     * Fetched chunks not written to the on-disk cache because the store had not been asked for them recently: each
     * chunk of a one-pass scan (a replay) counts here once.
     */
    public long cacheAdmissionsDeferred() {
        return cacheAdmissionsDeferred.sum();
    }

    /** Ranged GETs of segment chunks issued to the store, and their bytes. */
    public long rangeGets() {
        return rangeGets.sum();
    }

    public long rangeGetBytes() {
        return rangeGetBytes.sum();
    }

    /**
     * Chunks fetched ahead of a reader and released unread after {@link ChunkCache#UNREAD_PIN} (their reader went
     * away) to make room for other read-ahead.
     */
    public long readAheadUnreadReleased() {
        return readAheadUnreadReleased.sum();
    }

    void pending(long segments, long bytes, boolean exceeded) {
        pendingSegments.set(segments);
        pendingBytes.set(bytes);
        backlogExceeded = exceeded;
    }

    void storeAvailable(boolean available) {
        storeAvailable = available;
    }

    void uploadError() {
        uploadErrors.increment();
    }

    void uploaded(long bytes) {
        segmentsUploaded.increment();
        bytesUploaded.add(bytes);
    }

    void orphansDeleted(int n) {
        orphansDeleted.add(n);
    }

    void hotSegmentEvicted() {
        hotSegmentsEvicted.increment();
    }

    void coldSegmentsDeleted(int n) {
        coldSegmentsDeleted.add(n);
    }

    void cacheHit() {
        cacheHits.increment();
    }

    void cacheMiss() {
        cacheMisses.increment();
    }

    void cacheWriteDropped() {
        cacheWritesDropped.increment();
    }

    void cacheAdmissionDeferred() {
        cacheAdmissionsDeferred.increment();
    }

    void unreadReleased() {
        readAheadUnreadReleased.increment();
    }

    /**
     * A chunk of a ranged GET handed to readers, counted before they see it; the GET itself with its first chunk (a
     * GET that fails before any is counted nowhere).
     */
    void rangeGetChunk(boolean firstOfItsGet, long bytes) {
        if (firstOfItsGet) {
            rangeGets.increment();
        }
        rangeGetBytes.add(bytes);
    }
}
