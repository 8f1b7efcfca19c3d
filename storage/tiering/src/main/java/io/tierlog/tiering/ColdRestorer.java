package io.tierlog.tiering;

import io.tierlog.log.TopicPartition;
import io.tierlog.log.HotLog;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectKey;
import io.tierlog.objectstore.ObjectMetadata;
import io.tierlog.objectstore.ObjectNotFoundException;
import io.tierlog.objectstore.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Brings a node with an empty (or partly empty) hot volume up from the bucket alone.
 *
 * <ol>
 *   <li>Every {@code <topic>/topic.json} whose topic is missing from the hot volume is restored with its id,
 *       partitions and config.</li>
 *   <li>A partition with no hot segment but a non-empty manifest gets an empty first segment named for the cold
 *       end, so the hot log continues where the cold tier ends: {@link io.tierlog.log.PartitionWriter} finds one
 *       segment, no checkpoint, and starts appending at its base offset.</li>
 * </ol>
 * Partition directories are prepared <em>before</em> the topic becomes visible, so no writer in another process
 * can start a partition at offset 0 in between. Finding the topics lists the whole bucket once (the SPI has no
 * delimiter listing); that is a few LIST pages per ten thousand objects, paid once per start.
 *
 * <p>Idempotent; safe to run while other processes serve the same volume.
 */
public final class ColdRestorer {
    private static final Logger LOG = LoggerFactory.getLogger(ColdRestorer.class);

    private final HotLog hotLog;
    private final TopicStore topics;
    private final ObjectStore store;
    private final ManifestStore manifests;

    ColdRestorer(Path dataDir, TopicStore topics, ObjectStore store, ManifestStore manifests) {
        this.hotLog = new HotLog(dataDir);
        this.topics = topics;
        this.store = store;
        this.manifests = manifests;
    }

    /** Restores what is missing; returns the names of the topics it re-created. */
    public List<String> restore() {
        List<ObjectKey> descriptors = store.listAll("")
                .map(ObjectMetadata::key)
                .filter(k -> BucketLayout.topicOfMetadataKey(k) != null)
                .toList();
        List<String> restored = new ArrayList<>();
        for (ObjectKey key : descriptors) {
            TopicMetadata cold;
            try {
                cold = TopicDescriptor.fromJson(store.get(key));
            } catch (ObjectNotFoundException e) {
                continue; // deleted meanwhile
            } catch (IllegalArgumentException e) {
                LOG.warn("skipping unreadable topic descriptor {}: {}", key, e.getMessage());
                continue;
            }
            Optional<TopicMetadata> hot = topics.find(cold.name());
            if (hot.isPresent() && !hot.get().id().equals(cold.id())) {
                LOG.warn("topic {}: hot volume has id {}, bucket has {}; leaving both alone", cold.name(),
                        hot.get().id(), cold.id());
                continue;
            }
            for (int p = 0; p < cold.partitions(); p++) {
                preparePartition(new TopicPartition(cold.name(), p));
            }
            if (hot.isEmpty() && topics.restore(cold)) {
                restored.add(cold.name());
                LOG.info("restored topic {} ({} partitions, id {}) from the cold tier", cold.name(),
                        cold.partitions(), cold.id());
            }
        }
        return restored;
    }

    /** Starts an empty hot partition at the cold end. Returns the base of the segment created, or -1. */
    long preparePartition(TopicPartition tp) {
        if (!hotLog.segmentBases(tp).isEmpty()) {
            return -1;
        }
        Manifest m = manifests.load(tp);
        long start = m.coldEnd();
        if (start == 0) {
            return -1;
        }
        if (!hotLog.seedRestored(tp, start)) {
            return -1;
        }
        LOG.info("{}: hot log starts at the cold end {} (logStartOffset {})", tp, start, m.logStartOffset());
        return start;
    }
}
