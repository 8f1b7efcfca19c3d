package io.tierlog.log.testing;

import io.tierlog.log.internal.segment.SegmentFiles;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a partition directory with kafka-clients' own {@link FileRecords}, independently of our reader, so a
 * test does not trust the code it checks. Every batch's CRC is verified ({@code ensureValid}), and the batches
 * must fill each segment file to its last byte: a partial batch left on disk fails the check.
 */
public final class KafkaSegments {
    /** One record as Kafka sees it: its offset, its batch's producer fields and its value as UTF-8. */
    public record KafkaRecord(long offset, long batchBaseOffset, long producerId, short producerEpoch,
                              int baseSequence, String value) {
    }

    private KafkaSegments() {
    }

    public static List<KafkaRecord> readAll(Path partitionDir) {
        List<KafkaRecord> out = new ArrayList<>();
        for (long base : SegmentFiles.segmentBases(partitionDir)) {
            Path file = SegmentFiles.log(partitionDir, base);
            try (FileRecords records = FileRecords.open(file.toFile(), false)) {
                long covered = 0;
                for (FileChannelRecordBatch batch : records.batches()) {
                    batch.ensureValid();
                    covered += batch.sizeInBytes();
                    for (Record r : batch) {
                        byte[] v = new byte[r.valueSize()];
                        r.value().get(v);
                        out.add(new KafkaRecord(r.offset(), batch.baseOffset(), batch.producerId(),
                                batch.producerEpoch(), batch.baseSequence(), new String(v, StandardCharsets.UTF_8)));
                    }
                }
                long size = Files.size(file);
                if (covered != size) {
                    throw new AssertionError(file + " holds " + size + " bytes but its complete batches cover "
                            + covered + ": a partial batch is left on disk");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }
}
