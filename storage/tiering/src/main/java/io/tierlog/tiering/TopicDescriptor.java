package io.tierlog.tiering;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.UUID;

/**
 * {@code <topic>/topic.json} in the bucket: enough to re-create the topic on a node whose hot volume is empty.
 * <pre>
 * {"format": 1, "name": "orders", "id": "5f0c…", "partitions": 3, "createdAtMs": 1732867200000,
 *  "config": {"retention.ms": 604800000, "retention.bytes": -1, …}}
 * </pre>
 * Rewritten by the tierer whenever the hot copy's config changes. Stateless.
 */
final class TopicDescriptor {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TopicDescriptor() {
    }

    static byte[] toJson(TopicMetadata t) {
        ObjectNode node = JSON.createObjectNode();
        node.put("format", 1);
        node.put("name", t.name());
        node.put("id", t.id().toString());
        node.put("partitions", t.partitions());
        node.put("createdAtMs", t.createdAtMs());
        ObjectNode config = node.putObject("config");
        t.config().toMap().forEach((k, v) -> config.set(k, JSON.valueToTree(v)));
        try {
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static TopicMetadata fromJson(byte[] bytes) {
        try {
            JsonNode node = JSON.readTree(bytes);
            Map<String, Object> config = JSON.convertValue(node.get("config"), Map.class);
            return new TopicMetadata(node.get("name").asText(), UUID.fromString(node.get("id").asText()),
                    node.get("partitions").asInt(), TopicConfig.DEFAULTS.with(config),
                    node.get("createdAtMs").asLong());
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("unreadable topic.json: " + e.getMessage(), e);
        }
    }
}
