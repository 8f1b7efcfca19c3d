package io.tierlog.service.api;

import io.tierlog.ingest.Encoding;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;

import java.util.Map;

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

    public static Encoding encoding(String raw) {
        return Encoding.parse(raw, "encoding");
    }
}
