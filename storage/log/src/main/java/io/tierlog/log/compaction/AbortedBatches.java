package io.tierlog.log.compaction;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which data batches of a segment belong to an aborted transaction, from the aborted transactions overlapping it
 * (the hot transaction index's, or the cold segment's sidecar's): a transactional batch of producer {@code p} at
 * offset {@code o} is aborted iff an aborted transaction of {@code p} has {@code firstOffset <= o <= lastOffset} (its
 * abort marker). This is what Kafka's cleaner derives as it walks the log ({@code CleanedTransactionMetadata}); the
 * cleaner only cleans stable segments, so every transaction touching them has ended and the list is complete.
 * Immutable.
 */
public final class AbortedBatches {
    /** Producer id &rarr; first offset &rarr; last offset (the abort marker) of its aborted transactions. */
    private final Map<Long, TreeMap<Long, Long>> byProducer = new HashMap<>();
    /** Why the outcomes are unknown, or null when the list is complete. */
    private final String unknownBecause;

    private AbortedBatches(List<AbortedTransaction> aborted, String unknownBecause) {
        this.unknownBecause = unknownBecause;
        for (AbortedTransaction a : aborted) {
            byProducer.computeIfAbsent(a.producerId(), p -> new TreeMap<>()).merge(a.firstOffset(), a.lastOffset(),
                    Math::max);
        }
    }

    /** The batches of {@code aborted}, a complete list of the aborted transactions overlapping the segment. */
    public static AbortedBatches of(List<AbortedTransaction> aborted) {
        return new AbortedBatches(aborted, null);
    }

    /**
     * For a segment whose transactions' outcomes are not known (a cold segment tiered with a sidecar that lists none):
     * a transactional batch there makes the cleaner fail rather than guess, since taking an aborted record for a
     * committed one could drop the committed value it shadows.
     */
    public static AbortedBatches unknown(String because) {
        return new AbortedBatches(List.of(), because);
    }

    /**
     * True for a transactional data batch of an aborted transaction; never for a control batch.
     *
     * @throws IllegalStateException for a transactional data batch when the outcomes are {@link #unknown}
     */
    boolean contains(RecordBatch batch) {
        if (!batch.isTransactional() || batch.isControlBatch()) {
            return false;
        }
        if (unknownBecause != null) {
            throw new IllegalStateException("transactional batch at offset " + batch.baseOffset()
                    + " of a segment whose aborted transactions are unknown (" + unknownBecause + "); not cleaned");
        }
        TreeMap<Long, Long> txns = byProducer.get(batch.producerId());
        if (txns == null) {
            return false;
        }
        Map.Entry<Long, Long> txn = txns.floorEntry(batch.baseOffset());
        return txn != null && batch.baseOffset() <= txn.getValue();
    }
}
