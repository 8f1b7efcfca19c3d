package io.tierlog.client;

/**
 * Counters of one {@link Producer} since it was made, read with {@link Producer#stats()}: what its requests cost, so
 * that a slow producer can be told apart from a slow service.
 *
 * @param requests            produce requests sent, resends included
 * @param outOfOrder          requests the service refused as {@code 409 out-of-order-sequence} (nothing appended; the
 *                            batch was sent again): a later batch of a partition reached the service before an
 *                            earlier one, or an earlier one failed
 * @param retries             requests that got no answer or a retriable error and were sent again after a backoff
 * @param batchesAcknowledged batches the service appended (or answered as duplicates of an earlier attempt)
 * @param recordsAcknowledged records in those batches
 */
public record ProducerStats(long requests, long outOfOrder, long retries, long batchesAcknowledged,
                            long recordsAcknowledged) {
    /** Records per acknowledged batch, on average (0 before the first). */
    public double recordsPerBatch() {
        return batchesAcknowledged == 0 ? 0 : (double) recordsAcknowledged / batchesAcknowledged;
    }
}
