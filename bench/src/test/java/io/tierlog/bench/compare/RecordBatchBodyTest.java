package io.tierlog.bench.compare;

import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordBatchBodyTest {

    @Test
    void bodyIsOneValidKafkaBatchWhoseValuesAreTheSameBytesKafkaGets() {
        Payload payload = new Payload(1024, 7);
        long timestamp = 1_764_000_000_123L;

        byte[] body = RecordBatchBody.bytes(payload, 5, 1000, timestamp);

        List<RecordBatch> batches = new ArrayList<>();
        MemoryRecords.readableRecords(ByteBuffer.wrap(body)).batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        RecordBatch batch = batches.get(0);
        // The whole body is that batch: no trailing bytes the service would have to refuse.
        assertThat(batch.sizeInBytes()).isEqualTo(body.length);
        batch.ensureValid(); // CRC32C over the batch, as the service checks it
        assertThat(batch.magic()).isEqualTo(RecordBatch.MAGIC_VALUE_V2);
        assertThat(batch.isCompressed()).isFalse();
        assertThat(batch.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
        assertThat(batch.producerId()).isEqualTo(RecordBatch.NO_PRODUCER_ID);
        assertThat(batch.baseOffset()).isZero();
        assertThat(batch.countOrNull()).isEqualTo(1000);
        int i = 0;
        for (Record record : batch) {
            assertThat(record.offset()).isEqualTo(i);
            assertThat(record.timestamp()).isEqualTo(timestamp);
            assertThat(record.hasKey()).isFalse();
            assertThat(record.headers()).isEmpty();
            byte[] value = new byte[record.valueSize()];
            record.value().get(value);
            assertThat(value).isEqualTo(payload.bytes(5 + i));
            i++;
        }
        assertThat(i).isEqualTo(1000);
    }

    @Test
    void builtBufferIsExactlyTheBatchAsTheProducerSendsItFromTheArray() {
        Payload payload = new Payload(64, 3);

        ByteBuffer built = RecordBatchBody.build(payload, 0, 10, 42L);
        // The producer hands the backing array's range to the HTTP client without copying.
        byte[] sent = Arrays.copyOfRange(built.array(), built.arrayOffset() + built.position(),
                built.arrayOffset() + built.position() + built.remaining());

        assertThat(sent).isEqualTo(RecordBatchBody.bytes(payload, 0, 10, 42L));
        assertThat(MemoryRecords.readableRecords(ByteBuffer.wrap(sent)).sizeInBytes()).isEqualTo(sent.length);
    }

    @Test
    void refusesAnEmptyBatch() {
        assertThatThrownBy(() -> RecordBatchBody.build(new Payload(16, 1), 0, 0, 0L))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
