package io.tierlog.ingest;

import io.tierlog.http.JsonProduce;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.HotLog;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Records produced through IngestService read back through PartitionReader: content, limits and hints. */
class ProduceThenReadTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private IngestService service;
    private PartitionReader reader;

    @BeforeEach
    void produceTenBatchesOfFive() {
        service = new IngestService(new IngestConfig(data, FsyncPolicy.NEVER, Duration.ofSeconds(1), 1 << 20), clock, 0);
        // Small segments, so the 50 records span several segments.
        service.topics().create("events", 1, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 1024)));
        for (int b = 0; b < 10; b++) {
            StringBuilder body = new StringBuilder("{\"records\": [");
            for (int i = 0; i < 5; i++) {
                int n = b * 5 + i;
                body.append(i == 0 ? "" : ",").append("{\"key\": \"k").append(n).append("\", \"value\": {\"n\": ")
                        .append(n).append("}, \"headers\": {\"h\": \"").append(n).append("\"}, \"timestamp\": ")
                        .append(1000 + n).append("}");
            }
            body.append("]}");
            JsonProduce.produce(service, "events", body.toString().getBytes(StandardCharsets.UTF_8));
        }
        reader = new HotLog(data).reader(TP);
        assertThat(reader.segmentBases()).hasSizeGreaterThan(1);
    }

    @AfterEach
    void close() {
        service.close();
    }

    @Test
    void readsBackEveryRecordAsProduced() {
        ReadResult all = reader.read(0, null, 1000, 1 << 20);
        assertThat(all.records()).hasSize(50);
        assertThat(all.nextOffset()).isEqualTo(50);
        for (int n = 0; n < 50; n++) {
            LogRecord r = all.records().get(n);
            assertThat(r.offset()).isEqualTo(n);
            assertThat(r.timestamp()).isEqualTo(1000 + n);
            assertThat(text(r.key())).isEqualTo("k" + n);
            assertThat(text(r.value())).isEqualTo("{\"n\":" + n + "}");
            assertThat(r.headers()).hasSize(1);
            assertThat(text(r.headers().get(0).value())).isEqualTo("" + n);
        }
    }

    @Test
    void maxRecordsLimitsAndNextOffsetContinues() {
        ReadResult first = reader.read(0, null, 7, 1 << 20);
        assertThat(first.records()).extracting(LogRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
        assertThat(first.nextOffset()).isEqualTo(7);
        ReadResult second = reader.read(first.nextOffset(), null, 7, 1 << 20);
        assertThat(second.records().get(0).offset()).isEqualTo(7);
        assertThat(second.nextOffset()).isEqualTo(14);
        // Starting mid-batch skips the batch's earlier records.
        assertThat(reader.read(23, null, 1, 1 << 20).records()).extracting(LogRecord::offset).containsExactly(23L);
    }

    @Test
    void maxBytesStopsBeforeTheBudgetButAlwaysReturnsAtLeastOneRecord() {
        assertThat(reader.read(10, null, 1000, 1).records()).extracting(LogRecord::offset).containsExactly(10L);
        int three = reader.read(10, null, 3, 1 << 20).records().stream().mapToInt(LogRecord::sizeInBytes).sum();
        assertThat(reader.read(10, null, 1000, three).records()).hasSize(3);
        assertThat(reader.read(10, null, 1000, three - 1).records()).hasSize(2);
        assertThat(reader.read(10, null, 1000, three + 1).records()).hasSize(3);
    }

    @Test
    void aPositionHintStartsTheScanThereAndAWrongSegmentHintIsIgnored() {
        List<BatchInfo> batches = new ArrayList<>();
        reader.scan(new Position(reader.segmentBases().get(0), reader.segmentBases().get(0), 0), (info, b) -> batches.add(info));
        BatchInfo holding32 = batches.stream().filter(b -> b.baseOffset() <= 32 && b.lastOffset() >= 32).findFirst()
                .orElseThrow();
        Position hint = new Position(holding32.baseOffset(), holding32.segmentBase(), holding32.position());
        assertThat(reader.read(32, hint, 3, 1 << 20).records()).extracting(LogRecord::offset)
                .containsExactly(32L, 33L, 34L);
        // The end position that a scan returns is a valid hint for the next read.
        Position end = reader.end(null);
        assertThat(end.offset()).isEqualTo(50);
        assertThat(reader.read(50, end, 10, 1 << 20).records()).isEmpty();
        // A hint into another segment than the one holding the offset is not used.
        Position stale = new Position(0, 0, 0);
        assertThat(reader.read(48, stale, 10, 1 << 20).records()).extracting(LogRecord::offset).containsExactly(48L, 49L);
    }

    @Test
    void readingAtOrPastTheEndReturnsNothing() {
        ReadResult r = reader.read(50, null, 10, 1 << 20);
        assertThat(r.records()).isEmpty();
        assertThat(r.nextOffset()).isEqualTo(50);
        assertThat(reader.read(500, null, 10, 1 << 20).records()).isEmpty();
        assertThatThrownBy(() -> new HotLog(data).reader(new TopicPartition("events", 0)).read(-1, null, 1, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
