package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What writers record for the indexer: each append in order, with its keys, and nothing past the bounds. */
class AppendJournalTest {
    private static final TopicPartition TP = new TopicPartition("journal", 0);
    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(1_800_000_000_000L), ZoneOffset.UTC);

    @TempDir
    Path data;

    @Test
    void aWriterRecordsEachAppendWithItsPlaceCrcAndKeysInOrder() throws IOException {
        AppendJournal journal = new AppendJournal();
        HotLog log = new HotLog(data, journal);
        try (PartitionWriter w = log.writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            w.append(List.of(record("a", "1"), record(null, "2")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            w.append(List.of(record("b", null)), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
        }
        List<AppendedBatch> taken = journal.take(TP);
        List<BatchInfo> onDisk = new ArrayList<>();
        List<Integer> crcs = new ArrayList<>();
        log.reader(TP).scan(new Position(0, 0, 0), (info, batch) -> {
            onDisk.add(info);
            crcs.add(batch.getInt(batch.position() + RecordBatchCodec.CRC_OFFSET));
            return true;
        });
        assertThat(taken).extracting(AppendedBatch::info).containsExactlyElementsOf(onDisk);
        assertThat(taken).extracting(AppendedBatch::crc).containsExactlyElementsOf(crcs);
        assertThat(keys(taken.get(0))).containsExactly("a@0");
        assertThat(keys(taken.get(1))).containsExactly("b@2 tombstone");
        assertThat(journal.take(TP)).as("taken once").isEmpty();
    }

    @Test
    void aPartitionOverItsBoundIsEmptiedSoTheIndexerReadsTheLog() throws IOException {
        AppendJournal journal = new AppendJournal();
        try (PartitionWriter w = new HotLog(data, journal).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < AppendJournal.MAX_BATCHES; i++) {
                w.append(List.of(record("k", "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            }
            assertThat(journal.take(TP)).hasSize(AppendJournal.MAX_BATCHES);
            for (int i = 0; i <= AppendJournal.MAX_BATCHES; i++) {
                w.append(List.of(record("k", "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            }
            assertThat(journal.take(TP)).as("one over the bound").isEmpty();
        }
    }

    /** The process-wide bound: a partition whose batch would pass it is emptied, the others keep theirs. */
    @Test
    void allPartitionsTogetherStayUnderTheProcessBound() throws IOException {
        TopicPartition other = new TopicPartition("journal", 1);
        AppendJournal journal = new AppendJournal(4096);
        HotLog log = new HotLog(data, journal);
        try (PartitionWriter a = log.writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
             PartitionWriter b = log.writer(other, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            for (int i = 0; i < 3; i++) {
                a.append(List.of(record("k".repeat(1000), "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            }
            b.append(List.of(record("k".repeat(1000), "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            assertThat(journal.heldBytes()).isLessThanOrEqualTo(4096);
            assertThat(journal.take(other)).as("over the process's bound").isEmpty();
            assertThat(journal.take(TP)).hasSize(3);
            assertThat(journal.heldBytes()).isZero();

            b.append(List.of(record("k".repeat(1000), "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
            assertThat(journal.take(other)).as("room again once taken").hasSize(1);
        }
    }

    @Test
    void deletingThePartitionDropsWhatWasRecorded() throws IOException {
        AppendJournal journal = new AppendJournal();
        HotLog log = new HotLog(data, journal);
        try (PartitionWriter w = log.writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            w.append(List.of(record("k", "v")), ProducerIdentity.NONE, TopicConfig.DEFAULTS);
        }
        log.deletePartition(TP);
        assertThat(journal.heldBytes()).isZero();
        assertThat(journal.take(TP)).isEmpty();
    }

    private AppendRecord record(String key, String value) {
        return new AppendRecord(key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value == null ? null : value.getBytes(StandardCharsets.UTF_8), List.of(), clock.millis());
    }

    private static List<String> keys(AppendedBatch batch) {
        List<String> out = new ArrayList<>();
        batch.forEachKey((key, offset, tombstone) -> {
            ByteBuffer k = key.duplicate();
            byte[] bytes = new byte[k.remaining()];
            k.get(bytes);
            out.add(new String(bytes, StandardCharsets.UTF_8) + "@" + offset + (tombstone ? " tombstone" : ""));
        });
        return out;
    }
}
