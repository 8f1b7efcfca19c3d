package io.tierlog.log.format;

import java.nio.ByteBuffer;

/**
 * Whether a produce body of client batches is transactional, and whose: a Kafka producer's request for one
 * partition is either all transactional batches of one producer id and epoch, or none. Reads headers only (the
 * append validates every batch); a body that mixes is refused here, before anything is appended, so that no
 * transactional batch slips past the coordinator's check behind a plain one.
 */
public final class TransactionalBatches {
    private TransactionalBatches() {
    }

    /** The producer of the body's transactional batches, or null when it has none. */
    public static Producer of(ByteBuffer body) {
        Producer found = null;
        boolean plain = false;
        int p = body.position();
        while (p + RecordBatchCodec.HEADER_SIZE <= body.limit()) {
            boolean transactional = (body.getShort(p + RecordBatchCodec.ATTRIBUTES_OFFSET)
                    & RecordBatchCodec.TRANSACTIONAL_FLAG) != 0;
            if (transactional) {
                Producer producer = new Producer(body.getLong(p + RecordBatchCodec.PRODUCER_ID_OFFSET),
                        body.getShort(p + RecordBatchCodec.PRODUCER_EPOCH_OFFSET));
                if (found != null && !found.equals(producer)) {
                    throw new IllegalArgumentException("transactional batches of two producers in one request: "
                            + found + " and " + producer);
                }
                found = producer;
            } else {
                plain = true;
            }
            int size = body.getInt(p + RecordBatchCodec.LENGTH_OFFSET);
            if (size <= 0) {
                break; // a damaged length: the append's validation names it
            }
            p += RecordBatchCodec.LOG_OVERHEAD + size;
        }
        if (found != null && plain) {
            throw new IllegalArgumentException("transactional and non-transactional batches in one request");
        }
        return found;
    }

    /** A transactional producer: its id and epoch. */
    public record Producer(long producerId, short epoch) {
    }
}
