package io.tierlog.transactions;

/**
 * Kafka's transaction states (both transaction versions). PrepareEpochFence is not one: a fence here writes PrepareAbort
 * with the bumped epoch in one step. DEAD is never stored: an expired id's file is deleted.
 */
public enum TxnState {
    EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD;

    boolean isPrepared() {
        return this == PREPARE_COMMIT || this == PREPARE_ABORT;
    }

    /** No transaction in flight: Kafka's states from which InitProducerId bumps the epoch and ids may expire. */
    boolean isIdle() {
        return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
    }
}
