package io.tierlog.log.crash;

import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.HotLog;
import io.tierlog.log.PartitionWriter;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.ClientBatchValidator;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.TransactionMarker;
import io.tierlog.log.topic.TopicConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The transactional producer and coordinator that {@link TxnCrashTest} kills with SIGKILL: with {@code fsync=always}
 * it runs transaction after transaction of producer id {@code 1000 + life} (epoch 0), each one to three
 * transactional batches and then its marker (every third one an abort), with now and then a plain batch in between.
 * Each life has its own producer id, so it needs nothing from the previous one; a transaction a kill left open stays
 * open until the test aborts it, as a coordinator would after its timeout.
 *
 * <p>Arguments: data-dir topic life segment-bytes transactions (-1 = until killed). Prints {@code ready}, then
 * {@code first-txn} once its first transaction is committed or aborted.
 */
public final class TxnCrashWriterMain {
    static final long BASE_PRODUCER_ID = 1000;
    static final long T0 = 1_700_000_000_000L;

    private TxnCrashWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        TopicPartition tp = new TopicPartition(args[1], 0);
        int life = Integer.parseInt(args[2]);
        TopicConfig config = TopicConfig.DEFAULTS.with(Map.of(TopicConfig.SEGMENT_BYTES, Long.parseLong(args[3])));
        long transactions = Long.parseLong(args[4]);
        long pid = BASE_PRODUCER_ID + life;
        int sequence = 0;
        try (PartitionWriter writer = new HotLog(dataDir).writer(tp, FsyncPolicy.ALWAYS, Duration.ofSeconds(1),
                Clock.systemUTC())) {
            System.out.println("ready " + life);
            System.out.flush();
            for (int t = 0; transactions < 0 || t < transactions; t++) {
                for (int b = 0; b <= t % 3; b++) {
                    int records = 1 + (t + b) % 5;
                    writer.append(ClientBatchValidator.validate(batch(pid, sequence, records, t), Integer.MAX_VALUE,
                            T0), config);
                    sequence += records;
                }
                writer.appendMarker(new TransactionMarker(pid, (short) 0, t % 3 != 0, 0), config);
                if (t % 4 == 1) {
                    writer.append(List.of(new AppendRecord(null, ("plain " + t).getBytes(StandardCharsets.UTF_8),
                            List.of(), T0)), ProducerIdentity.NONE, config);
                }
                if (t == 0) {
                    System.out.println("first-txn");
                    System.out.flush();
                }
            }
        }
        System.out.println("done");
    }

    /** A transactional batch of {@code records} records of 600 bytes: big enough that a kill can land inside the write. */
    private static ByteBuffer batch(long pid, int sequence, int records, int txn) {
        ByteBuffer buffer = ByteBuffer.allocate(8192);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, pid, (short) 0, sequence, true, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        for (int i = 0; i < records; i++) {
            builder.append(T0, null, ("txn " + txn + " record " + i + "|" + "v".repeat(580))
                    .getBytes(StandardCharsets.UTF_8));
        }
        return builder.build().buffer();
    }
}
