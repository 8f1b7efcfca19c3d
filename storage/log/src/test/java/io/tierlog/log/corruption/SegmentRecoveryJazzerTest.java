package io.tierlog.log.corruption;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of segment recovery: a writer opening a partition whose active segment holds whatever
 * bytes a crash, a torn write or damage left. The log must either refuse it ({@link CorruptLogException}: damage is
 * reported, never silently repaired) or recover it, after which an append gets the offset right after the last
 * intact batch and a reader sees every record from 0 to it, dense. Any other exception, a hang or a read that fails
 * after recovery is a finding.
 *
 * <p>Input: the segment file's bytes, as they are. The corpus ({@code SegmentRecoveryJazzerTestInputs}) holds
 * segments this writer wrote, whole and cut at several points (torn tails); it runs as a regression test in every
 * build. Fuzzing: docs/RELIABILITY.md, "Fuzzing".
 */
class SegmentRecoveryJazzerTest {
    private static final TopicPartition TP = new TopicPartition("fuzz", 0);
    private static final TopicConfig CONFIG = TopicConfig.DEFAULTS;
    /**
     * Recovery forces what it repairs to disk (as it must), and each fsync on a disk costs milliseconds: on tmpfs the
     * same code runs about 30 times as many inputs a second. The file system changes no code path.
     */
    private static final Path SCRATCH = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
            ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));

    @FuzzTest(maxDuration = "2m")
    void recoversToTheLastIntactBatchOrReportsCorruption(byte[] segment) throws IOException {
        Path data = Files.createTempDirectory(SCRATCH, "segment-fuzz");
        try {
            Path dir = Files.createDirectories(data.resolve(TP.dirName()));
            Files.write(SegmentFiles.log(dir, 0), segment);
            ManualClock clock = new ManualClock(1_700_000_000_000L);
            AppendResult appended;
            try (PartitionWriter writer = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1),
                    clock)) {
                appended = writer.append(List.of(new AppendRecord(null, "after".getBytes(StandardCharsets.UTF_8),
                        List.of(), clock.millis())), ProducerIdentity.NONE, CONFIG);
            } catch (CorruptLogException refused) {
                return;
            }
            List<LogRecord> all = readAll(data, appended.lastOffset() + 1);
            assertThat(all).hasSize((int) appended.lastOffset() + 1);
            for (int i = 0; i < all.size(); i++) {
                assertThat(all.get(i).offset()).isEqualTo(i);
            }
            assertThat(new String(all.get(all.size() - 1).value(), StandardCharsets.UTF_8)).isEqualTo("after");
        } finally {
            deleteTree(data);
        }
    }

    private static List<LogRecord> readAll(Path data, long end) {
        PartitionReader reader = new HotLog(data).reader(TP);
        List<LogRecord> out = new ArrayList<>();
        long next = 0;
        while (next < end) {
            ReadResult r = reader.read(next, null, 10_000, 1 << 20);
            assertThat(r.records()).as("records from %d of %d", next, end).isNotEmpty();
            out.addAll(r.records());
            next = r.nextOffset();
        }
        return out;
    }

    private static void deleteTree(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
