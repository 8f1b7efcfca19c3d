package io.tierlog.transactions;

import io.tierlog.log.TopicPartition;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * One transactional id's durable state, the content of its file: Kafka's TransactionMetadata
 * plus the offsets a transaction carries (Kafka keeps those in the group coordinator as pending offsets). Immutable;
 * every transition returns a new value, which the caller writes.
 *
 * @param previousProducerId the producer id before the last transition (Kafka's prevProducerId; differs from
 *                           {@code producerId} only right after a rotation), for KIP-360 retries
 * @param lastProducerEpoch  the epoch before the last bump, -1 when none to remember (KIP-360)
 * @param startTimeMs        start of the current transaction, -1 after InitProducerId
 * @param lastUpdateMs       time of the last transition: idle ids expire from it
 * @param nextProducerId     a transaction prepared by transaction version 2 whose epoch ran out: the producer id it
 *                           continues under once complete (Kafka's nextProducerId), else -1
 */
record TransactionMetadata(String transactionalId, long producerId, long previousProducerId, short producerEpoch,
                           short lastProducerEpoch, int timeoutMs, TxnState state, long startTimeMs,
                           long lastUpdateMs, Set<TopicPartition> partitions, Set<String> groups,
                           Map<String, Map<TopicPartition, PendingOffset>> pendingOffsets, long nextProducerId) {
    static final long NO_PRODUCER_ID = -1L;
    static final short NO_PRODUCER_EPOCH = -1;

    TransactionMetadata {
        // Insertion order kept (markers go out in the order partitions were added); equality is Set equality.
        partitions = Collections.unmodifiableSet(new LinkedHashSet<>(partitions));
        groups = Collections.unmodifiableSet(new LinkedHashSet<>(groups));
        Map<String, Map<TopicPartition, PendingOffset>> copy = new LinkedHashMap<>();
        pendingOffsets.forEach((g, o) -> copy.put(g, Map.copyOf(o)));
        pendingOffsets = Map.copyOf(copy);
    }

    /** A new id before its first InitProducerId: Kafka creates it at epoch -1 so that the first bump gives 0. */
    static TransactionMetadata created(String transactionalId, long producerId, int timeoutMs, long now) {
        return new TransactionMetadata(transactionalId, producerId, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
                NO_PRODUCER_EPOCH, timeoutMs, TxnState.EMPTY, -1, now, Set.of(), Set.of(), Map.of(), NO_PRODUCER_ID);
    }

    /** Kafka's isEpochExhausted: the last epochs are kept for fencing, so a new producer id is due. */
    static boolean isEpochExhausted(short epoch) {
        return epoch >= Short.MAX_VALUE - 1;
    }

    boolean isProducerEpochExhausted() {
        return isEpochExhausted(producerEpoch);
    }

    /** InitProducerId's outcome: Empty under (producerId, epoch), nothing in flight. */
    TransactionMetadata initialized(long newProducerId, short newEpoch, short newLastEpoch, int newTimeoutMs, long now) {
        return new TransactionMetadata(transactionalId, newProducerId, producerId, newEpoch, newLastEpoch, newTimeoutMs,
                TxnState.EMPTY, -1, now, Set.of(), Set.of(), Map.of(), NO_PRODUCER_ID);
    }

    /** AddPartitions/AddOffsets: Ongoing; a transaction starting now (from Empty or Complete*) gets its start time. */
    TransactionMetadata withAdded(Collection<TopicPartition> addedPartitions, Collection<String> addedGroups, long now) {
        long start = state == TxnState.ONGOING ? startTimeMs : now;
        Set<TopicPartition> ps = new LinkedHashSet<>(partitions);
        ps.addAll(addedPartitions);
        Set<String> gs = new LinkedHashSet<>(groups);
        gs.addAll(addedGroups);
        return new TransactionMetadata(transactionalId, producerId, producerId, producerEpoch, lastProducerEpoch,
                timeoutMs, TxnState.ONGOING, start, now, ps, gs, pendingOffsets, NO_PRODUCER_ID);
    }

    /** TxnOffsetCommit: the group's offsets, the later commit of a partition replacing the earlier. */
    TransactionMetadata withPendingOffsets(String groupId, Map<TopicPartition, PendingOffset> offsets) {
        Map<String, Map<TopicPartition, PendingOffset>> all = new LinkedHashMap<>(pendingOffsets);
        Map<TopicPartition, PendingOffset> group = new LinkedHashMap<>(all.getOrDefault(groupId, Map.of()));
        group.putAll(offsets);
        all.put(groupId, group);
        return new TransactionMetadata(transactionalId, producerId, previousProducerId, producerEpoch,
                lastProducerEpoch, timeoutMs, state, startTimeMs, lastUpdateMs, partitions, groups, all, nextProducerId);
    }

    /** EndTxn on an ongoing transaction: PrepareCommit or PrepareAbort, keeping what must be completed. */
    TransactionMetadata prepared(boolean commit, long now) {
        return new TransactionMetadata(transactionalId, producerId, producerId, producerEpoch, lastProducerEpoch,
                timeoutMs, commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, startTimeMs, now, partitions,
                groups, pendingOffsets, NO_PRODUCER_ID);
    }

    /**
     * EndTxn of transaction version 2 (KIP-890 part 2): PrepareCommit or PrepareAbort at the next epoch, so that the
     * markers fence every batch of this transaction still in flight, the epoch it ended at kept for a retry. From
     * Empty or Complete* (an abort with nothing in it) the transaction starts now. An exhausted epoch is not bumped
     * past the last one; the id continues under {@code nextProducerId} (not -1) once complete.
     */
    TransactionMetadata preparedWithEpochBump(boolean commit, long nextProducerId, long now) {
        short bumped = producerEpoch == Short.MAX_VALUE ? producerEpoch : (short) (producerEpoch + 1);
        long start = state == TxnState.ONGOING ? startTimeMs : now;
        return new TransactionMetadata(transactionalId, producerId, producerId, bumped, producerEpoch, timeoutMs,
                commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, start, now, partitions, groups,
                pendingOffsets, nextProducerId);
    }

    /**
     * The coordinator aborts the ongoing transaction of a producer it fences (InitProducerId, timeout): PrepareAbort
     * at the next epoch, so markers carry an epoch the zombie cannot write with; no last epoch to return to.
     * Kafka's prepareFenceProducerEpoch then endTransaction(ABORT, isFromClient = false), in one step.
     */
    TransactionMetadata fencedAbort(long now) {
        short bumped = producerEpoch == Short.MAX_VALUE ? producerEpoch : (short) (producerEpoch + 1);
        return new TransactionMetadata(transactionalId, producerId, producerId, bumped, NO_PRODUCER_EPOCH, timeoutMs,
                TxnState.PREPARE_ABORT, startTimeMs, now, partitions, groups, pendingOffsets, NO_PRODUCER_ID);
    }

    /** Markers (and offsets) written: Complete*, nothing left in flight. */
    TransactionMetadata completed(long now) {
        if (!state.isPrepared()) {
            throw new IllegalStateException("cannot complete a transaction in state " + state);
        }
        TxnState done = state == TxnState.PREPARE_COMMIT ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
        if (nextProducerId != NO_PRODUCER_ID) {
            // Kafka's rotation at the end of a transaction whose epoch ran out: epoch 0 under the new id, the old id
            // remembered so that a retry of this EndTxn (old id, last epoch) is recognized.
            return new TransactionMetadata(transactionalId, nextProducerId, producerId, (short) 0, NO_PRODUCER_EPOCH,
                    timeoutMs, done, startTimeMs, now, Set.of(), Set.of(), Map.of(), NO_PRODUCER_ID);
        }
        return new TransactionMetadata(transactionalId, producerId, producerId, producerEpoch, lastProducerEpoch,
                timeoutMs, done, startTimeMs, now, Set.of(), Set.of(), Map.of(), NO_PRODUCER_ID);
    }

    TransactionDescription describe() {
        return new TransactionDescription(transactionalId, state, producerId, producerEpoch, timeoutMs, startTimeMs,
                partitions, groups);
    }
}
