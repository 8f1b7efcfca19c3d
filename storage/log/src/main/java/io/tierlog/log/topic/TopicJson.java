package io.tierlog.log.topic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.UUID;

/**
 * A topic's metadata as JSON, one form for every copy of it: the hot volume's {@code __metadata/topics/<name>.json}
 * ({@link TopicStore}) and the cold tier's {@code <topic>/topic.json}, which adds a {@code format} member.
 * <pre>
 * {"name": "orders", "id": "5f0c…", "partitions": 3, "createdAtMs": 1732867200000,
 *  "config": {"retention.ms": 604800000, "retention.bytes": -1, …}}
 * </pre>
 * Stateless and thread-safe.
 */
public final class TopicJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TopicJson() {
    }

    /** Adds the topic's members to {@code node} (after whatever it already holds) and returns it. */
    public static ObjectNode write(TopicMetadata t, ObjectNode node) {
        node.put("name", t.name());
        node.put("id", t.id().toString());
        node.put("partitions", t.partitions());
        node.put("createdAtMs", t.createdAtMs());
        ObjectNode config = node.putObject("config");
        t.config().toMap().forEach(config::put);
        return node;
    }

    /** A new object node to {@link #write} into. */
    public static ObjectNode newNode() {
        return JSON.createObjectNode();
    }

    /** The bytes of {@code node}, indented when {@code pretty}. */
    public static byte[] bytes(ObjectNode node, boolean pretty) {
        try {
            return pretty ? JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(node) : JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The topic a document written by {@link #write} describes; members it does not know are ignored. */
    @SuppressWarnings("unchecked")
    public static TopicMetadata read(byte[] bytes) throws IOException {
        JsonNode node = JSON.readTree(bytes);
        Map<String, Object> config = JSON.convertValue(node.get("config"), Map.class);
        return new TopicMetadata(node.get("name").asText(), UUID.fromString(node.get("id").asText()),
                node.get("partitions").asInt(), TopicConfig.DEFAULTS.with(config), node.get("createdAtMs").asLong());
    }
}
