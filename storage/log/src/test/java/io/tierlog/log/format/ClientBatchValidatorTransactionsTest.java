package io.tierlog.log.format;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Transactional batches from clients are accepted with a producer id; control batches from clients are not. */
class ClientBatchValidatorTransactionsTest {
    private static final long T = 1_700_000_000_000L;

    @Test
    void transactionalBatchWithAProducerIdIsAccepted() {
        ClientBatch batch = ClientBatchValidator.validate(build(5, 0, 0, true, T), Integer.MAX_VALUE, T);

        assertThat(batch.transactional()).isTrue();
        assertThat(batch.rebuilt()).isFalse();
        assertThat(batch.producer()).isEqualTo(new ProducerIdentity(5, (short) 0, 0));
    }

    @Test
    void aRebuiltTransactionalBatchStaysTransactional() {
        ClientBatch batch = ClientBatchValidator.validate(build(5, 0, 0, true, RecordBatch.NO_TIMESTAMP),
                Integer.MAX_VALUE, T);

        assertThat(batch.rebuilt()).isTrue();
        assertThat(batch.transactional()).isTrue();
        RecordBatch stored = MemoryRecords.readableRecords(batch.stampedAt(0)).batches().iterator().next();
        assertThat(stored.isTransactional()).isTrue();
        assertThat(RecordBatchCodec.info(0, 0, batch.stampedAt(0)).transactional()).isTrue();
    }

    @Test
    void transactionalBatchWithoutAProducerIdIsRefused() {
        // kafka-clients' builder refuses to build it: set the bit on a plain batch and recompute the CRC.
        ByteBuffer batch = build(-1, -1, -1, false, T);
        batch.putShort(RecordBatchCodec.ATTRIBUTES_OFFSET,
                (short) (batch.getShort(RecordBatchCodec.ATTRIBUTES_OFFSET) | RecordBatchCodec.TRANSACTIONAL_FLAG));
        CRC32C crc = new CRC32C();
        crc.update(batch.duplicate().position(RecordBatchCodec.CRC_START_OFFSET));
        batch.putInt(RecordBatchCodec.CRC_OFFSET, (int) crc.getValue());

        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> ClientBatchValidator.validate(batch, Integer.MAX_VALUE, T));

        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(e.getMessage()).contains("transactional batch without a producerId");
    }

    @Test
    void controlBatchFromAClientIsRefused() {
        ByteBuffer marker = MemoryRecords.withEndTransactionMarker(0L, T, -1, 5L, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 1)).buffer();

        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> ClientBatchValidator.validate(marker, Integer.MAX_VALUE, T));

        assertThat(e.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(e.getMessage()).contains("control batch");
    }

    @Test
    void transactionMarkerEncodesAndReadsBack() {
        TransactionMarker marker = new TransactionMarker(5, (short) 3, false, 12);
        ByteBuffer batch = marker.encode(40, T);

        assertThat(RecordBatchCodec.validate(batch)).isNull();
        assertThat(TransactionMarker.read(batch)).isEqualTo(marker);
        BatchInfo info = RecordBatchCodec.info(0, 0, batch);
        assertThat(info.control()).isTrue();
        assertThat(info.transactional()).isTrue();
        assertThat(info.baseOffset()).isEqualTo(40);
        assertThat(info.baseSequence()).isEqualTo(-1);
    }

    private static ByteBuffer build(long producerId, int epoch, int sequence, boolean transactional, long timestamp) {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, (short) epoch, sequence,
                transactional, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, buffer.capacity());
        b.append(timestamp, null, "v".getBytes(StandardCharsets.UTF_8));
        return b.build().buffer();
    }
}
