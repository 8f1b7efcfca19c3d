package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.internal.segment.SegmentCursor;
import io.tierlog.log.internal.segment.SegmentFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What the tierer learns by walking one sealed hot segment before uploading it: every batch validated (a corrupt
 * segment is never uploaded), the offsets and timestamps it covers, the CRC32C of its bytes and its sidecar.
 *
 * @param file the segment file
 * @param sizeBytes bytes of valid batches (the file's whole length for a sealed segment)
 */
record SealedSegment(Path file, long baseOffset, long lastOffset, long sizeBytes, long firstTimestamp,
                     long maxTimestamp, int crc32c, SegmentSidecar sidecar) {

    /**
     * Walks segment {@code base} of {@code tp} in {@code partitionDir}.
     *
     * @return null if the segment holds no batch
     * @throws CorruptLogException if any batch fails validation or the file has bytes after the last batch
     */
    static SealedSegment scan(TopicPartition tp, Path partitionDir, long base, int indexIntervalBytes)
            throws IOException {
        Path file = SegmentFiles.log(partitionDir, base);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            SegmentCursor cursor = new SegmentCursor(ch, base, 0, 1 << 20);
            CRC32C crc = new CRC32C();
            List<SegmentSidecar.Entry> entries = new ArrayList<>();
            long entryOffset = -1;
            long entryPosition = -1;
            long entryMaxTs = Long.MIN_VALUE;
            long first = -1;
            long last = -1;
            long firstTs = -1;
            long maxTs = -1;
            SegmentCursor.Step step;
            while ((step = cursor.next()) == SegmentCursor.Step.BATCH) {
                BatchInfo info = cursor.info();
                if (first < 0) {
                    if (info.baseOffset() != base) {
                        throw new CorruptLogException(tp + " segment " + file.getFileName(), 0,
                                "first batch has base offset " + info.baseOffset());
                    }
                    first = info.baseOffset();
                    firstTs = info.maxTimestamp();
                } else if (info.baseOffset() != last + 1) {
                    throw new CorruptLogException(tp + " segment " + file.getFileName(), info.position(),
                            "batch base offset " + info.baseOffset() + " where " + (last + 1) + " was expected");
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
                ByteBuffer batch = cursor.batch();
                crc.update(batch.duplicate());
                last = info.lastOffset();
                maxTs = Math.max(maxTs, info.maxTimestamp());
            }
            if (step != SegmentCursor.Step.END) {
                // A sealed segment has a newer one after it, so nothing in it can be an append in progress.
                throw new CorruptLogException(tp + " segment " + file.getFileName(), cursor.position(),
                        step == SegmentCursor.Step.CORRUPT ? cursor.problem() : "sealed segment ends in a partial batch");
            }
            if (first < 0) {
                return null;
            }
            entries.add(new SegmentSidecar.Entry(entryOffset, entryPosition, entryMaxTs));
            return new SealedSegment(file, base, last, cursor.position(), firstTs, maxTs, (int) crc.getValue(),
                    new SegmentSidecar(entries));
        }
    }
}
