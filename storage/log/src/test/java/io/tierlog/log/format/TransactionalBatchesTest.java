package io.tierlog.log.format;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A produce body is all transactional batches of one producer, or none; anything else is refused before an append. */
class TransactionalBatchesTest {
    @Test
    void namesTheProducerOfTransactionalBatchesAndNoneForPlainOnes() {
        assertThat(TransactionalBatches.of(concat(transactional(7, (short) 2, 0), transactional(7, (short) 2, 1))))
                .isEqualTo(new TransactionalBatches.Producer(7, (short) 2));
        assertThat(TransactionalBatches.of(concat(idempotent(7, 0), idempotent(7, 1)))).isNull();
    }

    @Test
    void refusesAPlainBatchBesideATransactionalOneAndTwoProducers() {
        assertThatThrownBy(() -> TransactionalBatches.of(concat(idempotent(7, 0), transactional(7, (short) 0, 1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-transactional");
        assertThatThrownBy(() -> TransactionalBatches.of(concat(transactional(7, (short) 0, 0),
                transactional(8, (short) 0, 0)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("two producers");
    }

    private static ByteBuffer transactional(long producerId, short epoch, int sequence) {
        return MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, sequence,
                new SimpleRecord(1L, null, "v".getBytes())).buffer();
    }

    private static ByteBuffer idempotent(long producerId, int sequence) {
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, (short) 0, sequence,
                new SimpleRecord(1L, null, "v".getBytes())).buffer();
    }

    private static ByteBuffer concat(ByteBuffer a, ByteBuffer b) {
        ByteBuffer out = ByteBuffer.allocate(a.remaining() + b.remaining());
        out.put(a.duplicate()).put(b.duplicate()).flip();
        return out;
    }
}
