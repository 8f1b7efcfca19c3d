package io.tierlog.log.format;

import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.util.Iterator;

/**
 * The end of one producer's transaction on a partition (KIP-98), as the transaction coordinator sends it: commit or
 * abort, for the producer id and epoch, with the coordinator's epoch. In the log it is one Kafka control batch
 * ({@link #encode}), byte for byte what Kafka's broker writes, so kafka-clients' consumers recognise and skip it.
 */
public record TransactionMarker(long producerId, short producerEpoch, boolean commit, int coordinatorEpoch) {
    public TransactionMarker {
        if (producerId < 0 || producerEpoch < 0) {
            throw new IllegalArgumentException("a transaction marker needs a producer id and epoch >= 0: "
                    + producerId + "/" + producerEpoch);
        }
    }

    /**
     * The control batch at {@code baseOffset}: attributes transactional|control, the producer's id and epoch, base
     * sequence -1, and one control record (key: version 0 and type 0 abort / 1 commit; value:
     * {@code EndTransactionMarker} version 0 with the coordinator epoch) stamped {@code timestampMs}.
     */
    public ByteBuffer encode(long baseOffset, long timestampMs) {
        EndTransactionMarker marker = new EndTransactionMarker(
                commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch);
        return MemoryRecords.withEndTransactionMarker(baseOffset, timestampMs,
                RecordBatchCodec.NO_PARTITION_LEADER_EPOCH, producerId, producerEpoch, marker).buffer();
    }

    /**
     * The marker a complete, validated control batch holds.
     *
     * @throws IllegalArgumentException if the batch is not a control batch
     * @throws RuntimeException from kafka-clients if its control record is not a commit or abort marker
     */
    public static TransactionMarker read(ByteBuffer batch) {
        RecordBatch b = RecordBatchCodec.asBatch(batch);
        if (!b.isControlBatch()) {
            throw new IllegalArgumentException("batch at offset " + b.baseOffset() + " is not a control batch");
        }
        Iterator<Record> records = b.iterator();
        if (!records.hasNext()) {
            throw new IllegalArgumentException("control batch at offset " + b.baseOffset() + " holds no record");
        }
        EndTransactionMarker marker = EndTransactionMarker.deserialize(records.next());
        return new TransactionMarker(b.producerId(), b.producerEpoch(),
                marker.controlType() == ControlRecordType.COMMIT, marker.coordinatorEpoch());
    }
}
