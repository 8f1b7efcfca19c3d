package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.util.Set;

/**
 * DescribeTransactions' answer for one id.
 *
 * @param startTimeMs the running (or last) transaction's start, -1 when none started since the last InitProducerId
 * @param groups      the consumer groups whose offsets the transaction carries (Kafka lists their __consumer_offsets partitions)
 */
public record TransactionDescription(String transactionalId, TxnState state, long producerId, short producerEpoch,
                                     int timeoutMs, long startTimeMs, Set<TopicPartition> partitions,
                                     Set<String> groups) {
}
