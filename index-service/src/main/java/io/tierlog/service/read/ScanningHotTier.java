package io.tierlog.service.read;

import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.segment.SegmentFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link HotTier} straight over {@link PartitionReader}, with no index: the end of each partition is cached
 * and extended by scanning forward from the last known end, reads start at the segment holding the offset.
 * Not wired into the service (which reads through {@link IndexedHotTier}); kept as the index-free reference
 * implementation, and it owns the segment-directory statistics both tiers report ({@link #statsOf}).
 *
 * <p>Thread-safe: the cached ends are hints that are re-verified by every scan.
 */
public final class ScanningHotTier implements HotTier {
    private final Path dataDir;
    private final Map<TopicPartition, Position> ends = new ConcurrentHashMap<>();

    public ScanningHotTier(Path dataDir) {
        this.dataDir = dataDir;
    }

    @Override
    public long highWatermark(TopicPartition tp) {
        PartitionReader reader = new PartitionReader(dataDir, tp);
        Position end;
        try {
            end = reader.end(ends.get(tp));
        } catch (PartitionReader.SegmentGoneException e) {
            end = reader.end(null);
        }
        ends.put(tp, end);
        return end.offset();
    }

    @Override
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        PartitionReader reader = new PartitionReader(dataDir, tp);
        try {
            return reader.read(offset, null, maxRecords, maxBytes);
        } catch (PartitionReader.SegmentGoneException e) {
            return reader.read(offset, null, maxRecords, maxBytes);
        }
    }

    @Override
    public OptionalLong offsetForTimestamp(TopicPartition tp, long timestamp) {
        PartitionReader reader = new PartitionReader(dataDir, tp);
        List<Long> bases = reader.segmentBases();
        if (bases.isEmpty()) {
            return OptionalLong.empty();
        }
        long[] batchBase = {-1};
        int[] count = {0};
        reader.scan(new Position(bases.get(0), bases.get(0), 0), (info, batch) -> {
            if (info.maxTimestamp() >= timestamp) {
                batchBase[0] = info.baseOffset();
                count[0] = info.recordCount();
                return false;
            }
            return true;
        });
        if (batchBase[0] < 0) {
            return OptionalLong.empty();
        }
        // Timestamps inside a batch need not be ordered (producers set them), so look at each record.
        for (LogRecord r : reader.read(batchBase[0], null, count[0], Integer.MAX_VALUE).records()) {
            if (r.timestamp() >= timestamp) {
                return OptionalLong.of(r.offset());
            }
        }
        return OptionalLong.empty();
    }

    @Override
    public HotStats stats(TopicPartition tp) {
        return statsOf(dataDir.resolve(tp.dirName()));
    }

    static HotStats statsOf(Path dir) {
        List<Long> bases = SegmentFiles.segmentBases(dir);
        long bytes = 0;
        for (long base : bases) {
            try {
                bytes += Files.size(SegmentFiles.log(dir, base));
            } catch (NoSuchFileException e) {
                // removed by retention since the listing; it no longer counts
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot stat " + SegmentFiles.log(dir, base), e);
            }
        }
        return new HotStats(bases.isEmpty() ? 0 : bases.get(0), bytes, bases.size());
    }

    @Override
    public void forget(String topic, int partitions) {
        ends.keySet().removeIf(tp -> tp.topic().equals(topic));
    }

    @Override
    public boolean isOpen() {
        return true;
    }
}
