package io.tierlog.service.read;

import io.tierlog.index.HotIndexer;
import io.tierlog.index.LogIndex;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;

import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * The hot tier through the RocksDB index under {@code tierlog.index-dir}: every high-watermark query first
 * catches the index up with what any process appended ({@link HotIndexer#catchUp}), and reads start at the
 * index's hint, so a read scans at most {@code index.interval.bytes} plus whatever was appended since the last
 * catch-up. The index is derived: opened empty (first start, or its directory deleted), it is rebuilt from the
 * segments by the first catch-up of each partition.
 *
 * <p>Thread-safe. {@link #close} closes the index; calls after it fail.
 */
public final class IndexedHotTier implements HotTier, AutoCloseable {
    private final Path dataDir;
    private final LogIndex index;
    private final HotIndexer indexer;
    private volatile boolean open = true;

    public IndexedHotTier(Path dataDir, Path indexDir) {
        this.dataDir = dataDir;
        // RocksDB owns its directory (it may wipe it on an unknown format), so it gets one of its own beside
        // the cold-read cache.
        this.index = LogIndex.open(indexDir.resolve("rocksdb"));
        this.indexer = new HotIndexer(index, dataDir);
    }

    @Override
    public long highWatermark(TopicPartition tp) {
        return indexer.catchUp(tp).offset();
    }

    @Override
    public ReadResult read(TopicPartition tp, long offset, int maxRecords, int maxBytes) {
        PartitionReader reader = new PartitionReader(dataDir, tp);
        Position hint = indexer.hint(tp, offset).orElse(null);
        try {
            return reader.read(offset, hint, maxRecords, maxBytes);
        } catch (PartitionReader.SegmentGoneException e) {
            // Retention removed the hinted segment mid-read; an unhinted read re-resolves from the listing.
            return reader.read(offset, null, maxRecords, maxBytes);
        }
    }

    @Override
    public OptionalLong offsetForTimestamp(TopicPartition tp, long timestamp) {
        return indexer.offsetForTimestamp(tp, timestamp);
    }

    @Override
    public HotStats stats(TopicPartition tp) {
        return ScanningHotTier.statsOf(dataDir.resolve(tp.dirName()));
    }

    @Override
    public void forget(String topic, int partitions) {
        for (int p = 0; p < partitions; p++) {
            index.dropPartition(new TopicPartition(topic, p));
        }
    }

    @Override
    public void segmentsEvicted(TopicPartition tp, long nextSegmentBase) {
        index.dropSegmentsBelow(tp, nextSegmentBase);
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        open = false;
        index.close();
    }
}
