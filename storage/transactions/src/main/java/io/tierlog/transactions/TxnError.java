package io.tierlog.transactions;

/** The coordinator's answers; each maps 1:1 to the Kafka error of the same name ({@code org.apache.kafka.common.protocol.Errors}). */
public enum TxnError {
    NONE,
    INVALID_PRODUCER_ID_MAPPING,
    /** Kafka answers it for transactional requests from KIP-588 on; the API layer answers INVALID_PRODUCER_EPOCH to older request versions, as Kafka's KafkaApis does. */
    PRODUCER_FENCED,
    INVALID_PRODUCER_EPOCH,
    /** Retriable: another transition of this id is under way or its last transaction is still being completed. */
    CONCURRENT_TRANSACTIONS,
    INVALID_TXN_STATE,
    INVALID_TRANSACTION_TIMEOUT,
    TRANSACTIONAL_ID_NOT_FOUND,
    /** An empty or over-long transactional id, or only one of InitProducerId's expected producer id and epoch. */
    INVALID_REQUEST
}
