package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PartitionReader#sliceBatches} finds batches from their headers alone, for a server that sends the file range
 * without reading it: from every offset, with and without index hints, under every limit, its range must hold exactly
 * the bytes the CRC-checked {@link PartitionReader#readBatches} returns (cut at the end of the segment, where a slice
 * stops), never pass the visible end it is given, stay readable after its file is deleted, and give up (null) rather
 * than guess when a hint or a header does not lead to a batch.
 */
class BatchSliceTest {
    private static final TopicPartition TP = new TopicPartition("slices", 0);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void everyOffsetAndLimitSlicesTheBatchesTheCheckedReadReturnsUpToTheSegmentEnd() throws IOException {
        List<BatchInfo> log = write(60, 12, 700);
        PartitionReader reader = new PartitionReader(data, TP);
        assertThat(reader.segmentBases()).hasSizeGreaterThan(3);
        Position end = reader.end(null);
        // The indexer's positions of the newest segment's batches: all of them, or only its later half (a reset).
        List<BatchInfo> newest = log.stream().filter(b -> b.segmentBase() == end.segmentBase()).toList();
        List<BatchPositions> knowns = new ArrayList<>();
        knowns.add(null);
        knowns.add(positions(newest));
        knowns.add(positions(newest.subList(newest.size() / 2, newest.size())));
        int slices = 0;
        for (long offset = 0; offset < end.offset(); offset++) {
            for (int maxBytes : new int[]{1, 300, 2_000, 9_000, 1 << 20}) {
                for (int maxRecords : new int[]{1, 5, 10_000}) {
                    for (Position hint : hintsFor(log, offset)) {
                        long segment = segmentOf(log, offset);
                        byte[] want;
                        long wantNext;
                        int wantRecords;
                        try (BatchRead read = reader.readBatches(offset, hint, maxRecords, maxBytes)) {
                            // The checked read may go on into the next segment; a slice stops at the segment's end.
                            int inSegment = 0;
                            long next = offset;
                            int records = 0;
                            for (BatchInfo b : log) {
                                if (b.segmentBase() == segment && b.lastOffset() >= offset
                                        && b.nextOffset() <= read.nextOffset()) {
                                    inSegment += b.sizeInBytes();
                                    records += (int) (b.lastOffset() - Math.max(b.baseOffset(), offset) + 1);
                                    next = b.nextOffset();
                                }
                            }
                            want = new byte[inSegment];
                            read.buffer().get(want);
                            wantNext = next;
                            wantRecords = records;
                        }
                        // Kafka's rule for the bytes after the whole batches: a range cut by its byte limit, with
                        // the next batch in the segment too large, goes on with that batch's first bytes to the limit.
                        int wantPartial = 0;
                        for (BatchInfo b : log) {
                            if (b.segmentBase() == segment && b.baseOffset() == wantNext && wantRecords < maxRecords
                                    && want.length < maxBytes && want.length + b.sizeInBytes() > maxBytes) {
                                wantPartial = maxBytes - want.length;
                                assertThat(wantPartial).isLessThan(b.sizeInBytes());
                            }
                        }
                        String as = "offset " + offset + " maxRecords " + maxRecords + " maxBytes " + maxBytes
                                + " hint " + hint;
                        for (BatchPositions known : knowns) {
                            try (BatchSlice slice = reader.sliceBatches(offset, hint, maxRecords, maxBytes, end,
                                    null, known)) {
                                String how = as + (known == null ? "" : " from known positions");
                                assertThat(slice).as(how).isNotNull();
                                assertThat(read(slice)).as(how).isEqualTo(want);
                                assertThat(slice.nextOffset()).as(how).isEqualTo(wantNext);
                                assertThat(slice.records()).as(how).isEqualTo(wantRecords);
                                assertThat(slice.sentLength() - slice.length()).as(how).isEqualTo(wantPartial);
                            }
                            slices++;
                        }
                    }
                }
            }
        }
        assertThat(slices).isGreaterThan(1_000);
    }

    @Test
    void aSliceNeverPassesTheVisibleEndItIsGiven() throws IOException {
        List<BatchInfo> log = write(20, 3, 100);
        PartitionReader reader = new PartitionReader(data, TP);
        // An end at a batch boundary before the last batches: as if they were appended after the index caught up.
        BatchInfo last = log.get(log.size() - 1);
        BatchInfo before = log.get(log.size() - 4);
        assertThat(before.segmentBase()).isEqualTo(last.segmentBase());
        Position end = new Position(before.nextOffset(), before.segmentBase(), before.endPosition());
        try (BatchSlice slice = reader.sliceBatches(before.baseOffset(), null, 10_000, 1 << 20, end)) {
            assertThat(slice.nextOffset()).isEqualTo(before.nextOffset());
            assertThat(slice.position() + slice.length()).isEqualTo(before.endPosition());
        }
        assertThat(reader.sliceBatches(before.nextOffset(), null, 10_000, 1 << 20, end))
                .as("nothing below the end from there").isNull();
        // A byte limit that would take part of the batch at the end: nothing past the end is sent, not even part.
        int limit = (int) (before.endPosition() - before.position()) + 10;
        try (BatchSlice slice = reader.sliceBatches(before.baseOffset(), null, 10_000, limit, end)) {
            assertThat(slice.sentLength()).isEqualTo(slice.length()).isEqualTo(before.sizeInBytes());
        }
    }

    @Test
    void aSliceCutByItsByteLimitCarriesTheNextBatchsFirstBytesUntilALastStableOffsetCutsIt() throws IOException {
        List<BatchInfo> log = write(10, 3, 200);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        BatchInfo first = log.get(0);
        BatchInfo second = log.get(1);
        int limit = first.sizeInBytes() + second.sizeInBytes() - 1;
        try (BatchSlice slice = reader.sliceBatches(0, null, 10_000, limit, end)) {
            assertThat(slice.length()).isEqualTo(first.sizeInBytes());
            assertThat(slice.nextOffset()).isEqualTo(second.baseOffset());
            assertThat(slice.sentLength()).as("the limit's worth, one byte short of the second batch")
                    .isEqualTo(limit);
            assertThat(slice.truncatedBefore(second.nextOffset())).as("its batch lies below the cut").isSameAs(slice);
            BatchSlice atCut = slice.truncatedBefore(second.baseOffset());
            assertThat(atCut.sentLength()).as("its batch begins at the cut").isEqualTo(first.sizeInBytes());
            assertThat(atCut.nextOffset()).isEqualTo(second.baseOffset());
        }
    }

    @Test
    void aSliceStaysReadableAfterItsSegmentIsDeletedUntilClosed() throws IOException {
        write(10, 3, 200);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        byte[] want;
        try (BatchRead read = reader.readBatches(0, null, 10_000, 1 << 20)) {
            want = new byte[read.length()];
            read.buffer().get(want);
        }
        BatchSlice slice = reader.sliceBatches(0, null, 10_000, 1 << 20, end);
        Files.delete(SegmentFiles.log(reader.directory(), 0));
        assertThat(read(slice)).isEqualTo(want);
        slice.close();
        assertThat(slice.channel().isOpen()).isFalse();
        slice.close(); // twice is harmless
    }

    @Test
    void aHintOrHeaderThatDoesNotLeadToABatchGivesUpInsteadOfGuessing() throws IOException {
        List<BatchInfo> log = write(10, 3, 200);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        BatchInfo third = log.get(2);
        // A stale hint (the cleaner rewrote the segment): its position is inside a batch.
        Position stale = new Position(third.baseOffset(), third.segmentBase(), third.position() + 5);
        assertThat(reader.sliceBatches(third.baseOffset(), stale, 10_000, 1 << 20, end)).isNull();
        // A damaged length in the second batch's header: the checked read is left to say what is wrong.
        BatchInfo second = log.get(1);
        try (FileChannel ch = FileChannel.open(SegmentFiles.log(reader.directory(), 0), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, 7), second.position() + 8);
        }
        assertThat(reader.sliceBatches(0, null, 10_000, 1 << 20, end)).isNull();
        // The first batch alone is still sliced: its own header is sound and nothing after it is looked at.
        try (BatchSlice first = reader.sliceBatches(0, null, 1, 1 << 20, end)) {
            assertThat(first.length()).isEqualTo(log.get(0).sizeInBytes());
        }
    }

    @Test
    void aRangeFromKnownPositionsReadsOnlyItsFirstAndLastHeader() throws IOException {
        List<BatchInfo> log = write(10, 3, 200);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        assertThat(reader.segmentBases()).hasSize(1);
        BatchPositions known = positions(log);
        // A damaged length in the middle of the range: the header walk stops there, the known positions step over
        // it (the receiver checks every batch's CRC, as with Kafka's broker).
        try (FileChannel ch = FileChannel.open(SegmentFiles.log(reader.directory(), 0), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, 7), log.get(4).position() + 8);
        }
        assertThat(reader.sliceBatches(0, null, 10_000, 1 << 20, end)).isNull();
        try (BatchSlice slice = reader.sliceBatches(0, null, 10_000, 1 << 20, end, null, known)) {
            assertThat(slice.length()).isEqualTo((int) end.position());
            assertThat(slice.nextOffset()).isEqualTo(end.offset());
        }
        // Damaged where the range begins: the known positions are not trusted, and the walk gives up.
        try (FileChannel ch = FileChannel.open(SegmentFiles.log(reader.directory(), 0), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).putLong(0, 99), log.get(2).position());
        }
        assertThat(reader.sliceBatches(log.get(2).baseOffset(), null, 10_000, 1 << 20, end, null, known)).isNull();
    }

    @Test
    void knownPositionsOfALogSinceRewrittenAreNotTrusted() throws IOException {
        BatchPositions known = positions(write(12, 3, 200));
        deleteRecursively(data.resolve(TP.dirName()));
        // The topic created again: other batches at the positions the old ones had.
        List<BatchInfo> log = write(12, 3, 120);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        assertThat(reader.segmentBases()).containsExactly(0L);
        for (BatchInfo from : log) {
            byte[] want;
            try (BatchSlice walked = reader.sliceBatches(from.baseOffset(), null, 10_000, 1 << 20, end)) {
                want = read(walked);
            }
            try (BatchSlice slice = reader.sliceBatches(from.baseOffset(), null, 10_000, 1 << 20, end, null, known)) {
                assertThat(read(slice)).as("from " + from.baseOffset()).isEqualTo(want);
            }
        }
    }

    @Test
    void truncatedBeforeKeepsExactlyTheBatchesBelowTheOffsetInSlicesAndReads() throws IOException {
        List<BatchInfo> log = write(30, 12, 300);
        PartitionReader reader = new PartitionReader(data, TP);
        Position end = reader.end(null);
        long firstSegment = log.get(0).segmentBase();
        for (BatchInfo at : log) {
            if (at.segmentBase() != firstSegment) {
                break;
            }
            long cut = at.baseOffset();
            int below = 0;
            int records = 0;
            for (BatchInfo b : log) {
                if (b.segmentBase() == firstSegment && b.baseOffset() < cut) {
                    below += b.sizeInBytes();
                    records += b.recordCount();
                }
            }
            try (BatchSlice whole = reader.sliceBatches(0, null, Integer.MAX_VALUE, 1 << 20, end)) {
                BatchSlice cutSlice = whole.truncatedBefore(cut);
                assertThat(cutSlice.length()).as("slice cut at " + cut).isEqualTo(below);
                assertThat(cutSlice.nextOffset()).isEqualTo(cut);
                assertThat(cutSlice.records()).isEqualTo(records);
                assertThat(whole.truncatedBefore(whole.nextOffset())).isSameAs(whole);
            }
            BatchRead read = reader.readBatches(0, null, Integer.MAX_VALUE, 1 << 20).truncatedBefore(cut);
            try (read) {
                int inRead = 0;
                for (BatchInfo b : log) {
                    if (b.baseOffset() < cut) {
                        inRead += b.sizeInBytes();
                    }
                }
                assertThat(read.length()).as("read cut at " + cut).isEqualTo(inRead);
                assertThat(read.nextOffset()).isEqualTo(cut);
            }
        }
    }

    private static byte[] read(BatchSlice slice) throws IOException {
        ByteBuffer out = ByteBuffer.allocate(slice.length());
        while (out.hasRemaining()) {
            if (slice.channel().read(out, slice.position() + out.position()) < 0) {
                throw new IOException("file ended");
            }
        }
        return out.array();
    }

    private static BatchPositions positions(List<BatchInfo> batches) {
        BatchPositions known = new BatchPositions(new BatchPositions.Budget(Long.MAX_VALUE));
        batches.forEach(known::add);
        return known;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    private static long segmentOf(List<BatchInfo> log, long offset) {
        long segment = -1;
        for (BatchInfo b : log) {
            if (b.baseOffset() <= offset) {
                segment = b.segmentBase();
            }
        }
        return segment;
    }

    private static List<Position> hintsFor(List<BatchInfo> log, long offset) {
        List<Position> hints = new ArrayList<>();
        hints.add(null);
        long segment = segmentOf(log, offset);
        for (BatchInfo b : log) {
            if (b.segmentBase() == segment && b.baseOffset() <= offset) {
                hints.add(new Position(b.baseOffset(), segment, b.position()));
            }
        }
        return hints;
    }

    /** Batches of 1..maxRecords records of 10..maxValue bytes in 8 KiB segments; their headers as stored. */
    private List<BatchInfo> write(int batches, int maxRecords, int maxValue) throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 8 * 1024));
        Random random = new Random(42);
        try (PartitionWriter writer = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int b = 0; b < batches; b++) {
                List<AppendRecord> records = new ArrayList<>();
                int n = 1 + random.nextInt(maxRecords);
                for (int i = 0; i < n; i++) {
                    byte[] value = new byte[10 + random.nextInt(maxValue - 10)];
                    random.nextBytes(value);
                    records.add(new AppendRecord(("k" + b).getBytes(), value, List.of(), clock.millis()));
                }
                writer.append(records, ProducerIdentity.NONE, config);
            }
        }
        List<BatchInfo> out = new ArrayList<>();
        new PartitionReader(data, TP).scan(new Position(0, 0, 0), (info, batch) -> out.add(info));
        assertThat(out).hasSize(batches);
        return out;
    }
}
