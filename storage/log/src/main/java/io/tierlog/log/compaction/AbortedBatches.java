package io.tierlog.log.compaction;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which data batches belong to an aborted transaction, from the aborted transactions of the partition (the hot
 * transaction index, or the cold segments' sidecars): a transactional batch of producer {@code p} at offset {@code o}
 * is aborted iff some aborted transaction of {@code p} has {@code firstOffset <= o <= lastOffset} (its abort marker).
 * This is what Kafka's cleaner derives as it walks the log ({@code CleanedTransactionMetadata}); the cleaner only
 * cleans stable segments, so every transaction touching them has ended and the list is complete. Immutable.
 */
final class AbortedBatches {
    static final AbortedBatches NONE = new AbortedBatches(List.of());

    /** Producer id &rarr; first offset &rarr; last offset (the abort marker) of its aborted transactions. */
    private final Map<Long, TreeMap<Long, Long>> byProducer = new HashMap<>();

    AbortedBatches(List<AbortedTransaction> aborted) {
        for (AbortedTransaction a : aborted) {
            byProducer.computeIfAbsent(a.producerId(), p -> new TreeMap<>()).merge(a.firstOffset(), a.lastOffset(),
                    Math::max);
        }
    }

    /** True for a transactional data batch of an aborted transaction; never for a control batch. */
    boolean contains(RecordBatch batch) {
        if (!batch.isTransactional() || batch.isControlBatch()) {
            return false;
        }
        TreeMap<Long, Long> txns = byProducer.get(batch.producerId());
        if (txns == null) {
            return false;
        }
        Map.Entry<Long, Long> txn = txns.floorEntry(batch.baseOffset());
        return txn != null && batch.baseOffset() <= txn.getValue();
    }
}
