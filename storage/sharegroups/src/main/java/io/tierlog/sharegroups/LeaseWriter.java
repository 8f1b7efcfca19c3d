package io.tierlog.sharegroups;

/**
 * Writes out the records a lease call granted, one share-partition at a time, in the order the call visits them
 * ({@link ShareGroups#leaseOrWake(String, String, int, long, LeaseWriter)}). The grants are durable before the writer
 * sees them. Called on the leasing thread; an implementation serves one call.
 */
@FunctionalInterface
public interface LeaseWriter {
    /**
     * Writes the records of {@code grants}; returns how many of them no longer exist (removed by retention or
     * compaction since they were appended), which it leaves out and marks in {@code gone} (by grant index). Those are
     * marked done instead of delivered, so they hold no place in the window.
     */
    int write(LeaseGrants grants, java.util.BitSet gone);
}
