package io.tierlog.log.corruption;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.testing.KafkaSegments;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Damage on disk: a flipped byte is an error, never data and never silently repaired; a torn tail (a writer that
 * died mid-write) is invisible to readers and cut off by the next writer.
 *
 * <p>The flips walk every byte of the batches except the 4-byte {@code partitionLeaderEpoch}: like Kafka, the
 * format keeps that field outside the CRC, and it carries nothing we serve (we always write -1).
 */
class CorruptionTest {
    private static final TopicPartition TP = new TopicPartition("damaged", 0);
    /** The smallest segment.bytes: three ~300-byte batches fill a segment, the fourth rolls. */
    private static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
    private static final int LEADER_EPOCH_OFFSET = 12;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void everyFlippedByteOfASealedSegmentIsReportedOnRead() throws IOException {
        List<BatchInfo> batches = writeBatches(6);
        PartitionReader reader = new HotLog(data).reader(TP);
        assertThat(reader.segmentBases()).hasSizeGreaterThan(1);
        long sealed = reader.segmentBases().get(0);
        Path file = SegmentFiles.log(reader.directory(), sealed);
        byte[] original = Files.readAllBytes(file);
        List<BatchInfo> inSealed = batches.stream().filter(b -> b.segmentBase() == sealed).toList();
        assertThat(inSealed).hasSizeGreaterThan(1);
        assertThat(reader.read(0, null, 1000, 1 << 20).records()).hasSize(totalRecords(batches));

        int checked = 0;
        for (int i = 0; i < original.length; i++) {
            if (isLeaderEpochByte(inSealed, i)) {
                continue;
            }
            restore(file, original);
            flip(file, original, i);
            int at = i;
            CorruptLogException e = catchThrowableOfType(CorruptLogException.class,
                    () -> reader.read(0, null, 1000, 1 << 20));
            assertThat(e).as("flipped byte %d of %d in the sealed segment", at, original.length).isNotNull();
            assertThat(e.type()).isEqualTo(ErrorType.CORRUPT_RECORD);
            // Whole-batch reads hand stored bytes out undecoded: the same checks must stop them.
            assertThat(catchThrowableOfType(CorruptLogException.class, () -> reader.readBatches(0, null, 1000, 1 << 20)))
                    .as("batch read with flipped byte %d", at).isNotNull();
            checked++;
        }
        Files.write(file, original);
        assertThat(checked).isGreaterThan(500);
        assertThat(reader.read(0, null, 1000, 1 << 20).records()).hasSize(totalRecords(batches));
    }

    @Test
    void writerRefusesToAppendPastAFlippedByteInTheActiveSegmentAndTruncatesNothing() throws IOException {
        List<BatchInfo> batches = writeBatches(4);
        BatchInfo last = batches.get(batches.size() - 1);
        Path file = SegmentFiles.log(data.resolve(TP.dirName()), last.segmentBase());
        byte[] original = Files.readAllBytes(file);
        assertThat((long) original.length).isEqualTo(last.endPosition());

        for (int i = (int) last.position(); i < original.length; i++) {
            int inBatch = i - (int) last.position();
            if (inBatch >= LEADER_EPOCH_OFFSET && inBatch < LEADER_EPOCH_OFFSET + 4) {
                continue;
            }
            restore(file, original);
            flip(file, original, i);
            // A new writer (a new process, as a Lambda instance would be) scans the active segment on first append.
            try (PartitionWriter writer = newWriter()) {
                CorruptLogException e = catchThrowableOfType(CorruptLogException.class,
                        () -> writer.append(records("after-damage", 1), ProducerIdentity.NONE, SMALL_SEGMENTS));
                assertThat(e).as("append after flipping byte %d of the last batch", inBatch).isNotNull();
                assertThat(e.type()).isEqualTo(ErrorType.CORRUPT_RECORD);
            }
            byte[] after = Files.readAllBytes(file);
            byte[] expected = original.clone();
            expected[i] ^= (byte) 0xFF;
            assertThat(after).as("segment after the refused append (byte %d flipped)", inBatch).isEqualTo(expected);
        }
        Files.write(file, original);
        try (PartitionWriter writer = newWriter()) {
            assertThat(writer.append(records("repaired", 1), ProducerIdentity.NONE, SMALL_SEGMENTS).baseOffset())
                    .isEqualTo(last.nextOffset());
        }
    }

    @Test
    void tornTailIsInvisibleToReadersAndTruncatedWithAWarningByTheNextWriter() throws IOException {
        List<BatchInfo> batches = writeBatches(4);
        BatchInfo last = batches.get(batches.size() - 1);
        Path file = SegmentFiles.log(data.resolve(TP.dirName()), last.segmentBase());
        byte[] complete = Files.readAllBytes(file);
        PartitionReader reader = new HotLog(data).reader(TP);

        // Cut inside the batch body, inside its 61-byte header, and inside its 12-byte length prefix.
        for (long cut : new long[]{last.sizeInBytes() - 7, 40, 5}) {
            Files.write(file, complete);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(last.position() + cut);
            }
            ReadResult read = reader.read(0, null, 10_000, 1 << 20);
            assertThat(read.records()).as("records visible with %d bytes of the last batch", cut)
                    .hasSize(totalRecords(batches) - last.recordCount());
            assertThat(read.nextOffset()).isEqualTo(last.baseOffset());
            Position end = reader.end(null);
            assertThat(end.offset()).isEqualTo(last.baseOffset());
            assertThat(end.position()).isEqualTo(last.position());

            String log = captureStderr(() -> {
                try (PartitionWriter writer = newWriter()) {
                    AppendResult r = writer.append(records("after-tear", 2), ProducerIdentity.NONE, SMALL_SEGMENTS);
                    // The torn batch was never acknowledged; its offsets go to the next append.
                    assertThat(r.baseOffset()).isEqualTo(last.baseOffset());
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(log).contains("WARN").contains("truncating torn batch").contains(TP.dirName());
            List<KafkaSegments.KafkaRecord> kafka = KafkaSegments.readAll(reader.directory());
            assertThat(kafka).hasSize(totalRecords(batches) - last.recordCount() + 2);
            assertThat(kafka.get(kafka.size() - 1).value()).startsWith("after-tear");
        }
    }

    @Test
    void batchCutShortInASealedSegmentIsCorruptionNotATornTailAndIsNeverTruncated() throws IOException {
        List<BatchInfo> batches = writeBatches(6);
        BatchInfo lastOfFirst = batches.stream().filter(b -> b.segmentBase() == 0).reduce((a, b) -> b).orElseThrow();
        Path file = SegmentFiles.log(data.resolve(TP.dirName()), 0);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(lastOfFirst.endPosition() - 3);
        }
        long sizeBefore = Files.size(file);
        PartitionReader reader = new HotLog(data).reader(TP);
        assertThatThrownBy(() -> reader.read(0, null, 10_000, 1 << 20)).isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("cut short");
        // Writers scan only the active segment, so they append on; nothing ever truncates a sealed segment.
        try (PartitionWriter writer = newWriter()) {
            writer.append(records("x", 1), ProducerIdentity.NONE, SMALL_SEGMENTS);
        }
        assertThat(Files.size(file)).isEqualTo(sizeBefore);
    }

    private PartitionWriter newWriter() {
        return new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
    }

    /** Appends {@code n} batches of 3 records (~300 bytes each) through one writer, then closes it. */
    private List<BatchInfo> writeBatches(int n) throws IOException {
        List<BatchInfo> out = new ArrayList<>();
        try (PartitionWriter writer = newWriter()) {
            for (int i = 0; i < n; i++) {
                writer.append(records("batch-" + i, 3), ProducerIdentity.NONE, SMALL_SEGMENTS);
            }
        }
        new HotLog(data).reader(TP).scan(new Position(0, 0, 0), (info, batch) -> out.add(info));
        assertThat(out).hasSize(n);
        return out;
    }

    private static int totalRecords(List<BatchInfo> batches) {
        return batches.stream().mapToInt(BatchInfo::recordCount).sum();
    }

    private List<AppendRecord> records(String prefix, int n) {
        List<AppendRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new AppendRecord(("k" + i).getBytes(StandardCharsets.UTF_8),
                    (prefix + "-" + i + "-" + "p".repeat(60)).getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
        }
        return out;
    }

    private static boolean isLeaderEpochByte(List<BatchInfo> batches, int position) {
        for (BatchInfo b : batches) {
            long rel = position - b.position();
            if (rel >= LEADER_EPOCH_OFFSET && rel < LEADER_EPOCH_OFFSET + 4) {
                return true;
            }
        }
        return false;
    }

    /** Puts back any byte that differs from {@code original}, in place. */
    private static void restore(Path file, byte[] original) throws IOException {
        byte[] now = Files.readAllBytes(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (int i = 0; i < original.length; i++) {
                if (now[i] != original[i]) {
                    ch.write(java.nio.ByteBuffer.wrap(original, i, 1), i);
                }
            }
        }
    }

    /**
     * Flips the byte at {@code position}, in place:
     * rewriting the whole file would make ext4 flush it on close (auto_da_alloc) and slow the walk 100-fold.
     */
    private static void flip(Path file, byte[] original, int position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[]{(byte) (original[position] ^ 0xFF)}), position);
        }
    }

    /** Runs {@code action} with System.err captured (slf4j-simple writes there, looking System.err up each time). */
    private static String captureStderr(Runnable action) {
        PrintStream saved = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(saved);
        }
        String captured = bytes.toString(StandardCharsets.UTF_8);
        saved.print(captured);
        return captured;
    }
}
