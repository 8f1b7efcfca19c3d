package io.tierlog.service.sharegroups;

import java.util.Locale;

/**
 * The binary lease answer (docs/api.md, "Share groups"), chosen with {@code Accept:
 * application/vnd.tierlog.leased-batches} on the lease: per share-partition the leased records' offsets, delivery
 * counts and lease strings, then the stored Kafka RecordBatch v2 batches holding them ({@link LeaseAnswerBatches}).
 * JSON stays the answer to every other Accept, so no existing client receives binary by accident.
 */
final class LeaseBatchesMedia {
    static final String TYPE = "application/vnd.tierlog.leased-batches";

    private LeaseBatchesMedia() {
    }

    /** True if an Accept header names this form. */
    static boolean namedIn(String header) {
        return header != null && header.toLowerCase(Locale.ROOT).contains(TYPE);
    }
}
