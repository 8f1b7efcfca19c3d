package io.tierlog.ingest;

import io.tierlog.log.HotLog;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.tierlog.ingest.KafkaBatches.T0;
import static io.tierlog.ingest.KafkaBatches.builder;
import static io.tierlog.ingest.KafkaBatches.bytes;
import static io.tierlog.ingest.KafkaBatches.concat;
import static io.tierlog.ingest.KafkaBatches.header;
import static io.tierlog.ingest.KafkaBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Record batches compressed with each of Kafka's codecs, as a Kafka producer with {@code compression.type} sends
 * them: stored compressed as sent, read back decompressed, every record rule checked inside them, and bounded in
 * what they may decompress to.
 */
class CompressedBatchProduceTest {
    private static final String TOPIC = "zipped";
    private static final int MAX_REQUEST_BYTES = 256 * 1024;
    private static final int MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_800_000_000_000L);
    private IngestService service;

    @BeforeEach
    void start() {
        service = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), MAX_REQUEST_BYTES),
                clock, 0);
        service.topics().create(TOPIC, 1,
                TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES)));
    }

    @AfterEach
    void stop() {
        service.close();
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void aCompressedBatchIsStoredAsSentAndReadBackDecompressed(CompressionType codec) throws IOException {
        MemoryRecordsBuilder b = compressed(codec);
        for (int i = 0; i < 50; i++) {
            b.append(T0 + i, bytes("key-" + i), bytes("value " + i + " ".repeat(100)),
                    new org.apache.kafka.common.header.Header[]{header("trace", "t" + i)});
        }
        ByteBuffer body = b.build().buffer();
        ByteBuffer sent = concat(body);

        BatchProduceResult r = service.produceBatches(TOPIC, 0, body);

        assertThat(r).isEqualTo(new BatchProduceResult(0, 0, 50, false));
        byte[] stored = Files.readAllBytes(reader().directory().resolve("00000000000000000000.log"));
        assertThat(stored.length).as("compressed on disk").isEqualTo(sent.remaining()).isLessThan(50 * 100);
        assertThat(ByteBuffer.wrap(stored, 16, stored.length - 16)).isEqualTo(sent.duplicate().position(16));
        assertThat(ByteBuffer.wrap(stored).getShort(21) & 7).isEqualTo(codec.id);

        List<LogRecord> read = read();
        assertThat(read).extracting(LogRecord::offset).containsExactlyElementsOf(
                java.util.stream.LongStream.range(0, 50).boxed().toList());
        assertThat(str(read.get(7).key())).isEqualTo("key-7");
        assertThat(str(read.get(7).value())).isEqualTo("value 7" + " ".repeat(100));
        assertThat(read.get(7).timestamp()).isEqualTo(T0 + 7);
        assertThat(read.get(7).headers()).extracting(Header::name).containsExactly("trace");
    }

    @Test
    void aMissingTimestampIsStampedAndTheRebuiltBatchKeepsItsCodec() throws IOException {
        MemoryRecordsBuilder b = compressed(CompressionType.ZSTD);
        b.append(RecordBatch.NO_TIMESTAMP, null, bytes("when?"));
        b.append(T0, null, bytes("then"));

        service.produceBatches(TOPIC, 0, b.build().buffer());

        assertThat(read()).extracting(LogRecord::timestamp).containsExactly(clock.millis(), T0);
        byte[] stored = Files.readAllBytes(reader().directory().resolve("00000000000000000000.log"));
        assertThat(ByteBuffer.wrap(stored).getShort(21) & 7).isEqualTo(CompressionType.ZSTD.id);
    }

    @Test
    void batchesOfOneCodecMergeCompressedAndMixedOnesMergeUncompressed() throws IOException {
        ByteBuffer lz4a = values(compressed(CompressionType.LZ4), "a", "b");
        ByteBuffer lz4b = values(compressed(CompressionType.LZ4), "c");
        ByteBuffer plain = values("d");

        service.produceBatches(TOPIC, 0, concat(lz4a, lz4b));
        service.produceBatches(TOPIC, 0, concat(values(compressed(CompressionType.LZ4), "e"), plain));

        assertThat(read()).extracting(r -> str(r.value())).containsExactly("a", "b", "c", "e", "d");
        ByteBuffer stored = ByteBuffer.wrap(Files.readAllBytes(reader().directory().resolve("00000000000000000000.log")));
        int second = 12 + stored.getInt(8);
        assertThat(stored.getShort(21) & 7).as("first merged batch").isEqualTo(CompressionType.LZ4.id);
        assertThat(stored.getShort(second + 21) & 7).as("second merged batch").isZero();
    }

    @Test
    void aRecordTooLargeInsideACompressedBatchIsNamedAndNothingIsAppended() {
        MemoryRecordsBuilder b = compressed(CompressionType.GZIP);
        b.append(T0, null, bytes("small"));
        b.append(T0, null, new byte[MAX_MESSAGE_BYTES + 1]); // zeros: a few KiB once compressed

        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> service.produceBatches(TOPIC, 0, b.build().buffer()));

        assertThat(e.type()).isEqualTo(ErrorType.RECORD_TOO_LARGE);
        assertThat(e.extra()).containsEntry("field", "records[1]");
        assertThat(reader().end(null).offset()).as("end of the log").isZero();
    }

    @Test
    void aBodyThatDecompressesBeyondTheLimitIsRefusedAndNothingIsAppended() {
        // 40 records of 2 MiB of zeros: 80 MiB of records in a body of a few hundred KiB.
        MemoryRecordsBuilder b = compressed(CompressionType.ZSTD);
        byte[] zeros = new byte[MAX_MESSAGE_BYTES - 100];
        int records = ClientBatchValidator.MAX_DECOMPRESSED_BYTES / zeros.length + 2;
        for (int i = 0; i < records; i++) {
            b.append(T0, null, zeros);
        }
        ByteBuffer body = b.build().buffer();
        assertThat(body.remaining()).isLessThan(MAX_REQUEST_BYTES);

        TierlogException e = catchThrowableOfType(TierlogException.class, () -> service.produceBatches(TOPIC, 0, body));

        assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE);
        assertThat(e.extra()).containsEntry("field", "body");
        assertThat(e.getMessage()).contains("decompress to more than");
        assertThat(reader().end(null).offset()).as("end of the log").isZero();
    }

    private static MemoryRecordsBuilder compressed(CompressionType codec) {
        return builder(Compression.of(codec).build(), TimestampType.CREATE_TIME, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false);
    }

    private PartitionReader reader() {
        return new HotLog(data).reader(new TopicPartition(TOPIC, 0));
    }

    private List<LogRecord> read() {
        return reader().read(0, null, 1000, 64 << 20).records();
    }

    private static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
