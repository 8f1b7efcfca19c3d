package io.tierlog.client;

import java.util.List;

/**
 * The records of one fetch answer that {@link Consumer#poll} has not returned yet, made one at a time when poll
 * returns them (from record batches: {@link RecordBatchCodec.Cursor}). Used from one thread at a time.
 */
interface PendingRecords {
    /** Records {@link #next} will still return. */
    int remaining();

    /** The next record, or null after the last. */
    ConsumerRecord next();

    /** Records already made (a JSON answer's). */
    static PendingRecords of(List<ConsumerRecord> records) {
        return new PendingRecords() {
            private int next;

            @Override
            public int remaining() {
                return records.size() - next;
            }

            @Override
            public ConsumerRecord next() {
                return next < records.size() ? records.get(next++) : null;
            }
        };
    }
}
