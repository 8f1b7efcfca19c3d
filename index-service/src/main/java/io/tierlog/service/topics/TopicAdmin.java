package io.tierlog.service.topics;

import io.tierlog.ingest.IngestService;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.objectstore.ObjectStoreException;
import io.tierlog.service.cold.ColdTier;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.read.HotTier;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.Map;

/**
 * Topic lifecycle over {@link TopicStore}: create, list (internal {@code __} topics hidden), reconfigure, delete.
 *
 * <p>Delete order, chosen so that a crash part-way never leaves a topic that looks alive with missing data:
 * the metadata file goes first (every process then sees the topic as unknown and stops appending), then this
 * process's writers are closed, then the partition directories and the derived index state are removed. A
 * crash after the first step leaves orphan directories that a re-created topic of the same name does not
 * reuse: creation clears them first. Long-polls and streams waiting on the topic are woken once the metadata is
 * gone, so they answer 404 or end at once.
 *
 * <p>Thread-safe.
 */
@Singleton
public class TopicAdmin {
    private static final Logger LOG = Logger.getLogger(TopicAdmin.class);
    public static final String INTERNAL_PREFIX = "__";

    private final TopicStore topics;
    private final IngestService ingest;
    private final HotTier hot;

    private final ColdTier cold;
    private final AppendWatcher watcher;

    public TopicAdmin(TopicStore topics, IngestService ingest, HotTier hot, ColdTier cold, AppendWatcher watcher,
                      TierlogConfig config) {
        this.topics = topics;
        this.watcher = watcher;
        this.ingest = ingest;
        this.hot = hot;
        this.cold = cold;
    }

    public static boolean isInternal(String topic) {
        return topic.startsWith(INTERNAL_PREFIX);
    }

    /** Rejects names reserved for internal topics, for the public create/delete/produce paths. */
    public static String requirePublic(String topic) {
        Names.requireValidTopic(topic);
        if (isInternal(topic)) {
            throw new TierlogException(ErrorType.INVALID_TOPIC, "topic names starting with '" + INTERNAL_PREFIX
                    + "' are reserved for internal topics: " + topic, Map.of("topic", topic));
        }
        return topic;
    }

    public TopicMetadata create(String name, int partitions, Map<String, ?> config) {
        requirePublic(name);
        return createAny(name, partitions, config);
    }

    /** Creates a topic, internal names allowed; clears orphan partition directories of a crashed delete first. */
    public TopicMetadata createAny(String name, int partitions, Map<String, ?> config) {
        TopicConfig topicConfig = TopicConfig.DEFAULTS.with(config);
        if (topics.find(name).isEmpty()) {
            for (int p = 0; p < TopicMetadata.MAX_PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(name, p);
                if (!hot.log().hasPartition(tp)) {
                    break;
                }
                LOG.warnf("topic %s: removing orphan partition %s left by an interrupted delete", name, tp);
                hot.log().deletePartition(tp);
            }
        }
        return topics.create(name, partitions, topicConfig);
    }

    public List<TopicMetadata> listPublic() {
        return topics.list().stream().filter(t -> !isInternal(t.name())).toList();
    }

    public TopicMetadata get(String name) {
        return topics.get(name);
    }

    public TopicMetadata updateConfig(String name, Map<String, ?> changes) {
        return topics.updateConfig(name, changes);
    }

    /** Grows a public topic's partition count ({@link TopicStore#increasePartitions}). */
    public TopicMetadata increasePartitions(String name, int partitions) {
        requirePublic(name);
        return topics.increasePartitions(name, partitions);
    }

    /** Deletes a public topic with its hot and cold data; the topic as it was. */
    public TopicMetadata delete(String name) {
        requirePublic(name);
        TopicMetadata topic = topics.get(name);
        // The bucket's descriptor goes first: with S3 down the delete fails (503) having changed nothing, and no
        // node can restore the topic from the bucket once the hot metadata is gone.
        cold.deleteTopicDescriptor(name);
        ingest.forgetTopic(name);
        topics.delete(name);
        ingest.forgetTopic(name);
        wakeReaders(topic);
        for (int p = 0; p < topic.partitions(); p++) {
            hot.log().deletePartition(new TopicPartition(name, p));
        }
        hot.forget(name, topic.partitions());
        try {
            cold.deleteTopic(name);
        } catch (ObjectStoreException e) {
            // Leftovers without a descriptor belong to no live topic: a re-created topic of this name clears them.
            LOG.warnf("topic %s: cold objects not deleted yet (%s); they are removed when the name is reused",
                    name, e.getMessage());
        }
        LOG.infof("topic %s (%d partitions) deleted", name, topic.partitions());
        return topic;
    }

    /**
     * Ends this process's long-polls and streams on a deleted topic at once rather than at their timeout: each
     * waiter is woken as if records had arrived, and its next step finds the topic gone (404, or the stream's end).
     */
    private void wakeReaders(TopicMetadata topic) {
        for (int p = 0; p < topic.partitions(); p++) {
            watcher.appended(new TopicPartition(topic.name(), p), Long.MAX_VALUE);
        }
    }
}
