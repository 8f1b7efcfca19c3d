package io.tierlog.service.read;

import io.tierlog.log.BatchSlice;
import io.tierlog.log.Position;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fetch that goes on where the partition's last slice ended starts from that slice's end instead of an index
 * lookup: the ranges are the ones an index-hinted read finds, and a segment rewritten under that end (the cleaner
 * replaced it) never yields another batch than the one asked for.
 */
class HotTierSliceEndsTest extends HotTierFixture {
    private static final TopicConfig SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 64 * 1024));

    @Test
    void slicesFromTheLastEndAreTheRangesAnIndexedReadFinds() throws Exception {
        appendBatches(120);
        Position end = hot.end(TP);
        List<long[]> followed = slices(hot, end);
        List<long[]> indexed = new ArrayList<>();
        for (long[] s : followed) {
            // Each from a tier that never sliced this partition: its hint comes from the index.
            try (HotTier once = new HotTier(data, Files.createDirectories(tmp.resolve("index-" + s[0])), clock);
                 BatchSlice slice = once.sliceBatches(TP, s[0], 50, 8 * 1024, once.end(TP))) {
                indexed.add(new long[]{s[0], slice.position(), slice.length(), slice.nextOffset()});
            }
        }
        assertThat(followed).hasSizeGreaterThan(10);
        assertThat(followed).zipSatisfy(indexed, (a, b) -> assertThat(a).containsExactly(b));
    }

    @Test
    void aSegmentRewrittenUnderTheLastEndNeverYieldsAnotherBatch() throws Exception {
        appendBatches(100); // two segments: the first is sealed
        Position end = hot.end(TP);
        assertThat(end.segmentBase()).isPositive();
        long next;
        try (BatchSlice first = hot.sliceBatches(TP, 0, 50, 8 * 1024, end)) {
            next = first.nextOffset();
            assertThat(first.end().position()).isPositive();
        }
        // The cleaner's rewrite, as far as positions go: the segment's first batch is gone, every later one moved.
        Path segment = log.sealedSegmentFile(TP, 0);
        byte[] bytes = Files.readAllBytes(segment);
        int firstBatch = RecordBatchCodec.LOG_OVERHEAD + ByteBuffer.wrap(bytes).getInt(RecordBatchCodec.LENGTH_OFFSET);
        Path rewritten = tmp.resolve("rewritten");
        Files.write(rewritten, Arrays.copyOfRange(bytes, firstBatch, bytes.length));
        Files.move(rewritten, segment, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);

        try (BatchSlice slice = hot.sliceBatches(TP, next, 50, 8 * 1024, end)) {
            // null: the header at the old end disagrees and the caller reads (and checks) the batches instead.
            if (slice != null) {
                assertThat(firstBaseOffset(slice)).as("the batch asked for, wherever it lies now").isEqualTo(next);
            }
        }
    }

    /** Slices the whole partition from 0, each fetch going on from the last one's next offset, as a consumer does. */
    private static List<long[]> slices(HotTier tier, Position end) {
        List<long[]> out = new ArrayList<>();
        long offset = 0;
        while (offset < end.offset()) {
            try (BatchSlice slice = tier.sliceBatches(TP, offset, 50, 8 * 1024, end)) {
                assertThat(slice).as("a slice at %d", offset).isNotNull();
                out.add(new long[]{offset, slice.position(), slice.length(), slice.nextOffset()});
                offset = slice.nextOffset();
            }
        }
        return out;
    }

    private static long firstBaseOffset(BatchSlice slice) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(RecordBatchCodec.HEADER_SIZE);
        slice.channel().read(header, slice.position());
        return header.getLong(0);
    }

    /** Appends {@code n} batches of 4 records of 256 bytes. */
    private void appendBatches(int n) {
        for (int b = 0; b < n; b++) {
            List<AppendRecord> records = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                records.add(new AppendRecord(null, new byte[256], List.of(), clock.millis()));
            }
            writer.append(records, ProducerIdentity.NONE, SEGMENTS);
        }
    }
}
