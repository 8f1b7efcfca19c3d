package io.tierlog.transactions;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;

/** Whether {@link TransactionCoordinator#requireInTransaction} lets this producer's produce to {@code tp} through. */
final class Appends {
    private Appends() {
    }

    static boolean allowed(TransactionCoordinator coordinator, String transactionalId, long producerId, short epoch,
                           TopicPartition tp) {
        try {
            coordinator.requireInTransaction(transactionalId, producerId, epoch, tp);
            return true;
        } catch (TierlogException e) {
            if (e.type() != ErrorType.INVALID_TXN_STATE && e.type() != ErrorType.FENCED_PRODUCER) {
                throw e;
            }
            return false;
        }
    }
}
