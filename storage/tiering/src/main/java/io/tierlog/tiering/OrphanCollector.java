package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Deletes objects under a partition's {@code segments/} prefix that the current manifest does not reference and
 * that are older than the grace period (by the store's {@code lastModified}, compared with the injected clock):
 * uploads whose commit never happened (a crash, a lost race whose cleanup failed) and segments whose deletion
 * by retention was interrupted after the manifest commit. The grace keeps it away from uploads in progress,
 * which are younger by construction (see {@link Tierer}). Also prunes old manifest versions. Thread-safe.
 */
public final class OrphanCollector {
    private static final Logger LOG = LoggerFactory.getLogger(OrphanCollector.class);

    private final ObjectStore store;
    private final ManifestStore manifests;
    private final Clock clock;
    private final Duration grace;
    private final TieringStats stats;

    OrphanCollector(ObjectStore store, ManifestStore manifests, Clock clock, Duration grace, TieringStats stats) {
        this.store = store;
        this.manifests = manifests;
        this.clock = clock;
        this.grace = grace;
        this.stats = stats;
    }

    /** Collects one partition; returns how many segment objects were deleted. */
    public int collect(TopicPartition tp) {
        // Listing before loading the manifest matters: an object committed between the two is then referenced by
        // the (newer) manifest we load, never mistaken for an orphan.
        List<ObjectMetadata> objects = store.listAll(BucketLayout.segmentsPrefix(tp)).toList();
        if (objects.isEmpty()) {
            return 0;
        }
        Manifest manifest = manifests.load(tp);
        long cutoff = clock.millis() - grace.toMillis();
        List<ObjectKey> orphans = objects.stream()
                .filter(o -> o.lastModified().toEpochMilli() < cutoff)
                .map(ObjectMetadata::key)
                .filter(k -> !manifest.references(k))
                .toList();
        if (!orphans.isEmpty()) {
            store.deleteAll(orphans);
            stats.orphansDeleted(orphans.size());
            LOG.info("{}: deleted {} orphaned objects older than {} (manifest v{})", tp, orphans.size(), grace,
                    manifest.version());
        }
        manifests.prune(tp);
        return orphans.size();
    }
}
