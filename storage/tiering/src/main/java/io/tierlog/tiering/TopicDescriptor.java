package io.tierlog.tiering;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.topic.TopicJson;
import io.tierlog.log.topic.TopicMetadata;

import java.io.IOException;

/**
 * {@code <topic>/topic.json} in the bucket: enough to re-create the topic on a node whose hot volume is empty.
 * <pre>
 * {"format": 1, "name": "orders", "id": "5f0c…", "partitions": 3, "createdAtMs": 1732867200000,
 *  "config": {"retention.ms": 604800000, "retention.bytes": -1, …}}
 * </pre>
 * The hot copy's form ({@link TopicJson}) plus {@code format}. Rewritten by the tierer whenever the hot copy's
 * config changes. Stateless.
 */
final class TopicDescriptor {
    private TopicDescriptor() {
    }

    static byte[] toJson(TopicMetadata t) {
        ObjectNode node = TopicJson.newNode();
        node.put("format", 1);
        return TopicJson.bytes(TopicJson.write(t, node), false);
    }

    static TopicMetadata fromJson(byte[] bytes) {
        try {
            return TopicJson.read(bytes);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("unreadable topic.json: " + e.getMessage(), e);
        }
    }
}
