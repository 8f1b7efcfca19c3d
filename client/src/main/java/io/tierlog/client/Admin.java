package io.tierlog.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Topics, their configs and offsets, consumer groups, share groups and tokens (docs/api.md). Each method is one
 * HTTP call; reads and idempotent writes are retried on 429/5xx/no answer, creates only on 429 and 503. Errors are
 * {@link ProblemException} with the service's {@code type}. Thread-safe, stateless.
 */
public final class Admin {
    private final HttpTransport http;

    Admin(HttpTransport http) {
        this.http = http;
    }

    // ---- topics

    public record TopicSummary(String name, int partitions) {
    }

    public record Segments(int hot, int cold) {
    }

    public record PartitionState(int partition, long logStartOffset, long hotStartOffset, long highWatermark,
                                 long hotBytes, long coldBytes, Segments segments) {
    }

    /** {@code config}: every key with its value as the service renders it (numbers as JSON numbers). */
    public record TopicDescription(String name, int partitions, Map<String, Object> config,
                                   List<PartitionState> partitionStates) {
    }

    public TopicDescription createTopic(String name, int partitions, Map<String, ?> config) {
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("name", name).put("partitions", partitions);
        if (config != null && !config.isEmpty()) {
            body.set("config", HttpTransport.JSON.valueToTree(config));
        }
        return as(http.call("POST", "/v1/topics", body, false), TopicDescription.class);
    }

    public List<TopicSummary> listTopics() {
        return as(http.get("/v1/topics").path("topics"), new TypeReference<>() { });
    }

    public TopicDescription describeTopic(String name) {
        return as(http.get("/v1/topics/" + path(name)), TopicDescription.class);
    }

    /** Changes the given keys; returns the whole new config. */
    public Map<String, Object> alterTopicConfig(String name, Map<String, ?> changes) {
        return as(http.call("PATCH", "/v1/topics/" + path(name) + "/config", changes, true), new TypeReference<>() { });
    }

    public void deleteTopic(String name) {
        http.call("DELETE", "/v1/topics/" + path(name), null, true);
    }

    /** The first offset whose timestamp is {@code >= timestamp}; the high watermark when there is none. */
    public long offsetForTimestamp(String topic, int partition, long timestamp) {
        return http.get("/v1/topics/" + path(topic) + "/partitions/" + partition + "/offsets?timestamp=" + timestamp)
                .path("offset").asLong();
    }

    public long earliestOffset(String topic, int partition) {
        return http.get("/v1/topics/" + path(topic) + "/partitions/" + partition + "/offsets?at=earliest")
                .path("offset").asLong();
    }

    public long latestOffset(String topic, int partition) {
        return http.get("/v1/topics/" + path(topic) + "/partitions/" + partition + "/offsets?at=latest")
                .path("offset").asLong();
    }

    /**
     * The first offset of the partition's oldest open Kafka transaction, or the high watermark when none is open:
     * where a read_committed reader's end is.
     */
    public long lastStableOffset(String topic, int partition) {
        return http.get("/v1/topics/" + path(topic) + "/partitions/" + partition
                + "/offsets?at=latest&isolation=read_committed").path("offset").asLong();
    }

    // ---- consumer groups

    public record GroupSummary(String group, long totalLag) {
    }

    public record PartitionLag(String topic, int partition, long committedOffset, long highWatermark, long lag,
                               long lagMs) {
    }

    public record GroupLag(String group, long totalLag, List<PartitionLag> partitions) {
    }

    public record Assignment(String topic, List<Integer> partitions) {
    }

    public record Member(String memberId, String clientId, int memberEpoch, List<Assignment> assignment,
                         long lastHeartbeatMs) {
    }

    public record GroupDescription(String group, String state, int groupEpoch, List<Member> members) {
    }

    public List<GroupSummary> listGroups() {
        return as(http.get("/v1/groups").path("groups"), new TypeReference<>() { });
    }

    public GroupDescription describeGroup(String group) {
        return as(http.get("/v1/groups/" + path(group)), GroupDescription.class);
    }

    public GroupLag groupLag(String group) {
        return as(http.get("/v1/groups/" + path(group) + "/lag"), GroupLag.class);
    }

    /** The group's committed offsets (the next offset it will read, per partition). */
    public Map<TopicPartition, Long> groupOffsets(String group) {
        return offsets(http.get("/v1/groups/" + path(group) + "/offsets"));
    }

    /** Commits offsets for a group without members (a member commits through its {@link Consumer}). */
    public void commitOffsets(String group, Map<TopicPartition, Long> offsets) {
        http.call("PUT", "/v1/groups/" + path(group) + "/offsets", offsetsBody(offsets, null, 0), true);
    }

    /** Resets every partition of {@code topics} to {@code to}: "earliest", "latest" or "timestamp". */
    public Map<TopicPartition, Long> resetGroupOffsets(String group, List<String> topics, String to, Long timestamp) {
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("to", to);
        ArrayNode t = body.putArray("topics");
        topics.forEach(t::add);
        if (timestamp != null) {
            body.put("timestamp", timestamp);
        }
        return offsets(http.call("POST", "/v1/groups/" + path(group) + "/offsets/reset", body, true));
    }

    public void deleteGroup(String group) {
        http.call("DELETE", "/v1/groups/" + path(group), null, true);
    }

    // ---- share groups

    /** Sets a share group's config ({@code start}, {@code max.delivery.attempts}, ...); returns the answer. */
    public JsonNode setShareGroupConfig(String group, Map<String, ?> config) {
        return http.call("PUT", "/v1/share-groups/" + path(group) + "/config", config, true);
    }

    public JsonNode describeShareGroup(String group) {
        return http.get("/v1/share-groups/" + path(group));
    }

    public void deleteShareGroup(String group) {
        http.call("DELETE", "/v1/share-groups/" + path(group), null, true);
    }

    // ---- tokens (need admin:cluster)

    public record TokenInfo(String id, String name, String scopes, Long expiresAt) {
    }

    /** {@code token} is the secret: shown in this answer only. */
    public record CreatedToken(String id, String name, String scopes, Long expiresAt, String token) {
    }

    public CreatedToken createToken(String name, String scopes, Long expiresAt) {
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("name", name).put("scopes", scopes);
        if (expiresAt != null) {
            body.put("expiresAt", expiresAt);
        }
        return as(http.call("POST", "/v1/tokens", body, false), CreatedToken.class);
    }

    public List<TokenInfo> listTokens() {
        return as(http.get("/v1/tokens").path("tokens"), new TypeReference<>() { });
    }

    public void revokeToken(String id) {
        http.call("DELETE", "/v1/tokens/" + URLEncoder.encode(id, StandardCharsets.UTF_8), null, true);
    }

    // ---- helpers

    static ObjectNode offsetsBody(Map<TopicPartition, Long> offsets, String memberId, int memberEpoch) {
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        ArrayNode list = body.putArray("offsets");
        offsets.forEach((tp, o) -> list.addObject().put("topic", tp.topic()).put("partition", tp.partition())
                .put("offset", o));
        if (memberId != null) {
            body.put("memberId", memberId).put("memberEpoch", memberEpoch);
        }
        return body;
    }

    static Map<TopicPartition, Long> offsets(JsonNode answer) {
        Map<TopicPartition, Long> out = new TreeMap<>();
        for (JsonNode o : answer.path("offsets")) {
            out.put(new TopicPartition(o.path("topic").asText(), o.path("partition").asInt()), o.path("offset").asLong());
        }
        return out;
    }

    /** Topic and group names are [A-Za-z0-9._-]; anything else is encoded so that the service refuses it by name. */
    static String path(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static <T> T as(JsonNode node, Class<T> type) {
        try {
            return HttpTransport.JSON.treeToValue(node, type);
        } catch (JsonProcessingException e) {
            throw new TierlogException("unexpected answer: " + e.getOriginalMessage(), e);
        }
    }

    private static <T> T as(JsonNode node, TypeReference<T> type) {
        try {
            return HttpTransport.JSON.readValue(HttpTransport.JSON.treeAsTokens(node), type);
        } catch (java.io.IOException e) {
            throw new TierlogException("unexpected answer: " + e.getMessage(), e);
        }
    }
}
