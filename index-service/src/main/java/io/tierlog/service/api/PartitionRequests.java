package io.tierlog.service.api;

import io.tierlog.http.Encoding;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.read.AppendWatcher;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Resolves {@code {topic}/partitions/{p}} path segments to a partition that exists, or the api.md 4xx. */
public final class PartitionRequests {
    private PartitionRequests() {
    }

    public static TopicPartition resolve(TopicStore topics, String topic, String partition) {
        TopicMetadata meta = topics.get(topic);
        int p;
        try {
            p = Integer.parseInt(partition);
        } catch (NumberFormatException e) {
            throw new TierlogException(ErrorType.UNKNOWN_PARTITION, "partition '" + Requests.shorten(partition)
                    + "' is not a partition number of topic '" + topic + "'", Map.of("topic", topic));
        }
        meta.requirePartition(p);
        return new TopicPartition(topic, p);
    }

    /**
     * {@link AppendWatcher#awaitBeyond}, completed with false at once if the topic is gone once the waiter is
     * registered. {@link TopicAdmin} removes a topic's metadata, then wakes its waiters; checking after registering
     * closes the gap in which a reader found the topic, then registered after that wake-up and would wait out
     * its whole timeout.
     */
    public static CompletableFuture<Boolean> awaitBeyond(AppendWatcher watcher, TopicStore topics, TopicPartition tp,
                                                         long offset, Duration timeout) {
        CompletableFuture<Boolean> waiting = watcher.awaitBeyond(tp, offset, timeout);
        if (topics.find(tp.topic()).isEmpty()) {
            waiting.complete(false);
        }
        return waiting;
    }

    public static Encoding encoding(String raw) {
        return Encoding.parse(raw, "encoding");
    }
}
