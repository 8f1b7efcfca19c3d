package io.tierlog.tiering;

import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What the tierer learns by walking one sealed hot segment before uploading it: every batch validated (a corrupt
 * segment is never uploaded), the offsets and timestamps it covers, the CRC32C of its bytes and its sidecar, with
 * the aborted transactions overlapping it from the partition's transaction index (complete only once every
 * transaction touching the segment has ended: the tierer checks the last stable offset first).
 *
 * @param file the segment file
 * @param sizeBytes bytes of valid batches (the file's whole length for a sealed segment)
 */
record SealedSegment(Path file, long baseOffset, long lastOffset, long sizeBytes, long firstTimestamp,
                     long maxTimestamp, int crc32c, SegmentSidecar sidecar) {

    /**
     * Walks segment {@code base} of {@code tp} ({@link io.tierlog.log.PartitionReader#walkSealed}).
     *
     * @return null if the segment holds no batch
     * @throws java.nio.file.NoSuchFileException if the segment was evicted
     * @throws CorruptLogException if any batch fails validation or the file has bytes after the last batch
     */
    static SealedSegment scan(HotLog hotLog, TopicPartition tp, long base, int indexIntervalBytes) throws IOException {
        Walk walk = new Walk(indexIntervalBytes);
        long size = hotLog.reader(tp).walkSealed(base, walk);
        if (walk.first < 0) {
            return null;
        }
        walk.entries.add(new SegmentSidecar.Entry(walk.entryOffset, walk.entryPosition, walk.entryMaxTs));
        SegmentSidecar sidecar = new SegmentSidecar(walk.entries,
                hotLog.transactions(tp).aborted(base, walk.last + 1));
        return new SealedSegment(hotLog.sealedSegmentFile(tp, base), base, walk.last, size, walk.firstTs, walk.maxTs,
                (int) walk.crc.getValue(), sidecar);
    }

    /** What the walk gathers: offsets, timestamps, the CRC of the bytes and the sidecar's entries. */
    private static final class Walk implements PartitionReader.BatchVisitor {
        final int indexIntervalBytes;
        final CRC32C crc = new CRC32C();
        final List<SegmentSidecar.Entry> entries = new ArrayList<>();
        long entryOffset = -1;
        long entryPosition = -1;
        long entryMaxTs = Long.MIN_VALUE;
        long first = -1;
        long last = -1;
        long firstTs = -1;
        long maxTs = -1;

        Walk(int indexIntervalBytes) {
            this.indexIntervalBytes = indexIntervalBytes;
        }

        @Override
        public boolean visit(BatchInfo info, ByteBuffer batch) {
            if (first < 0) {
                first = info.baseOffset();
                firstTs = info.maxTimestamp();
            }
            if (entryPosition < 0 || info.position() - entryPosition >= indexIntervalBytes) {
                if (entryPosition >= 0) {
                    entries.add(new SegmentSidecar.Entry(entryOffset, entryPosition, entryMaxTs));
                }
                entryOffset = info.baseOffset();
                entryPosition = info.position();
                entryMaxTs = Long.MIN_VALUE;
            }
            entryMaxTs = Math.max(entryMaxTs, info.maxTimestamp());
            crc.update(batch.duplicate());
            last = info.lastOffset();
            maxTs = Math.max(maxTs, info.maxTimestamp());
            return true;
        }
    }
}
