package io.tierlog.transactions;

/** One entry of ListTransactions' answer, Kafka's fields. */
public record TransactionListing(String transactionalId, long producerId, TxnState state) {
}
