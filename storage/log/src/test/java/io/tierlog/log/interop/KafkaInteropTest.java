package io.tierlog.log.interop;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.topic.TopicConfig;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte compatibility with Kafka, proven by Kafka's own tools: {@code kafka-tools}' DumpLogSegments (run as a
 * separate JVM, since a tool's error path may call {@code Exit.exit}) reads a segment we wrote and shows valid
 * CRCs, the offsets we assigned, our producer fields, keys and values; kafka-clients' {@link FileRecords} shows
 * the header values, which DumpLogSegments does not print.
 */
@Tag("slow")
class KafkaInteropTest {
    private static final long TIMESTAMP = 1_732_867_200_000L;

    @TempDir
    Path data;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void kafkasDumpLogSegmentsReadsOurSegment() throws Exception {
        TopicPartition tp = new TopicPartition("interop", 0);
        List<AppendResult> results = new ArrayList<>();
        try (PartitionWriter writer = new HotLog(data).writer(tp, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                new ManualClock(TIMESTAMP))) {
            results.add(writer.append(List.of(
                    record("user-42", "{\"any\":\"json\"}", new Header("trace", bytes("abc"))),
                    record("user-7", null)), new ProducerIdentity(77, (short) 3, 9), TopicConfig.DEFAULTS));
            results.add(writer.append(List.of(record(null, "no-key-1"), record(null, "no-key-2"), record("k", "v",
                    new Header("a", bytes("1")), new Header("b", null))), ProducerIdentity.NONE, TopicConfig.DEFAULTS));
            // Kafka's numbering: the first batch's two records took sequences 9 and 10.
            results.add(writer.append(List.of(record("user-42", "second")), new ProducerIdentity(77, (short) 3, 11),
                    TopicConfig.DEFAULTS));
        }
        assertThat(results).extracting(AppendResult::baseOffset).containsExactly(0L, 2L, 5L);
        Path segment = SegmentFiles.log(data.resolve(tp.dirName()), 0);

        String dump = dumpLogSegments(segment);

        assertThat(dump).contains("Dumping " + segment);
        List<String> batchLines = dump.lines().filter(l -> l.startsWith("baseOffset:")).toList();
        assertThat(batchLines).hasSize(3);
        assertThat(batchLines).allSatisfy(l -> assertThat(l).contains("isvalid: true").contains("magic: 2")
                .contains("compresscodec: none"));
        assertThat(dump).doesNotContain("isvalid: false");
        assertThat(batchLines.get(0)).contains("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 9")
                .as("Kafka's own tool numbers the records' sequences as we do").contains("lastSequence: 10")
                .contains("producerId: 77 producerEpoch: 3").contains("position: 0");
        assertThat(batchLines.get(1)).contains("baseOffset: 2 lastOffset: 4 count: 3 baseSequence: -1")
                .contains("producerId: -1 producerEpoch: -1");
        assertThat(batchLines.get(2)).contains("baseOffset: 5 lastOffset: 5 count: 1 baseSequence: 11")
                .contains("producerId: 77 producerEpoch: 3");

        List<String> recordLines = dump.lines().filter(l -> l.startsWith("| offset:")).toList();
        assertThat(recordLines).hasSize(6);
        assertThat(recordLines.get(0)).contains("offset: 0 CreateTime: " + TIMESTAMP)
                .contains("headerKeys: [trace]").contains("key: user-42 payload: {\"any\":\"json\"}");
        assertThat(recordLines.get(1)).contains("offset: 1").contains("key: user-7").contains("valueSize: -1");
        assertThat(recordLines.get(2)).contains("offset: 2").contains("keySize: -1").contains("payload: no-key-1");
        assertThat(recordLines.get(4)).contains("offset: 4").contains("headerKeys: [a,b]").contains("key: k payload: v");
        assertThat(recordLines.get(5)).contains("offset: 5").contains("key: user-42 payload: second");
        assertThat(dump).doesNotContain("Found").doesNotContain("Exception");

        // Header values, through kafka-clients' reader of the same file.
        try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
            List<Record> all = new ArrayList<>();
            for (FileChannelRecordBatch b : records.batches()) {
                b.forEach(all::add);
            }
            assertThat(all).hasSize(6);
            assertThat(all.get(0).headers()).hasSize(1);
            assertThat(all.get(0).headers()[0].key()).isEqualTo("trace");
            assertThat(new String(all.get(0).headers()[0].value(), StandardCharsets.UTF_8)).isEqualTo("abc");
            assertThat(all.get(4).headers()[1].key()).isEqualTo("b");
            assertThat(all.get(4).headers()[1].value()).isNull();
            assertThat(all.get(1).hasValue()).as("tombstone").isFalse();
        }
    }

    /** Runs Kafka's DumpLogSegments in its own JVM on this test's classpath and returns its stdout. */
    private String dumpLogSegments(Path segment) throws IOException, InterruptedException {
        Path out = data.resolve("dump.txt");
        Path err = data.resolve("dump.err");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.DumpLogSegments",
                "--files", segment.toString(), "--deep-iteration", "--print-data-log")
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
        String dump = Files.readString(out);
        assertThat(p.exitValue()).as("DumpLogSegments exit; stdout: %s; stderr: %s", dump, Files.readString(err)).isZero();
        return dump;
    }

    private static AppendRecord record(String key, String value, Header... headers) {
        return new AppendRecord(key == null ? null : bytes(key), value == null ? null : bytes(value), List.of(headers),
                TIMESTAMP);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
