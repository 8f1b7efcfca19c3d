package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.util.Collection;
import java.util.Map;

/**
 * Everything the coordinator asks of the rest of the system: the partition logs (markers) and the consumer groups
 * (offsets). Both calls run while the transactional id's lock is held and may be repeated after a crash, so both
 * must be idempotent.
 */
public interface TransactionParticipants {
    /**
     * Appends a COMMIT or ABORT marker for (producerId, epoch) to each partition, durably; idempotent to repeat. A
     * partition whose topic no longer exists is skipped. Throws on failure (then the transaction stays prepared and
     * is completed later).
     */
    void writeMarkers(long producerId, short producerEpoch, boolean commit, Collection<TopicPartition> partitions);

    /**
     * Commits the offsets a transaction carried for a group, durably (the group's committed offsets). Repeated with
     * the same offsets if a coordinator dies between this call and the transaction's completion.
     */
    void commitOffsets(String groupId, Map<TopicPartition, PendingOffset> offsets);
}
