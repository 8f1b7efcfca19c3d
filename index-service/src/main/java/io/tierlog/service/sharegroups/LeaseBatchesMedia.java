package io.tierlog.service.sharegroups;

import java.util.Locale;

/**
 * The binary lease answer (docs/api.md, "Share groups"), chosen with {@code Accept:
 * application/vnd.tierlog.leased-batches} on the lease: per share-partition the leased records' offsets, delivery
 * counts and lease strings, then the stored Kafka RecordBatch v2 batches holding them ({@link LeaseAnswerBatches}).
 * With {@code Accept: application/vnd.tierlog.leased-ranges} the header names runs of records under range leases
 * instead (ADR 0042); when an Accept names both, leased-ranges is answered. JSON stays the answer to every other
 * Accept, so no existing client receives binary by accident.
 */
final class LeaseBatchesMedia {
    static final String TYPE = "application/vnd.tierlog.leased-batches";
    /** The same answer with runs under range leases in its header instead of one lease per record (ADR 0042). */
    static final String RANGES = "application/vnd.tierlog.leased-ranges";

    private LeaseBatchesMedia() {
    }

    /** True if an Accept header names the leased-batches form. */
    static boolean namedIn(String header) {
        return header != null && header.toLowerCase(Locale.ROOT).contains(TYPE);
    }

    /** True if an Accept header names the leased-ranges form. */
    static boolean rangesNamedIn(String header) {
        return header != null && header.toLowerCase(Locale.ROOT).contains(RANGES);
    }
}
