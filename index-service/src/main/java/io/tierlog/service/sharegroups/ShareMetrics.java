package io.tierlog.service.sharegroups;

import io.micrometer.core.instrument.Counter;
import io.tierlog.log.format.LogRecord;
import io.tierlog.service.metrics.Meters;
import io.tierlog.sharegroups.ShareGroups;
import io.tierlog.sharegroups.ShareMeters;
import io.tierlog.sharegroups.ShareRecords;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Share-group meters: counters {@code tierlog.share.leased}, {@code tierlog.share.redeliveries},
 * {@code tierlog.share.dead.lettered}; gauges {@code tierlog.share.records.leased} and
 * {@code tierlog.share.records.available} (summed over the share-partitions this instance served, as it last saw
 * them: the state is shared, so another instance's leases show once this one touches the partition), and
 * {@code tierlog.share.oldest.record.age} (ms: now minus the timestamp of the oldest record not yet accepted or
 * archived, the one at a share-partition's start offset), refreshed off the scrape path by {@link #refresh}.
 * Registered by {@link Meters#shareGroups}.
 */
final class ShareMetrics implements ShareMeters {
    private static final Logger LOG = Logger.getLogger(ShareMetrics.class);

    private final Counter leased;
    private final Counter redeliveries;
    private final Counter deadLettered;
    private final AtomicLong oldestAgeMs = new AtomicLong();
    private volatile ShareGroups shares;

    ShareMetrics(Meters meters) {
        Meters.ShareCounters counters = meters.shareGroups(() -> sum(true), () -> sum(false), oldestAgeMs::get);
        leased = counters.leased();
        redeliveries = counters.redeliveries();
        deadLettered = counters.deadLettered();
    }

    void bind(ShareGroups shares) {
        this.shares = shares;
    }

    @Override
    public void leased(int records, int redelivered) {
        leased.increment(records);
        redeliveries.increment(redelivered);
    }

    @Override
    public void deadLettered(int records) {
        deadLettered.increment(records);
    }

    private double sum(boolean leasedRecords) {
        ShareGroups s = shares;
        return s == null ? 0 : s.snapshots().stream()
                .mapToLong(x -> leasedRecords ? x.leased() : x.available()).sum();
    }

    /** Recomputes the oldest-record age (reads one record per share-partition; run off the scrape path). */
    void refresh(ShareRecords records, Clock clock) {
        ShareGroups s = shares;
        if (s == null) {
            return;
        }
        long oldest = 0;
        for (ShareGroups.Snapshot x : s.snapshots()) {
            try {
                if (x.startOffset() >= records.highWatermark(x.tp())) {
                    continue;
                }
                List<LogRecord> r = records.read(x.tp(), x.startOffset(), 1);
                if (!r.isEmpty()) {
                    oldest = Math.max(oldest, clock.millis() - r.get(0).timestamp());
                }
            } catch (RuntimeException e) {
                LOG.debugf(e, "%s: cannot read the oldest share-group record", x.tp());
            }
        }
        oldestAgeMs.set(oldest);
    }
}
