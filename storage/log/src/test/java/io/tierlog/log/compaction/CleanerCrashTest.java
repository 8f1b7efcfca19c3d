package io.tierlog.log.compaction;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.testing.KafkaSegments;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills a real cleaning process with SIGKILL at every step of the swap protocol (the first and a later segment),
 * then checks the partition: every segment file is byte for byte either the original or the cleaned copy (never a
 * partial file, never a missing name), the log reads as a valid Kafka log whose table (latest value per key) is the
 * original one, a writer recovers and appends at the right offset, and a new pass converges on exactly the cleaned
 * result with no temporary file left.
 */
@Tag("slow")
class CleanerCrashTest {
    static final TopicConfig CONFIG = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 4096,
            TopicConfig.CLEANUP_POLICY, "compact", TopicConfig.DELETE_RETENTION_MS, 0));
    static final long NOW = 1_900_000_000_000L;
    static final String TOPIC = "crashclean";

    @TempDir
    Path tmp;
    final TopicPartition tp = new TopicPartition(TOPIC, 0);
    Path pristine;
    Path cleaned;

    @BeforeEach
    void writeLogAndItsCleanedReference() throws IOException {
        pristine = tmp.resolve("pristine");
        ManualClock clock = new ManualClock(NOW - 3_600_000);
        Random random = new Random(7);
        try (PartitionWriter w = new HotLog(pristine).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < 400; i++) {
                String key = "k" + random.nextInt(40);
                String value = random.nextInt(10) == 0 ? null : "v" + i + "-" + "x".repeat(random.nextInt(80));
                w.append(List.of(new AppendRecord(key.getBytes(StandardCharsets.UTF_8),
                        value == null ? null : value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis())),
                        new ProducerIdentity(9, (short) 0, i), CONFIG);
                clock.advance(Duration.ofMillis(5));
            }
        }
        cleaned = tmp.resolve("cleaned");
        copy(pristine, cleaned);
        CleanResult reference = new HotCleaner(cleaned, new ManualClock(NOW)).clean(tp, CONFIG, Long.MAX_VALUE);
        assertThat(reference.segmentsRewritten()).isGreaterThan(2);
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aKillAtAnyStepLeavesOldOrNewSegmentsAndTheNextPassFinishes() throws Exception {
        List<String> killedAt = new ArrayList<>();
        for (HotCleaner.Step step : HotCleaner.Step.values()) {
            boolean perSegment = step != HotCleaner.Step.MAPPED && step != HotCleaner.Step.DONE;
            for (int occurrence : perSegment ? new int[]{1, 3} : new int[]{1}) {
                Path data = tmp.resolve(step + "-" + occurrence);
                copy(pristine, data);
                killedAt.add(killAt(data, step, occurrence));
                checkAfterKill(data, step + "#" + occurrence);
            }
        }
        System.out.println("CleanerCrashTest killed at: " + killedAt);
        assertThat(killedAt).hasSize(2 + 4 * 2);
    }

    private String killAt(Path data, HotCleaner.Step step, int occurrence) throws Exception {
        Path stderr = tmp.resolve("stderr-" + step + "-" + occurrence + ".txt");
        Process p = JavaProcess.start(CleanerCrashMain.class, stderr, data.toString(), TOPIC, String.valueOf(NOW),
                step.name(), String.valueOf(occurrence));
        String line;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            line = out.readLine();
            assertThat(line).as("cleaner reached %s #%d; stderr: %s", step, occurrence, read(stderr)).startsWith("at ");
        } finally {
            p.destroyForcibly();
        }
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("killed by SIGKILL at %s", step).isEqualTo(128 + 9);
        return line.substring(3);
    }

    private void checkAfterKill(Path data, String where) throws IOException {
        Path dir = data.resolve(tp.dirName());
        Path oldDir = pristine.resolve(tp.dirName());
        Path newDir = cleaned.resolve(tp.dirName());
        List<Long> bases = SegmentFiles.segmentBases(dir);
        assertThat(bases).as("no segment lost or added (%s)", where).isEqualTo(SegmentFiles.segmentBases(oldDir));
        for (long base : bases) {
            byte[] now = Files.readAllBytes(SegmentFiles.log(dir, base));
            byte[] before = Files.readAllBytes(SegmentFiles.log(oldDir, base));
            byte[] after = Files.readAllBytes(SegmentFiles.log(newDir, base));
            assertThat(java.util.Arrays.equals(now, before) || java.util.Arrays.equals(now, after))
                    .as("segment %d is wholly old or wholly new (%s)", base, where).isTrue();
        }
        // A valid log with the same table, read by Kafka's reader and ours.
        assertThat(KafkaSegments.readAll(dir)).isNotEmpty();
        assertThat(table(readAll(data))).as("table after a kill at %s", where).isEqualTo(table(readAll(pristine)));

        // The next pass (a new process) finishes the job: exactly the reference result, no temporary file left.
        CleanResult again = new HotCleaner(data, new ManualClock(NOW)).clean(tp, CONFIG, Long.MAX_VALUE);
        assertThat(again).isNotNull();
        for (long base : bases) {
            assertThat(Files.readAllBytes(SegmentFiles.log(dir, base))).as("segment %d converged (%s)", base, where)
                    .isEqualTo(Files.readAllBytes(SegmentFiles.log(newDir, base)));
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.startsWith(HotCleaner.TEMP_PREFIX));
        }
        // And a writer recovers over the cleaned segments and appends at the next offset.
        long end = readAll(pristine).get(readAll(pristine).size() - 1).offset() + 1;
        try (PartitionWriter w = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1),
                new ManualClock(NOW))) {
            AppendResult r = w.append(List.of(new AppendRecord(null, new byte[]{1}, List.of(), NOW)),
                    ProducerIdentity.NONE, CONFIG);
            assertThat(r.baseOffset()).as("next offset after recovery (%s)", where).isEqualTo(end);
        }
    }

    static List<LogRecord> readAll(Path data) {
        PartitionReader reader = new HotLog(data).reader(new TopicPartition(TOPIC, 0));
        List<LogRecord> out = new ArrayList<>();
        long next = 0;
        while (true) {
            ReadResult r = reader.read(next, null, 1000, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    static Map<String, String> table(List<LogRecord> log) {
        Map<String, String> t = new LinkedHashMap<>();
        for (LogRecord r : log) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            if (r.value() == null) {
                t.remove(key);
            } else {
                t.put(key, new String(r.value(), StandardCharsets.UTF_8));
            }
        }
        return t;
    }

    static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private static String read(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p) : "";
    }
}
