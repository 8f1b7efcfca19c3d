package io.tierlog.tiering;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.objectstore.ObjectKey;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One cold segment object being written by {@link ColdCompactor}: the compacted batches of one or more consecutive
 * input segments, appended to a local file, with what its {@link ColdSegment} entry and {@link SegmentSidecar} need
 * (CRC32C of the bytes, offsets, timestamps, sidecar entries every {@code indexIntervalBytes}, as the tierer makes them
 * for a hot segment). Not thread-safe; closed by its owner.
 */
final class CompactedObject implements AutoCloseable {
    /** Byte offset of the max timestamp in a RecordBatch v2 header (after the 12-byte log overhead). */
    private static final int MAX_TIMESTAMP_OFFSET = 35;

    final Path file;
    private final FileChannel out;
    private final int indexIntervalBytes;
    private final CRC32C crc = new CRC32C();
    private final List<SegmentSidecar.Entry> entries = new ArrayList<>();
    private final List<ColdSegment> inputs = new ArrayList<>();
    private boolean changed;
    private long position;
    private long baseOffset = -1;
    private long lastOffset = -1;
    private long firstTimestamp = -1;
    private long entryOffset = -1;
    private long entryPosition = -1;
    private long entryMaxTs = Long.MIN_VALUE;

    CompactedObject(Path file, int indexIntervalBytes) throws IOException {
        this.file = file;
        this.indexIntervalBytes = indexIntervalBytes;
        this.out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    /** Appends one filtered batch; {@code original} gives its offsets (a filtered batch keeps them). */
    void write(BatchInfo original, ByteBuffer filtered) throws IOException {
        long maxTs = filtered.getLong(filtered.position() + MAX_TIMESTAMP_OFFSET);
        if (baseOffset < 0) {
            baseOffset = original.baseOffset();
            firstTimestamp = maxTs;
        }
        if (entryPosition < 0 || position - entryPosition >= indexIntervalBytes) {
            if (entryPosition >= 0) {
                entries.add(new SegmentSidecar.Entry(entryOffset, entryPosition, entryMaxTs));
            }
            entryOffset = original.baseOffset();
            entryPosition = position;
            entryMaxTs = Long.MIN_VALUE;
        }
        entryMaxTs = Math.max(entryMaxTs, maxTs);
        crc.update(filtered.duplicate());
        ByteBuffer b = filtered.duplicate();
        while (b.hasRemaining()) {
            position += out.write(b, position);
        }
        lastOffset = original.lastOffset();
    }

    /** Records that input segment {@code s} went wholly into this object, and whether filtering changed it. */
    void add(ColdSegment s, boolean segmentChanged) {
        inputs.add(s);
        changed |= segmentChanged;
    }

    List<ColdSegment> inputs() {
        return inputs;
    }

    long sizeBytes() {
        return position;
    }

    /** True unless this object is exactly one input segment, unchanged: then the input is kept as it is. */
    boolean worthUploading() {
        return changed || inputs.size() > 1;
    }

    /**
     * The sidecar of this object, given its inputs' aborted transactions: those overlapping its offsets. Compaction
     * dropped their records but kept their markers and every offset, so listing them is what the inputs' sidecars
     * said: harmless to a reader of this object (it finds no record to skip, then the marker), and needed by one that
     * read the inputs' records before the swap and reads on here.
     */
    SegmentSidecar sidecar(List<AbortedTransaction> inputsAborted) {
        List<SegmentSidecar.Entry> all = new ArrayList<>(entries);
        all.add(new SegmentSidecar.Entry(entryOffset, entryPosition, entryMaxTs));
        List<AbortedTransaction> aborted = new ArrayList<>();
        for (AbortedTransaction a : inputsAborted) {
            if (a.lastOffset() >= baseOffset && a.firstOffset() <= lastOffset) {
                aborted.add(a);
            }
        }
        return new SegmentSidecar(all, aborted);
    }

    /**
     * The manifest entry of this object once uploaded. Its {@code maxTimestamp} is the inputs' largest (their
     * retention age does not change by compaction); the sidecar's timestamps are those of the rewritten batches.
     */
    ColdSegment entry(ObjectKey segmentKey, ObjectKey indexKey,
                      long committedAtMs) {
        long maxTimestamp = inputs.stream().mapToLong(ColdSegment::maxTimestamp).max().orElseThrow();
        return new ColdSegment(baseOffset, lastOffset, position, firstTimestamp, maxTimestamp, segmentKey, indexKey,
                (int) crc.getValue(), committedAtMs);
    }

    @Override
    public void close() throws IOException {
        out.close();
    }
}
