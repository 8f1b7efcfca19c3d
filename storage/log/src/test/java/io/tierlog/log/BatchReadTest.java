package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link PartitionReader#readBatches} reads the file straight into the memory it returns ({@link BatchCollector}):
 * every answer must be exactly the stored batches a plain walk of the log selects, from every offset, with and
 * without an index hint, across segments and batches larger than its read-ahead, and every buffer it takes from
 * the {@link ReadMemory} must be given back, also when the read fails.
 */
class BatchReadTest {
    private static final TopicPartition TP = new TopicPartition("batches", 0);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final CountingMemory memory = new CountingMemory();

    @Test
    void everyOffsetAndLimitReadsExactlyTheStoredBatchesAWalkSelects() throws IOException {
        // 8 KiB segments: batches of 1-12 records of 10-700 bytes, so reads cross segments and stop mid-segment.
        List<Stored> log = write(TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 8 * 1024)), 60, 12, 700);
        PartitionReader reader = new PartitionReader(data, TP);
        assertThat(reader.segmentBases()).hasSizeGreaterThan(3);
        long end = log.get(log.size() - 1).info().nextOffset();
        int[] maxBytesCases = {1, 300, 2_000, 9_000, 1 << 20};
        int[] maxRecordsCases = {1, 5, 10_000};
        int reads = 0;
        for (long offset = 0; offset <= end; offset++) {
            for (int maxBytes : maxBytesCases) {
                for (int maxRecords : maxRecordsCases) {
                    for (Position hint : hintsFor(log, offset)) {
                        Expected want = expected(log, offset, maxRecords, maxBytes);
                        try (BatchRead read = reader.readBatches(offset, hint, maxRecords, maxBytes, memory)) {
                            assertThat(bytes(read)).as("offset %d maxRecords %d maxBytes %d hint %s", offset,
                                    maxRecords, maxBytes, hint).isEqualTo(want.bytes());
                            assertThat(read.nextOffset()).isEqualTo(want.nextOffset());
                            assertThat(read.records()).isEqualTo(want.records());
                        }
                        reads++;
                    }
                }
            }
        }
        assertThat(reads).isGreaterThan(1_000);
        assertThat(memory.outstanding()).isZero();
        assertThat(memory.allocations()).isPositive();
    }

    @Test
    void batchesLargerThanTheReadAheadAndTheByteLimitAreReadWhole() throws IOException {
        // Three ~600 KiB batches between small ones: the read-ahead is 256 KiB, so a batch arrives in several reads,
        // and with maxBytes 1 the buffer must grow past what the read first reserved.
        List<Stored> log = new ArrayList<>();
        try (PartitionWriter writer = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < 8; i++) {
                int size = i % 3 == 1 ? 600 * 1024 : 50;
                writer.append(List.of(record(i, size)), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            }
        }
        log.addAll(stored());
        PartitionReader reader = new PartitionReader(data, TP);
        for (long offset = 0; offset < 8; offset++) {
            for (int maxBytes : new int[]{1, 700 * 1024, 4 << 20}) {
                Expected want = expected(log, offset, 100, maxBytes);
                try (BatchRead read = reader.readBatches(offset, null, 100, maxBytes, memory)) {
                    assertThat(bytes(read)).as("offset %d maxBytes %d", offset, maxBytes).isEqualTo(want.bytes());
                    assertThat(read.nextOffset()).isEqualTo(want.nextOffset());
                }
            }
        }
        assertThat(memory.outstanding()).isZero();
    }

    @Test
    void aTornTailIsInvisibleAndAFlippedByteFailsTheReadGivingItsMemoryBack() throws IOException {
        List<Stored> log = write(TopicConfig.DEFAULTS, 10, 4, 200);
        PartitionReader reader = new PartitionReader(data, TP);
        Path file = SegmentFiles.log(reader.directory(), 0);
        Stored last = log.get(log.size() - 1);
        // A writer killed mid-append: the first half of a copy of the last batch.
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(last.bytes(), 0, last.bytes().length / 2));
        }
        try (BatchRead read = reader.readBatches(0, null, 10_000, 1 << 20, memory)) {
            assertThat(bytes(read)).isEqualTo(expected(log, 0, 10_000, 1 << 20).bytes());
        }
        // A flipped byte inside the third batch's records.
        Stored third = log.get(2);
        long at = third.info().position() + third.info().sizeInBytes() - 3;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{(byte) (third.bytes()[third.bytes().length - 3] ^ 0x10)}), at);
        }
        assertThatThrownBy(() -> reader.readBatches(0, null, 10_000, 1 << 20, memory))
                .isInstanceOf(CorruptLogException.class);
        try (BatchRead beforeIt = reader.readBatches(0, null, 10_000, (int) third.info().position(), memory)) {
            assertThat(beforeIt.nextOffset()).isEqualTo(third.info().baseOffset());
        }
        assertThat(memory.outstanding()).isZero();
    }

    /** What a read must answer, computed from a plain walk: the batches from the one holding offset, under the limits. */
    private static Expected expected(List<Stored> log, long offset, int maxRecords, int maxBytes) {
        List<byte[]> taken = new ArrayList<>();
        int length = 0;
        int records = 0;
        long next = offset;
        for (Stored s : log) {
            if (s.info().lastOffset() < offset) {
                continue;
            }
            if (length > 0 && length + s.bytes().length > maxBytes) {
                break;
            }
            taken.add(s.bytes());
            length += s.bytes().length;
            records += (int) (s.info().lastOffset() - Math.max(s.info().baseOffset(), offset) + 1);
            next = s.info().nextOffset();
            if (records >= maxRecords || length >= maxBytes) {
                break;
            }
        }
        ByteBuffer all = ByteBuffer.allocate(length);
        taken.forEach(all::put);
        return new Expected(all.array(), next, records);
    }

    /** No hint, and every batch boundary at or before offset in its segment (what an index may answer). */
    private static List<Position> hintsFor(List<Stored> log, long offset) {
        List<Position> hints = new ArrayList<>();
        hints.add(null);
        long segment = -1;
        for (Stored s : log) {
            if (s.info().baseOffset() <= offset) {
                segment = s.info().segmentBase();
            }
        }
        for (Stored s : log) {
            if (s.info().segmentBase() == segment && s.info().baseOffset() <= offset) {
                hints.add(new Position(s.info().baseOffset(), segment, s.info().position()));
            }
        }
        return hints;
    }

    private List<Stored> write(TopicConfig config, int batches, int maxRecords, int maxValue) throws IOException {
        Random random = new Random(42);
        try (PartitionWriter writer = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int b = 0; b < batches; b++) {
                List<AppendRecord> records = new ArrayList<>();
                int n = 1 + random.nextInt(maxRecords);
                for (int i = 0; i < n; i++) {
                    records.add(record(b * 100 + i, 10 + random.nextInt(maxValue - 10)));
                }
                writer.append(records, ProducerIdentity.NONE, config);
            }
        }
        List<Stored> log = stored();
        assertThat(log).hasSize(batches);
        return log;
    }

    /** Every stored batch with its bytes, from a walk with the default (chunk) window. */
    private List<Stored> stored() {
        List<Stored> out = new ArrayList<>();
        new PartitionReader(data, TP).scan(new Position(0, 0, 0), (info, batch) -> {
            byte[] bytes = new byte[batch.remaining()];
            batch.duplicate().get(bytes);
            out.add(new Stored(info, bytes));
            return true;
        });
        return out;
    }

    private AppendRecord record(int i, int valueSize) {
        byte[] value = new byte[valueSize];
        Arrays.fill(value, (byte) ('a' + i % 26));
        return new AppendRecord(("k" + i).getBytes(), value, List.of(), clock.millis());
    }

    private static byte[] bytes(BatchRead read) {
        ByteBuffer b = read.buffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        assertThat(out).hasSize(read.length());
        return out;
    }

    private record Stored(BatchInfo info, byte[] bytes) {
    }

    private record Expected(byte[] bytes, long nextOffset, int records) {
    }

    /** Direct buffers (as the service's), counting what is handed out and not yet given back. */
    private static final class CountingMemory implements ReadMemory {
        private final AtomicInteger outstanding = new AtomicInteger();
        private final AtomicInteger allocations = new AtomicInteger();

        @Override
        public ReadBuffer allocate(int capacity) {
            outstanding.incrementAndGet();
            allocations.incrementAndGet();
            ByteBuffer memory = ByteBuffer.allocateDirect(capacity);
            // Garbage where nothing was read, so a byte returned that did not come from the file shows.
            for (int i = 0; i < capacity; i++) {
                memory.put(i, (byte) 0x5A);
            }
            return new ReadBuffer(memory, outstanding::decrementAndGet);
        }

        int outstanding() {
            return outstanding.get();
        }

        int allocations() {
            return allocations.get();
        }
    }
}
