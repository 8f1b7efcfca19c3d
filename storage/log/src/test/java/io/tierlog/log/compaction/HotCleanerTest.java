package io.tierlog.log.compaction;

import io.tierlog.log.HotLog;
import io.tierlog.log.AppendResult;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.ReadResult;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.testing.KafkaSegments;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class HotCleanerTest {
    static final TopicConfig COMPACT = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 2048,
            TopicConfig.CLEANUP_POLICY, "compact", TopicConfig.DELETE_RETENTION_MS, 60_000));

    @TempDir
    Path data;
    final TopicPartition tp = new TopicPartition("table", 0);
    final ManualClock clock = new ManualClock(1_800_000_000_000L);
    PartitionWriter writer;
    HotCleaner cleaner;

    @BeforeEach
    void setUp() {
        writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        cleaner = new HotCleaner(data, clock);
    }

    @AfterEach
    void tearDown() throws IOException {
        writer.close();
    }

    AppendResult put(String key, String value) {
        return put(key, value, ProducerIdentity.NONE);
    }

    AppendResult put(String key, String value, ProducerIdentity producer) {
        clock.advance(Duration.ofMillis(1));
        return writer.append(List.of(record(key, value)), producer, COMPACT);
    }

    AppendRecord record(String key, String value) {
        return new AppendRecord(key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis());
    }

    PartitionReader reader() {
        return new HotLog(data).reader(tp);
    }

    List<LogRecord> readAll() {
        List<LogRecord> out = new ArrayList<>();
        long next = reader().segmentBases().get(0);
        while (true) {
            ReadResult r = reader().read(next, null, 100, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    List<BatchInfo> batches() {
        List<BatchInfo> out = new ArrayList<>();
        long first = reader().segmentBases().get(0);
        reader().scan(new Position(first, first, 0), (info, b) -> out.add(info));
        return out;
    }

    static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** Key to its last value, reading the log in order (a tombstone removes the key). */
    static Map<String, String> table(List<LogRecord> log) {
        Map<String, String> t = new LinkedHashMap<>();
        for (LogRecord r : log) {
            if (r.value() == null) {
                t.remove(text(r.key()));
            } else {
                t.put(text(r.key()), text(r.value()));
            }
        }
        return t;
    }

    long activeBase() {
        List<Long> bases = reader().segmentBases();
        return bases.get(bases.size() - 1);
    }

    @Test
    void keepsTheLastRecordOfEachKeyWithOffsetsTimestampsAndBatchHeadersUnchanged() throws Exception {
        for (int round = 0; round < 40; round++) {
            for (int k = 0; k < 5; k++) {
                put("k" + k, "v" + round + "-" + "x".repeat(100));
            }
        }
        put(null, "no key");
        List<LogRecord> before = readAll();
        List<BatchInfo> batchesBefore = batches();
        long active = activeBase();
        byte[] activeBytes = Files.readAllBytes(SegmentFiles.log(reader().directory(), active));
        assertThat(reader().segmentBases()).hasSizeGreaterThan(10);

        CleanResult result = cleaner.clean(tp, COMPACT, Long.MAX_VALUE);

        assertThat(result.ran()).isTrue();
        assertThat(result.segmentsRewritten()).isPositive();
        assertThat(result.bytesAfter()).isLessThan(result.cleanableBytes());
        List<LogRecord> after = readAll();
        assertThat(after.size()).isLessThan(before.size());
        assertThat(table(after)).isEqualTo(table(before));
        // Survivors are the original records at their original offsets, in order.
        Map<Long, LogRecord> byOffset = new HashMap<>();
        before.forEach(r -> byOffset.put(r.offset(), r));
        long last = -1;
        for (LogRecord r : after) {
            assertThat(r.offset()).isGreaterThan(last);
            last = r.offset();
            LogRecord original = byOffset.get(r.offset());
            assertThat(text(r.key())).isEqualTo(text(original.key()));
            assertThat(text(r.value())).isEqualTo(text(original.value()));
            assertThat(r.timestamp()).isEqualTo(original.timestamp());
        }
        // In the cleaned range, only each key's last record (and the keyless one) is left.
        Map<String, Long> lastOffsetOfKey = new HashMap<>();
        before.stream().filter(r -> r.offset() < active && r.key() != null)
                .forEach(r -> lastOffsetOfKey.put(text(r.key()), r.offset()));
        assertThat(after.stream().filter(r -> r.offset() < active && r.key() != null).map(LogRecord::offset).toList())
                .containsExactlyInAnyOrderElementsOf(lastOffsetOfKey.values());
        // Every batch header is still there (empty batches keep producer state and dense batch offsets).
        assertThat(batches()).extracting(BatchInfo::baseOffset, BatchInfo::lastOffset)
                .isEqualTo(batchesBefore.stream().map(b -> org.assertj.core.groups.Tuple.tuple(b.baseOffset(),
                        b.lastOffset())).toList());
        // The active segment is untouched; Kafka's reader validates every CRC and finds no partial batch.
        assertThat(Files.readAllBytes(SegmentFiles.log(reader().directory(), active))).isEqualTo(activeBytes);
        assertThat(KafkaSegments.readAll(reader().directory())).hasSize(after.size());
        // The writer goes on appending after the cleaned segments, at the next offset.
        assertThat(put("k0", "after").baseOffset()).isEqualTo(before.get(before.size() - 1).offset() + 1);
    }

    @Test
    void aSecondPassWithNothingNewDoesNothingAndTheDirtyRatioGatesThePass() {
        for (int round = 0; round < 30; round++) {
            put("k" + (round % 3), "v" + round + "x".repeat(200));
        }
        assertThat(cleaner.clean(tp, COMPACT, Long.MAX_VALUE).ran()).isTrue();
        CleanResult again = cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        assertThat(again.ran()).isFalse();
        assertThat(again.dirtyRatio()).isZero();

        // A little new data against a large cleaned range stays under a high ratio, and passes a low one.
        put("k1", "y".repeat(1500));
        put("k1", "y".repeat(1500));
        TopicConfig high = COMPACT.with(Map.of(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.99));
        CleanResult gated = cleaner.clean(tp, high, Long.MAX_VALUE);
        assertThat(gated.ran()).isFalse();
        assertThat(gated.dirtyRatio()).isBetween(0.01, 0.99);
        assertThat(cleaner.clean(tp, COMPACT.with(Map.of(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO, 0.01)), Long.MAX_VALUE)
                .ran()).isTrue();
    }

    @Test
    void aDeleteTopicIsNeverCleaned() {
        for (int round = 0; round < 30; round++) {
            put("k", "v" + round + "x".repeat(200));
        }
        List<LogRecord> before = readAll();
        assertThat(cleaner.clean(tp, TopicConfig.DEFAULTS, Long.MAX_VALUE).ran()).isFalse();
        assertThat(readAll()).hasSameSizeAs(before);
    }

    @Test
    void tombstonesStayForDeleteRetentionThenGoWithoutNewWrites() {
        for (int round = 0; round < 10; round++) {
            put("gone", "v" + round + "x".repeat(200));
            put("stays", "v" + round + "x".repeat(200));
        }
        AppendResult tombstone = put("gone", null);
        for (int i = 0; i < 10; i++) {
            put("filler", "f" + i + "x".repeat(300));
        }
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        List<LogRecord> kept = readAll();
        assertThat(kept).anySatisfy(r -> assertThat(r.offset()).isEqualTo(tombstone.baseOffset()));
        assertThat(kept).noneMatch(r -> "gone".equals(text(r.key())) && r.value() != null);

        // Before the horizon a pass keeps it; once delete.retention.ms has passed, the next pass drops it, although
        // nothing was written since (the checkpoint remembers the horizon).
        clock.advance(Duration.ofMillis(59_000));
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        assertThat(readAll()).anySatisfy(r -> assertThat(r.offset()).isEqualTo(tombstone.baseOffset()));
        clock.advance(Duration.ofMillis(2_000));
        CleanResult late = cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        assertThat(late.ran()).isTrue();
        List<LogRecord> after = readAll();
        assertThat(after).noneMatch(r -> "gone".equals(text(r.key())));
        assertThat(table(after)).containsKeys("stays", "filler");
    }

    @Test
    void minCompactionLagAndTheCallersBoundKeepYoungAndUnboundedSegmentsAsWritten() {
        for (int round = 0; round < 30; round++) {
            put("k", "v" + round + "x".repeat(200));
        }
        List<Long> bases = reader().segmentBases();
        assertThat(bases).hasSizeGreaterThan(4);
        // Only the segments that end at or below bases[2] may be cleaned.
        cleaner.clean(tp, COMPACT, bases.get(2));
        List<LogRecord> after = readAll();
        assertThat(after.stream().filter(r -> r.offset() >= bases.get(2)).count())
                .isEqualTo(30 - bases.get(2));
        assertThat(after.stream().filter(r -> r.offset() < bases.get(2)).count()).isEqualTo(1);

        // Every record is younger than an hour: nothing is cleanable.
        TopicConfig lag = COMPACT.with(Map.of(TopicConfig.MIN_COMPACTION_LAG_MS, 3_600_000));
        int count = readAll().size();
        assertThat(new HotCleaner(data, clock).clean(tp, lag, Long.MAX_VALUE).ran()).isFalse();
        assertThat(readAll()).hasSize(count);
        clock.advance(Duration.ofHours(2));
        assertThat(new HotCleaner(data, clock).clean(tp, lag, Long.MAX_VALUE).ran()).isTrue();
        assertThat(readAll().size()).isLessThan(count);
    }

    @Test
    void idempotentProducersStateSurvivesCleaningAndARetryIsStillADuplicate() throws IOException {
        ProducerIdentity p = new ProducerIdentity(42, (short) 0, 0);
        List<AppendResult> acked = new ArrayList<>();
        for (int seq = 0; seq < 20; seq++) {
            acked.add(put("same", "v" + seq + "x".repeat(300), new ProducerIdentity(42, (short) 0, seq)));
        }
        put("other", "roll" + "x".repeat(1800));
        put("other", "roll" + "x".repeat(1800));
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        assertThat(readAll().stream().filter(r -> "same".equals(text(r.key())))).hasSize(1);

        // A new writer that rebuilds producer state from the cleaned log alone (no snapshot).
        writer.close();
        try (Stream<Path> files = Files.list(reader().directory())) {
            for (Path f : files.filter(f -> f.toString().endsWith(SegmentFiles.SNAPSHOT_SUFFIX)).toList()) {
                Files.delete(f);
            }
        }
        writer = new HotLog(data).writer(tp, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        AppendResult retry = writer.append(List.of(record("same", "retried")), new ProducerIdentity(42, (short) 0, 19),
                COMPACT);
        assertThat(retry.duplicate()).isTrue();
        assertThat(retry.baseOffset()).isEqualTo(acked.get(19).baseOffset());
        AppendResult next = writer.append(List.of(record("same", "next")), new ProducerIdentity(42, (short) 0, 20),
                COMPACT);
        assertThat(next.duplicate()).isFalse();
        assertThat(p.producerId()).isEqualTo(42);
    }

    @Test
    void aReadHintFromBeforeCleaningStillFindsTheRightRecords() {
        for (int round = 0; round < 60; round++) {
            put("k" + (round % 4), "v" + round + "x".repeat(100));
        }
        // A hint as the index gives it: the boundary of a batch in the middle of a sealed segment.
        List<BatchInfo> all = batches();
        BatchInfo mid = all.stream().filter(b -> b.position() > 600 && b.segmentBase() != activeBase()).findFirst()
                .orElseThrow();
        Position hint = new Position(mid.baseOffset(), mid.segmentBase(), mid.position());

        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);

        List<LogRecord> expected = readAll().stream().filter(r -> r.offset() >= mid.baseOffset()).toList();
        ReadResult hinted = reader().read(mid.baseOffset(), hint, 1000, 1 << 20);
        assertThat(hinted.records()).extracting(LogRecord::offset)
                .isEqualTo(expected.stream().map(LogRecord::offset).toList().subList(0, hinted.records().size()));
        assertThat(hinted.records()).isNotEmpty();
        try (var batches = reader().readBatches(mid.baseOffset(), hint, 1000, 1 << 20)) {
            assertThat(batches.records()).isPositive();
        }
        assertThat(reader().end(new Position(mid.baseOffset(), mid.segmentBase(), mid.position())).offset())
                .isEqualTo(60);

        // A stale hint that lands on a boundary of the new file, of a later batch than the one it names: the reader
        // must not start there (it would skip the survivors in between).
        List<LogRecord> survivors = readAll();
        List<BatchInfo> cleaned = batches();
        LogRecord firstSurvivor = survivors.get(0);
        long segment = cleaned.stream().filter(b -> b.baseOffset() <= firstSurvivor.offset()
                && firstSurvivor.offset() <= b.lastOffset()).findFirst().orElseThrow().segmentBase();
        List<BatchInfo> inSegment = cleaned.stream().filter(b -> b.segmentBase() == segment).toList();
        BatchInfo later = inSegment.get(inSegment.size() - 1);
        assertThat(firstSurvivor.offset()).isLessThan(later.baseOffset());
        ReadResult fromStale = reader().read(firstSurvivor.offset(),
                new Position(firstSurvivor.offset(), segment, later.position()), 1000, 1 << 20);
        assertThat(fromStale.records().get(0).offset()).isEqualTo(firstSurvivor.offset());
    }

    @Test
    void aReadInFlightOnTheOldFileFinishesWithTheOldRecords() {
        for (int round = 0; round < 60; round++) {
            put("k" + (round % 4), "v" + round + "x".repeat(100));
        }
        long first = reader().segmentBases().get(0);
        List<Long> seen = new ArrayList<>();
        boolean[] cleaned = {false};
        // The walk is inside the first segment when the cleaner swaps it (and the others) for compacted copies.
        reader().scan(new Position(first, first, 0), (info, batch) -> {
            if (!cleaned[0]) {
                cleaned[0] = cleaner.clean(tp, COMPACT, Long.MAX_VALUE).segmentsRewritten() > 0;
            }
            List<LogRecord> records = new ArrayList<>();
            io.tierlog.log.format.RecordBatchCodec.decode(batch, 0, Integer.MAX_VALUE, records);
            records.forEach(r -> seen.add(r.offset()));
            return info.segmentBase() == first;
        });
        assertThat(cleaned[0]).isTrue();
        // Every record of the first segment as it was when the walk opened it.
        long secondBase = reader().segmentBases().get(1);
        assertThat(seen.stream().filter(o -> o < secondBase).toList())
                .isEqualTo(java.util.stream.LongStream.range(first, secondBase).boxed().toList());
    }

    @Test
    void kafkasDumpLogSegmentsReadsACleanedSegmentAsValid() throws Exception {
        for (int round = 0; round < 30; round++) {
            put("k" + (round % 3), "v" + round + "x".repeat(200));
        }
        put("k0", null);
        for (int i = 0; i < 10; i++) {
            put("f", "x".repeat(300));
        }
        cleaner.clean(tp, COMPACT, Long.MAX_VALUE);
        Path segment = SegmentFiles.log(reader().directory(), reader().segmentBases().get(0));
        try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
            int empty = 0;
            for (FileChannelRecordBatch b : records.batches()) {
                b.ensureValid();
                if (b.countOrNull() != null && b.countOrNull() == 0) {
                    empty++;
                }
            }
            assertThat(empty).as("emptied batches kept as headers").isPositive();
        }
        Path out = data.resolve("dump.txt");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.DumpLogSegments",
                "--files", segment.toString(), "--deep-iteration", "--print-data-log")
                .redirectOutput(out.toFile()).redirectErrorStream(true).start();
        assertThat(p.waitFor(90, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String dump = Files.readString(out);
        assertThat(p.exitValue()).as(dump).isZero();
        assertThat(dump).contains("isvalid: true").doesNotContain("isvalid: false").doesNotContain("Exception");
    }
}
