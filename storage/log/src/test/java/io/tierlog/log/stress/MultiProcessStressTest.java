package io.tierlog.log.stress;

import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.testkit.JavaProcess;
import io.tierlog.log.testing.KafkaSegments;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four writer JVMs append to one partition at the same moment, 10,000 batches in all, with small segments so that
 * rolls race too. Proves the cross-process lock and the tail re-read: offsets dense and unique from 0, every
 * acknowledged batch exactly once at its acknowledged offsets, every CRC valid (checked by our reader and by
 * Kafka's own FileRecords), no partial batch on disk.
 */
@Tag("slow")
class MultiProcessStressTest {
    private static final int WRITERS = 4;
    private static final int BATCHES_PER_WRITER = 2_500;
    private static final long SEGMENT_BYTES = 256 * 1024;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void concurrentWriterProcessesProduceADenseLogWithEveryAckedBatchOnce() throws Exception {
        Path data = tmp.resolve("data");
        TopicPartition tp = new TopicPartition("stress", 0);
        List<Process> processes = new ArrayList<>();
        List<Path> ackFiles = new ArrayList<>();
        try {
            for (int w = 0; w < WRITERS; w++) {
                Path ack = tmp.resolve("acks-" + w + ".txt");
                ackFiles.add(ack);
                processes.add(JavaProcess.start(StressWriterMain.class, tmp.resolve("stderr-" + w + ".txt"),
                        data.toString(), tp.topic(), "0", String.valueOf(w), String.valueOf(BATCHES_PER_WRITER),
                        ack.toString(), String.valueOf(SEGMENT_BYTES), "never"));
            }
            List<BufferedReader> outs = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                Process p = processes.get(w);
                BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                assertThat(out.readLine()).as("writer %d startup; stderr: %s", w, stderrOf(w)).isEqualTo("ready");
                outs.add(out);
            }
            // All writers are up and blocked on stdin: release them together so their appends interleave.
            for (Process p : processes) {
                OutputStream in = p.getOutputStream();
                in.write("go\n".getBytes(StandardCharsets.UTF_8));
                in.close();
            }
            for (int w = 0; w < WRITERS; w++) {
                Process p = processes.get(w);
                assertThat(p.waitFor(150, TimeUnit.SECONDS)).as("writer %d finished", w).isTrue();
                assertThat(p.exitValue()).as("writer %d exit; stderr: %s", w, stderrOf(w)).isZero();
                assertThat(outs.get(w).readLine()).isEqualTo("done");
            }
        } finally {
            processes.forEach(Process::destroyForcibly);
        }

        // The log as our reader sees it: batch by batch, offsets dense from 0.
        PartitionReader reader = new HotLog(data).reader(tp);
        Map<Long, String> valueAt = new HashMap<>();
        Map<String, Integer> batchesPerPayload = new HashMap<>();
        long[] expected = {0};
        String[] previousWriter = {""};
        int[] writerSwitches = {0};
        Position end = reader.scan(new Position(0, 0, 0), (info, batch) -> {
            assertThat(info.baseOffset()).as("batch base offset").isEqualTo(expected[0]);
            List<LogRecord> records = new ArrayList<>();
            RecordBatchCodec.decode(batch, 0, Integer.MAX_VALUE, records);
            assertThat(records).hasSize(info.recordCount());
            String payloadId = new String(records.get(0).key(), StandardCharsets.UTF_8);
            batchesPerPayload.merge(payloadId, 1, Integer::sum);
            String writer = payloadId.substring(0, payloadId.indexOf('-'));
            if (!writer.equals(previousWriter[0])) {
                writerSwitches[0]++;
                previousWriter[0] = writer;
            }
            for (LogRecord r : records) {
                assertThat(r.offset()).isEqualTo(expected[0]++);
                valueAt.put(r.offset(), new String(r.value(), StandardCharsets.UTF_8));
            }
            return true;
        });
        assertThat(end.offset()).isEqualTo(expected[0]);
        assertThat(reader.segmentBases()).as("segments rolled while writers raced").hasSizeGreaterThan(3);
        // Without real overlap this test would prove nothing about the lock.
        assertThat(writerSwitches[0]).as("times the log passes from one writer to another").isGreaterThan(100);

        // Every acknowledged batch is in the log exactly once, at the offsets it was acknowledged with.
        int acked = 0;
        for (Path ack : ackFiles) {
            for (String line : Files.readAllLines(ack)) {
                String[] f = line.split(" ");
                long base = Long.parseLong(f[0]);
                long last = Long.parseLong(f[1]);
                String payloadId = f[2];
                for (long o = base; o <= last; o++) {
                    assertThat(valueAt.get(o)).as("offset %d acknowledged for %s", o, payloadId)
                            .isEqualTo(payloadId + "-r" + (o - base) + "|" + StressWriterMain.PADDING);
                }
                assertThat(batchesPerPayload.get(payloadId)).as("copies of %s in the log", payloadId).isEqualTo(1);
                acked++;
            }
        }
        assertThat(acked).isEqualTo(WRITERS * BATCHES_PER_WRITER);
        assertThat(batchesPerPayload).hasSize(acked);

        // Kafka's own reader agrees: valid CRCs, the same offsets and values, no trailing partial batch.
        List<KafkaSegments.KafkaRecord> kafka = KafkaSegments.readAll(reader.directory());
        assertThat(kafka).hasSize(valueAt.size());
        for (int i = 0; i < kafka.size(); i++) {
            assertThat(kafka.get(i).offset()).isEqualTo(i);
            assertThat(kafka.get(i).value()).isEqualTo(valueAt.get((long) i));
        }
    }

    private String stderrOf(int writer) throws java.io.IOException {
        Path f = tmp.resolve("stderr-" + writer + ".txt");
        return Files.exists(f) ? Files.readString(f) : "";
    }
}
