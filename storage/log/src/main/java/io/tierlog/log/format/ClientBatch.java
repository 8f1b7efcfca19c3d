package io.tierlog.log.format;

import java.nio.ByteBuffer;

/**
 * One RecordBatch v2 built by a client and accepted by {@link ClientBatchValidator}: magic 2, CRC32C valid,
 * uncompressed or compressed with one of Kafka's codecs, CreateTime, not control (transactional only with a
 * producer id), dense offset
 * deltas {@code 0..recordCount-1}, every record timestamp {@code >= 0}, {@code maxTimestamp} equal to the largest
 * record timestamp, and producer fields that are either Kafka's "none" ({@code -1/-1/-1}) or an id, epoch and sequence {@code >= 0}. Only the validator
 * creates instances, so holding one means the bytes passed every check.
 *
 * <p>The batch's base offset and partition leader epoch are placeholders: they lie outside the CRC (as in Kafka,
 * whose broker assigns them too), and the partition writer stamps them under its lock with {@link #stampedAt}.
 *
 * <p>The bytes may be a view of the request body the validator was given (no copy): the caller must not change
 * that body until the append returns. Not thread-safe: one append at a time per instance.
 */
public final class ClientBatch {
    private final ByteBuffer bytes;
    private final int recordCount;
    private final ProducerIdentity producer;
    private final boolean transactional;
    private final int sourceBatches;
    private final boolean rebuilt;

    ClientBatch(ByteBuffer bytes, int recordCount, ProducerIdentity producer, boolean transactional, int sourceBatches,
                boolean rebuilt) {
        this.bytes = bytes.slice();
        this.recordCount = recordCount;
        this.producer = producer;
        this.transactional = transactional;
        this.sourceBatches = sourceBatches;
        this.rebuilt = rebuilt;
    }

    /** Records in the batch; the offsets it takes are {@code base .. base + recordCount - 1}. */
    public int recordCount() {
        return recordCount;
    }

    /** The producer fields of the batch header: {@link ProducerIdentity#NONE} or an idempotent producer's. */
    public ProducerIdentity producer() {
        return producer;
    }

    /** Whether the batch carries the transactional bit: it belongs to its producer's open transaction (KIP-98). */
    public boolean transactional() {
        return transactional;
    }

    /** How many batches the request body held (more than one are merged into this one batch). */
    public int sourceBatches() {
        return sourceBatches;
    }

    /**
     * True if the validator re-encoded the records (several batches merged, or a record timestamp of -1 replaced by
     * the append time), false if the batch is the client's bytes as sent.
     */
    public boolean rebuilt() {
        return rebuilt;
    }

    public int sizeInBytes() {
        return bytes.limit();
    }

    /**
     * Writes {@code baseOffset} and the "unknown" partition leader epoch (-1, as our own batches carry) into the
     * header, in place, and returns the batch (position 0, limit its size). Neither field is covered by the CRC.
     * Called by the partition writer under its lock, right before the write.
     */
    public ByteBuffer stampedAt(long baseOffset) {
        bytes.putLong(0, baseOffset);
        bytes.putInt(RecordBatchCodec.PARTITION_LEADER_EPOCH_OFFSET, RecordBatchCodec.NO_PARTITION_LEADER_EPOCH);
        return bytes.duplicate().clear();
    }
}
