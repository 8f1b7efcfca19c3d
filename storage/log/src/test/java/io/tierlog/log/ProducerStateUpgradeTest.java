package io.tierlog.log;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import io.tierlog.log.internal.producer.ProducerSnapshot;
import io.tierlog.log.internal.segment.SegmentFiles;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A partition written before Kafka's numbering (a sequence counted requests; checkpoints had no version) is read by
 * the new writer as ADR 0002 says: a retry of an old request is still a duplicate, the old producer's next request
 * is accepted as a new start, and from the first batch the new writer appends on, Kafka's numbering holds.
 */
class ProducerStateUpgradeTest {
    private static final TopicPartition TP = new TopicPartition("upgrade", 0);
    private static final long PRODUCER = 7;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    /** Which of the old code's checkpoints survive next to its segment. */
    enum OldCheckpoint { AT_SEGMENT_START, AT_THE_END, NONE }

    @ParameterizedTest
    @EnumSource(OldCheckpoint.class)
    void anOldPartitionsProducerIsDeduplicatedThenStartsAfresh(OldCheckpoint checkpoint) throws IOException {
        writeOldPartition(checkpoint);

        try (PartitionWriter w = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            // The retry of old request 1 (three records): answered with its original offsets.
            assertThat(w.append(records(3), producer(1), TopicConfig.DEFAULTS)).isEqualTo(new AppendResult(3, 5, true));
            // The old client's next request, numbered per request (2), is taken as a new start...
            assertThat(w.append(records(2), producer(2), TopicConfig.DEFAULTS)).isEqualTo(new AppendResult(6, 7, false));
            // ...after which a sequence counts records: 2 and 3 are taken, 4 is next.
            TierlogException gap = catchThrowableOfType(TierlogException.class,
                    () -> w.append(records(1), producer(3), TopicConfig.DEFAULTS));
            assertThat(gap.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
            assertThat(gap.extra()).containsEntry("expectedSequence", 4);
            assertThat(w.append(records(1), producer(4), TopicConfig.DEFAULTS)).isEqualTo(new AppendResult(8, 8, false));
        }
        // A new process reads the same from the checkpoint the first one wrote after its replay, and the log after
        // it: the producer is no longer legacy there either.
        try (PartitionWriter w = new PartitionWriter(data, TP, FsyncPolicy.NEVER, Duration.ofSeconds(1), clock)) {
            assertThat(w.append(records(1), producer(4), TopicConfig.DEFAULTS)).isEqualTo(new AppendResult(8, 8, true));
            TierlogException gap = catchThrowableOfType(TierlogException.class,
                    () -> w.append(records(1), producer(6), TopicConfig.DEFAULTS));
            assertThat(gap.extra()).containsEntry("expectedSequence", 5);
        }
    }

    /** What the old writer left: requests 0 and 1 of three records each, offsets 0-2 and 3-5. */
    private void writeOldPartition(OldCheckpoint checkpoint) throws IOException {
        Path dir = data.resolve(TP.dirName());
        Files.createDirectories(dir);
        ByteBuffer first = RecordBatchCodec.encode(0, records(3), producer(0));
        ByteBuffer second = RecordBatchCodec.encode(3, records(3), producer(1));
        int end = first.remaining() + second.remaining();
        ByteBuffer segment = ByteBuffer.allocate(end).put(first).put(second).flip();
        Files.write(SegmentFiles.log(dir, 0), toArray(segment));
        String noProducers = "{\"segmentBase\":0,\"position\":0,\"nextOffset\":0,\"segmentCreatedMs\":" + clock.millis()
                + ",\"producers\":[]}";
        String withProducer = "{\"segmentBase\":0,\"position\":" + end + ",\"nextOffset\":6,\"segmentCreatedMs\":"
                + clock.millis() + ",\"producers\":[{\"id\":" + PRODUCER + ",\"epoch\":0,\"lastSeenMs\":"
                + clock.millis() + ",\"batches\":[{\"sequence\":0,\"firstOffset\":0,\"lastOffset\":2},"
                + "{\"sequence\":1,\"firstOffset\":3,\"lastOffset\":5}]}]}";
        switch (checkpoint) {
            case AT_SEGMENT_START -> Files.writeString(dir.resolve(SegmentFiles.snapshotName(0)), noProducers);
            case AT_THE_END -> {
                Files.writeString(dir.resolve(SegmentFiles.snapshotName(0)), noProducers);
                Files.writeString(dir.resolve(SegmentFiles.snapshotName(6)), withProducer);
                ProducerSnapshot read = ProducerSnapshot.read(dir, 6).orElseThrow();
                assertThat(read.perRequestSequences()).isTrue();
                assertThat(read.producers().get(PRODUCER).legacy()).isTrue();
            }
            case NONE -> {
            }
        }
    }

    private static byte[] toArray(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private List<AppendRecord> records(int n) {
        List<AppendRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new AppendRecord(null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), clock.millis()));
        }
        return out;
    }

    private static ProducerIdentity producer(int sequence) {
        return new ProducerIdentity(PRODUCER, (short) 0, sequence);
    }
}
