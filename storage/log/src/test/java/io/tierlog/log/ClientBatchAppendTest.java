package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatch;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.testing.KafkaSegments;
import io.tierlog.log.testing.KafkaSegments.KafkaRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link PartitionWriter#append(ClientBatch, TopicConfig)}: client-built batches (kafka-clients'
 * {@code MemoryRecordsBuilder}) go through the same append core as our own batches: dense offsets stamped under the
 * lock, segment rolls, producer state and its checkpoints; Kafka's own {@code FileRecords} reads the result.
 */
class ClientBatchAppendTest {
    private static final TopicPartition TP = new TopicPartition("clients", 0);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void clientAndOwnBatchesInterleaveWithDenseOffsetsAcrossSegmentRolls() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024));
        List<AppendResult> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        try (PartitionWriter w = writer()) {
            for (int i = 0; i < 12; i++) {
                String a = "own-" + i + "-a|" + "x".repeat(150);
                String b = "own-" + i + "-b|" + "x".repeat(150);
                String c = "client-" + i + "-c|" + "y".repeat(150);
                String d = "client-" + i + "-d|" + "y".repeat(150);
                results.add(w.append(List.of(record(a), record(b)), ProducerIdentity.NONE, config));
                results.add(w.append(clientBatch(kafkaBuilder(-1, -1, -1), c, d), config));
                expected.addAll(List.of(a, b, c, d));
            }
        }
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i)).isEqualTo(new AppendResult(2L * i, 2L * i + 1, false));
        }
        PartitionReader reader = new PartitionReader(data, TP);
        assertThat(reader.segmentBases()).hasSizeGreaterThan(3)
                .allSatisfy(base -> assertThat(results).anyMatch(r -> r.baseOffset() == base));
        for (long base : reader.segmentBases()) {
            assertThat(Files.size(SegmentFiles.log(reader.directory(), base))).isLessThanOrEqualTo(1024);
        }
        // Kafka's reader checks every CRC (the client's CRCs, kept as sent) and sees dense offsets.
        List<KafkaRecord> kafka = KafkaSegments.readAll(reader.directory());
        assertThat(kafka).extracting(KafkaRecord::offset)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 48).boxed().toList());
        assertThat(kafka).extracting(KafkaRecord::value).containsExactlyElementsOf(expected);
        assertThat(reader.read(0, null, 100, 1 << 20).records()).hasSize(48);
    }

    @Test
    void aClientBatchRollsAnOldSegmentLikeAnyAppend() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_MS, 60_000));
        try (PartitionWriter w = writer()) {
            w.append(clientBatch(kafkaBuilder(-1, -1, -1), "a"), config);
            clock.advance(Duration.ofMillis(60_000));
            assertThat(w.append(clientBatch(kafkaBuilder(-1, -1, -1), "b", "c"), config).baseOffset()).isEqualTo(1);
        }
        assertThat(new PartitionReader(data, TP).segmentBases()).containsExactly(0L, 1L);
    }

    @Test
    void producerStateFromClientBatchesSurvivesARestart() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS;
        try (PartitionWriter w = writer()) {
            // Kafka's numbering: each batch of two records starts two sequences after the previous one.
            for (int n = 0; n < 3; n++) {
                assertThat(w.append(clientBatch(kafkaBuilder(42, 3, 2 * n), "s" + n, "t" + n), config))
                        .isEqualTo(new AppendResult(2L * n, 2L * n + 1, false));
            }
        }
        try (PartitionWriter w = writer()) {
            assertThat(w.append(clientBatch(kafkaBuilder(42, 3, 2), "s1", "t1"), config))
                    .isEqualTo(new AppendResult(2, 3, true));
            TierlogException gap = catchThrowableOfType(TierlogException.class,
                    () -> w.append(clientBatch(kafkaBuilder(42, 3, 7), "gap"), config));
            assertThat(gap.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
            assertThat(gap.extra()).containsEntry("expectedSequence", 6);
            // Our own batches of the same producer continue its sequence.
            assertThat(w.append(List.of(record("own")), new ProducerIdentity(42, (short) 3, 6), config).baseOffset())
                    .isEqualTo(6);
        }
        assertThat(KafkaSegments.readAll(new PartitionReader(data, TP).directory())).hasSize(7)
                .allSatisfy(r -> assertThat(r.producerId()).isEqualTo(42));
    }

    @Test
    void aLogAppendTimeTopicStampsEveryBatchWithItsAppendTimeWhateverTheProducerSaid() throws IOException {
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MESSAGE_TIMESTAMP_TYPE, "LogAppendTime"));
        long ownAt;
        long clientAt;
        try (PartitionWriter w = writer()) {
            ownAt = clock.millis();
            AppendResult own = w.append(List.of(new AppendRecord(null, "own".getBytes(StandardCharsets.UTF_8),
                    List.of(), 1_000L)), ProducerIdentity.NONE, config);
            assertThat(own).isEqualTo(new AppendResult(0, 0, false, ownAt));
            clock.advance(Duration.ofSeconds(5));
            clientAt = clock.millis();
            MemoryRecordsBuilder b = kafkaBuilder(-1, -1, -1);
            b.append(2_000L, null, "client-a".getBytes(StandardCharsets.UTF_8));
            b.append(3_000L, null, "client-b".getBytes(StandardCharsets.UTF_8));
            ClientBatch batch = ClientBatchValidator.validate(b.build().buffer(), Integer.MAX_VALUE, clock.millis());
            assertThat(w.append(batch, config)).isEqualTo(new AppendResult(1, 2, false, clientAt));
        }
        PartitionReader reader = new PartitionReader(data, TP);
        List<Long> kafkaTimes = new ArrayList<>();
        try (FileRecords records = FileRecords.open(SegmentFiles.log(reader.directory(), 0).toFile(), false)) {
            for (FileChannelRecordBatch batch : records.batches()) {
                batch.ensureValid(); // the CRC was recomputed over the new header
                assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
                for (Record r : batch) {
                    kafkaTimes.add(r.timestamp());
                }
            }
        }
        assertThat(kafkaTimes).containsExactly(ownAt, clientAt, clientAt);
        assertThat(reader.read(0, null, 10, 1 << 20).records()).extracting(LogRecord::timestamp)
                .containsExactly(ownAt, clientAt, clientAt);
    }

    @Test
    void aCreateTimeTopicKeepsTheProducersTimestamps() throws IOException {
        try (PartitionWriter w = writer()) {
            AppendResult r = w.append(List.of(new AppendRecord(null, "v".getBytes(StandardCharsets.UTF_8),
                    List.of(), 1_000L)), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            assertThat(r.logAppendTimeMs()).isEqualTo(AppendResult.NO_TIMESTAMP);
        }
        assertThat(new PartitionReader(data, TP).read(0, null, 10, 1 << 20).records())
                .extracting(LogRecord::timestamp).containsExactly(1_000L);
    }

    private PartitionWriter writer() {
        return new PartitionWriter(data, TP, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), clock);
    }

    private AppendRecord record(String value) {
        return new AppendRecord(null, value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis());
    }

    /** A producer's builder: baseOffset 0 and leader epoch 0 (the log stamps both). */
    private static MemoryRecordsBuilder kafkaBuilder(long producerId, int epoch, int sequence) {
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        return new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) epoch, sequence, false,
                false, 0, buffer.capacity());
    }

    private ClientBatch clientBatch(MemoryRecordsBuilder b, String... values) {
        for (String v : values) {
            b.append(clock.millis(), null, v.getBytes(StandardCharsets.UTF_8));
        }
        ClientBatch batch = ClientBatchValidator.validate(b.build().buffer(), Integer.MAX_VALUE, clock.millis());
        assertThat(batch.rebuilt()).as("one batch with timestamps is appended as sent").isFalse();
        return batch;
    }
}
