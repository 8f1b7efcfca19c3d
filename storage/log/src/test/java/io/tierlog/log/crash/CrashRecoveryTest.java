package io.tierlog.log.crash;

import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.log.testing.KafkaSegments;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills an idempotent writer process with SIGKILL at random moments, 20+ times, restarting it each time; it
 * resumes by retrying its in-flight batch. Afterwards every acknowledged batch is in the log exactly once at its
 * acknowledged offsets, offsets are dense, every CRC is valid and no partial batch is left on disk or visible.
 * Lives alternate between appending our own batches and client-built batches ({@link CrashWriterMain}'s modes), so
 * a client batch torn by a kill is truncated like ours, and an in-flight batch is retried by the other path.
 * The seed is printed; rerun a failure with {@code -Dtierlog.crash.seed=<seed>}.
 */
@Tag("slow")
class CrashRecoveryTest {
    private static final int KILLS = 20;
    private static final long SEGMENT_BYTES = 1024 * 1024;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void killedWriterLosesAndDuplicatesNothingAcknowledged() throws Exception {
        long seed = Long.getLong("tierlog.crash.seed", System.nanoTime());
        System.out.println("CrashRecoveryTest seed = " + seed);
        Random random = new Random(seed);
        Path data = tmp.resolve("data");
        Path ackFile = tmp.resolve("acks.txt");
        Path stderr = tmp.resolve("stderr.txt");
        TopicPartition tp = new TopicPartition("crash", 0);

        // First a life that dies between an append and its ack, deterministically, so the retry of an in-flight
        // batch that did reach the log is exercised in every run (the random kills below may or may not hit one).
        Process halted = JavaProcess.start(CrashWriterMain.class, stderr, data.toString(), "crash", ackFile.toString(),
                String.valueOf(SEGMENT_BYTES), "-1", "own", "3");
        assertThat(halted.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(halted.exitValue()).as("halted before its ack; stderr: %s", stderrOf(stderr)).isEqualTo(128 + 9);

        for (int kill = 0; kill < KILLS; kill++) {
            Process p = start(data, ackFile, stderr, -1, kill % 2 == 0 ? "client" : "own");
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                assertThat(out.readLine()).as("writer start (seed %d); stderr: %s", seed, stderrOf(stderr))
                        .startsWith("ready");
                // Wait for the life's first acknowledged append (recovery done), so that on a slow, loaded machine
                // the kills still land in the append loop and not all in JVM startup.
                assertThat(out.readLine()).as("first ack (seed %d); stderr: %s", seed, stderrOf(stderr))
                        .startsWith("first-ack");
                // The kill lands at a random moment of the append loop: mid-write, mid-fsync, mid-roll or idle.
                Thread.sleep(random.nextInt(400));
            } finally {
                p.destroyForcibly();
            }
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("killed by SIGKILL (seed %d); stderr: %s", seed, stderrOf(stderr))
                    .isEqualTo(128 + 9);
        }
        // A last life that is not killed: it recovers once more, retries the in-flight batch and appends a few more.
        Process last = start(data, ackFile, stderr, 5, "client");
        assertThat(last.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(last.exitValue()).as("final writer (seed %d); stderr: %s", seed, stderrOf(stderr)).isZero();

        Map<Integer, long[]> acked = new HashMap<>();
        int duplicatesAnswered = 0;
        for (String line : Files.readAllLines(ackFile)) {
            String[] f = line.split(" ");
            int seq = Integer.parseInt(f[0]);
            assertThat(acked.put(seq, new long[]{Long.parseLong(f[1]), Long.parseLong(f[2])}))
                    .as("sequence %d acknowledged once (seed %d)", seq, seed).isNull();
            if (Boolean.parseBoolean(f[3])) {
                duplicatesAnswered++;
            }
        }
        assertThat(acked).as("acknowledged batches").hasSizeGreaterThan(KILLS);
        assertThat(acked.get(2)).as("the halted life's third batch was retried and acknowledged").isNotNull();
        assertThat(duplicatesAnswered).as("in-flight retries answered as duplicates (seed %d)", seed)
                .isGreaterThanOrEqualTo(1);

        // The log through our reader: one batch per sequence 0..n-1, in order, dense offsets, exact content.
        PartitionReader reader = new HotLog(data).reader(tp);
        List<BatchInfo> batches = new ArrayList<>();
        long[] nextOffset = {0};
        Position end = reader.scan(new Position(0, 0, 0), (info, batch) -> {
            int seq = batches.size();
            assertThat(info.baseOffset()).as("dense offsets (seed %d)", seed).isEqualTo(nextOffset[0]);
            assertThat(info.producerId()).isEqualTo(CrashWriterMain.PRODUCER_ID);
            assertThat(info.baseSequence()).as("batch %d's sequence: each sequence once, in order (seed %d)",
                    seq, seed).isEqualTo(CrashWriterMain.firstSequence(seq));
            List<LogRecord> records = new ArrayList<>();
            RecordBatchCodec.decode(batch, 0, Integer.MAX_VALUE, records);
            assertThat(records).hasSize(CrashWriterMain.recordCount(seq));
            for (int k = 0; k < records.size(); k++) {
                assertThat(records.get(k).offset()).isEqualTo(info.baseOffset() + k);
                assertThat(new String(records.get(k).value(), StandardCharsets.UTF_8))
                        .isEqualTo(CrashWriterMain.value(seq, k));
            }
            batches.add(info);
            nextOffset[0] = info.nextOffset();
            return true;
        });
        assertThat(end.offset()).isEqualTo(nextOffset[0]);

        // Every acknowledged batch is there, at the offsets it was acknowledged with; the final life acknowledged
        // everything written, so the log holds exactly the acknowledged batches.
        assertThat(batches).as("batches in the log (seed %d)", seed).hasSize(acked.size());
        acked.forEach((seq, offsets) -> {
            BatchInfo b = batches.get(seq);
            assertThat(new long[]{b.baseOffset(), b.lastOffset()}).as("offsets of sequence %d (seed %d)", seq, seed)
                    .containsExactly(offsets);
        });

        // No partial batch left behind, and Kafka's reader validates every CRC.
        long lastSegment = reader.segmentBases().get(reader.segmentBases().size() - 1);
        assertThat(end.segmentBase()).isEqualTo(lastSegment);
        assertThat(Files.size(SegmentFiles.log(reader.directory(), lastSegment))).isEqualTo(end.position());
        assertThat(KafkaSegments.readAll(reader.directory())).hasSize((int) nextOffset[0]);
        System.out.printf("CrashRecoveryTest: %d kills, %d batches, %d offsets, %d segments, %d in-flight retries "
                        + "answered as duplicates%n", KILLS, batches.size(), nextOffset[0], reader.segmentBases().size(),
                duplicatesAnswered);
    }

    private Process start(Path data, Path ackFile, Path stderr, int stopAfter, String mode) {
        return JavaProcess.start(CrashWriterMain.class, stderr, data.toString(), "crash", ackFile.toString(),
                String.valueOf(SEGMENT_BYTES), String.valueOf(stopAfter), mode);
    }

    private static String stderrOf(Path stderr) throws java.io.IOException {
        return Files.exists(stderr) ? Files.readString(stderr) : "";
    }
}
