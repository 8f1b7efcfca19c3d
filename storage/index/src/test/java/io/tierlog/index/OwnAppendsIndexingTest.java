package io.tierlog.index;

import io.tierlog.log.AppendJournal;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.Position;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.CorruptLogException;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.topic.TopicConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The indexer takes this process's appends from the {@link AppendJournal} instead of reading them back, and ends
 * with the index the log itself gives: with other processes' appends, compressed batches, rolls and catch-ups by
 * reads in between, and segments rewritten under a recorded append.
 */
class OwnAppendsIndexingTest {
    private static final TopicPartition TP = new TopicPartition("table", 0);
    private static final TopicConfig SMALL_SEGMENTS = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, 8192));
    private static final int KEYS = 60;
    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(1_800_000_000_000L), ZoneOffset.UTC);

    @TempDir
    Path tmp;
    Path data;
    AppendJournal journal;
    LogIndex index;
    HotIndexer indexer;
    PartitionWriter own;
    PartitionWriter other;

    @BeforeEach
    void setUp() {
        data = tmp.resolve("data");
        journal = new AppendJournal();
        index = LogIndex.open(tmp.resolve("index"));
        indexer = new HotIndexer(index, data, HotIndexer.DEFAULT_INDEX_INTERVAL_BYTES, journal);
        own = new HotLog(data, journal).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        other = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
    }

    @AfterEach
    void tearDown() throws IOException {
        own.close();
        other.close();
        index.close();
    }

    @Test
    void ownAppendsMixedWithOtherWritersAndCompressedBatchesIndexAsTheLogDoes() throws IOException {
        Random random = new Random(3);
        for (int i = 0; i < 600; i++) {
            int kind = random.nextInt(10);
            if (kind == 0) {
                other.append(keyed(random, "other"), ProducerIdentity.NONE, SMALL_SEGMENTS);
            } else if (kind == 1) {
                own.append(ClientBatchValidator.validate(lz4Batch(random), Integer.MAX_VALUE, clock.millis()),
                        SMALL_SEGMENTS);
            } else {
                own.append(keyed(random, "own"), ProducerIdentity.NONE, SMALL_SEGMENTS);
            }
            if (random.nextInt(6) == 0) {
                indexer.catchUp(TP);
            }
        }
        assertThat(new HotLog(data).segmentBases(TP)).as("rolled often").hasSizeGreaterThan(20);
        assertSameAsTheLogAlone(indexer.catchUp(TP));
    }

    /** An own batch is indexed from the journal: damage to its value on disk goes unseen, as it was not read back. */
    @Test
    void anOwnAppendIsIndexedWithoutReadingItBack() throws IOException {
        Random random = new Random(4);
        own.append(keyed(random, "own"), ProducerIdentity.NONE, SMALL_SEGMENTS);
        Position first = indexer.catchUp(TP);
        long offset = own.append(keyed(random, "own"), ProducerIdentity.NONE, SMALL_SEGMENTS).baseOffset();
        BatchInfo appended = batchAt(offset);
        flipByte(new HotLog(data).sealedSegmentFile(TP, appended.segmentBase()), appended.endPosition() - 3);

        assertThat(indexer.catchUp(TP).offset()).isEqualTo(appended.nextOffset());
        assertThat(first.offset()).isEqualTo(appended.baseOffset());
        try (LogIndex fresh = LogIndex.open(tmp.resolve("fresh"))) {
            assertThatThrownBy(() -> new HotIndexer(fresh, data).catchUp(TP))
                    .as("read from the log, the batch fails its CRC").isInstanceOf(CorruptLogException.class);
        }
    }

    /**
     * Batches a read's catch-up indexed before the indexer took them from the journal are skipped, and the ones after
     * them are still taken from it (the damaged one would stop a walk of the log).
     */
    @Test
    void batchesAlreadyIndexedAreSkippedAndTheRestTaken() throws IOException {
        Random random = new Random(5);
        own.append(keyed(random, "own"), ProducerIdentity.NONE, SMALL_SEGMENTS);
        new HotIndexer(index, data).catchUp(TP); // a catch-up that does not take the journal
        long offset = own.append(keyed(random, "own"), ProducerIdentity.NONE, SMALL_SEGMENTS).baseOffset();
        BatchInfo appended = batchAt(offset);
        flipByte(new HotLog(data).sealedSegmentFile(TP, appended.segmentBase()), appended.endPosition() - 3);

        assertThat(indexer.catchUp(TP).offset()).isEqualTo(appended.nextOffset());
    }

    /**
     * Another instance deletes the topic and creates it again, writing batches of the same sizes at the same places
     * with other keys: the recorded batches no longer match the file (their CRC differs), so the log is read.
     */
    @Test
    void aLogRewrittenUnderRecordedAppendsIsReadFromTheFile() throws IOException {
        for (int i = 0; i < 5; i++) {
            own.append(List.of(record("key-a" + i, "v")), ProducerIdentity.NONE, SMALL_SEGMENTS);
        }
        indexer.catchUp(TP);
        for (int i = 5; i < 10; i++) {
            own.append(List.of(record("key-a" + i, "v")), ProducerIdentity.NONE, SMALL_SEGMENTS);
        }
        other.close();
        new HotLog(data).deletePartition(TP);
        other = new HotLog(data).writer(TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock);
        for (int i = 0; i < 10; i++) {
            other.append(List.of(record("key-b" + i, "v")), ProducerIdentity.NONE, SMALL_SEGMENTS);
        }

        assertThat(indexer.catchUp(TP).offset()).isEqualTo(10);
        // Offsets 0-4 were indexed before the rewrite; the checkpoint at 5 is a batch boundary of the new log too.
        for (int i = 5; i < 10; i++) {
            assertThat(index.latestOffset(TP, ("key-b" + i).getBytes(StandardCharsets.UTF_8))).hasValue(i);
            assertThat(index.latestOffset(TP, ("key-a" + i).getBytes(StandardCharsets.UTF_8))).isEmpty();
        }
    }

    /** The index built from the journal answers as one built by reading the whole log. */
    private void assertSameAsTheLogAlone(Position end) {
        try (LogIndex fromLog = LogIndex.open(tmp.resolve("from-log"))) {
            assertThat(new HotIndexer(fromLog, data).catchUp(TP)).isEqualTo(end);
            assertThat(index.indexedEnd(TP)).isEqualTo(fromLog.indexedEnd(TP));
            for (long offset = 0; offset < end.offset(); offset++) {
                assertThat(index.floor(TP, offset)).as("floor(%d)", offset).isEqualTo(fromLog.floor(TP, offset));
            }
            for (long ts = clock.millis() - 5; ts < clock.millis() + 1000; ts += 7) {
                assertThat(index.forTimestamp(TP, ts)).as("time %d", ts).isEqualTo(fromLog.forTimestamp(TP, ts));
            }
            for (String prefix : List.of("own", "other", "lz4")) {
                for (int k = 0; k < KEYS; k++) {
                    byte[] key = (prefix + "-" + k).getBytes(StandardCharsets.UTF_8);
                    assertThat(index.latestOffset(TP, key)).as("%s-%d", prefix, k)
                            .isEqualTo(fromLog.latestOffset(TP, key));
                }
            }
        }
    }

    private BatchInfo batchAt(long baseOffset) {
        List<BatchInfo> found = new ArrayList<>();
        new HotLog(data).reader(TP).scan(new Position(0, 0, 0), (info, batch) -> {
            if (info.baseOffset() == baseOffset) {
                found.add(info);
            }
            return true;
        });
        return found.get(0);
    }

    /** One to four records: keyed, unkeyed or tombstones, with increasing timestamps. */
    private List<AppendRecord> keyed(Random random, String prefix) {
        List<AppendRecord> records = new ArrayList<>();
        for (int r = 0; r < 1 + random.nextInt(4); r++) {
            byte[] key = random.nextInt(5) == 0 ? null
                    : (prefix + "-" + random.nextInt(KEYS)).getBytes(StandardCharsets.UTF_8);
            byte[] value = key != null && random.nextInt(6) == 0 ? null : new byte[random.nextInt(300)];
            records.add(new AppendRecord(key, value, List.of(), clock.millis() + random.nextInt(1000)));
        }
        return records;
    }

    private AppendRecord record(String key, String value) {
        return new AppendRecord(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), List.of(),
                clock.millis());
    }

    private ByteBuffer lz4Batch(Random random) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.MAGIC_VALUE_V2,
                Compression.lz4().build(), TimestampType.CREATE_TIME, 0);
        for (int i = 0; i < 1 + random.nextInt(5); i++) {
            byte[] key = ("lz4-" + random.nextInt(KEYS)).getBytes(StandardCharsets.UTF_8);
            builder.append(clock.millis() + random.nextInt(1000), key, random.nextInt(6) == 0 ? null : new byte[100]);
        }
        return builder.build().buffer();
    }

    private static void flipByte(Path file, long position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, position);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            ch.write(b.rewind(), position);
        }
    }
}
