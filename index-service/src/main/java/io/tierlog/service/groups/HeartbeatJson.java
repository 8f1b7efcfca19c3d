package io.tierlog.service.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tierlog.groups.GroupDescription;
import io.tierlog.groups.Heartbeat;
import io.tierlog.groups.HeartbeatAnswer;
import io.tierlog.groups.TopicPartitions;
import io.tierlog.service.http.Requests;
import io.tierlog.service.topics.TopicAdmin;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The JSON of heartbeats and group descriptions (api.md, "Consumer groups that share work"). */
final class HeartbeatJson {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> FIELDS = Set.of("memberId", "memberEpoch", "topics", "sessionTimeoutMs",
            "ownedPartitions", "clientId");
    private static final Set<String> OWNED_FIELDS = Set.of("topic", "partitions");
    /** Kafka's default {@code session.timeout.ms}. */
    static final long DEFAULT_SESSION_TIMEOUT_MS = 45_000;

    private HeartbeatJson() {
    }

    static Heartbeat parse(byte[] body) {
        ObjectNode req = Requests.object(body, FIELDS);
        String memberId = optionalText(req, "memberId");
        JsonNode epochNode = req.get("memberEpoch");
        if (epochNode == null || epochNode.isNull()) {
            throw Requests.bad("memberEpoch", "memberEpoch is required (0 to join, -1 to leave)");
        }
        long epoch = Requests.asLong(epochNode, "memberEpoch");
        if (epoch < -1 || epoch > Integer.MAX_VALUE) {
            throw Requests.bad("memberEpoch", "memberEpoch must be -1, 0 or a member's epoch: " + epoch);
        }
        Set<String> topics = new LinkedHashSet<>();
        JsonNode topicsNode = req.get("topics");
        if (topicsNode == null || topicsNode.isNull()) {
            if (epoch != -1) {
                throw Requests.bad("topics", "topics is required: the topics to consume, by name");
            }
        } else {
            if (!topicsNode.isArray()) {
                throw Requests.bad("topics", "topics must be an array of topic names");
            }
            for (int i = 0; i < topicsNode.size(); i++) {
                if (!topicsNode.get(i).isTextual()) {
                    throw Requests.bad("topics[" + i + "]", "topics[" + i + "] must be a string");
                }
                topics.add(TopicAdmin.requirePublic(topicsNode.get(i).asText()));
            }
        }
        JsonNode timeoutNode = req.get("sessionTimeoutMs");
        long sessionTimeoutMs = timeoutNode == null || timeoutNode.isNull() ? DEFAULT_SESSION_TIMEOUT_MS
                : Requests.asLong(timeoutNode, "sessionTimeoutMs");
        return new Heartbeat(memberId, (int) epoch, topics, sessionTimeoutMs, owned(req.get("ownedPartitions")),
                optionalText(req, "clientId"));
    }

    private static List<TopicPartitions> owned(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isArray()) {
            throw Requests.bad("ownedPartitions", "ownedPartitions must be an array");
        }
        List<TopicPartitions> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String path = "ownedPartitions[" + i + "]";
            JsonNode e = node.get(i);
            if (!e.isObject()) {
                throw Requests.bad(path, path + " must be an object");
            }
            e.fieldNames().forEachRemaining(n -> {
                if (!OWNED_FIELDS.contains(n)) {
                    throw Requests.bad(path + "." + n, "unknown field '" + path + "." + n + "'");
                }
            });
            String topic = Requests.requiredText(e, "topic", path + ".topic");
            JsonNode parts = e.get("partitions");
            if (parts == null || !parts.isArray()) {
                throw Requests.bad(path + ".partitions", path + ".partitions must be an array");
            }
            List<Integer> ps = new ArrayList<>();
            for (int j = 0; j < parts.size(); j++) {
                long p = Requests.asLong(parts.get(j), path + ".partitions[" + j + "]");
                if (p < 0 || p > Integer.MAX_VALUE) {
                    throw Requests.bad(path + ".partitions[" + j + "]", path + ".partitions[" + j + "] must be >= 0");
                }
                ps.add((int) p);
            }
            out.add(new TopicPartitions(io.tierlog.log.Names.requireValidTopic(topic), ps));
        }
        return out;
    }

    static String optionalText(JsonNode req, String name) {
        JsonNode n = req.get(name);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw Requests.bad(name, name + " must be a string");
        }
        return n.asText();
    }

    static ObjectNode answer(HeartbeatAnswer a) {
        ObjectNode root = NODES.objectNode();
        root.put("memberId", a.memberId());
        root.put("memberEpoch", a.memberEpoch());
        if (a.memberEpoch() != Heartbeat.LEAVE) {
            root.put("heartbeatIntervalMs", a.heartbeatIntervalMs());
        }
        assignment(root.putArray("assignment"), a.assignment());
        return root;
    }

    static ObjectNode description(GroupDescription d) {
        ObjectNode root = NODES.objectNode();
        root.put("group", d.group());
        root.put("state", d.state().wireName());
        root.put("groupEpoch", d.groupEpoch());
        ArrayNode members = root.putArray("members");
        for (GroupDescription.MemberDescription m : d.members()) {
            ObjectNode o = members.addObject();
            o.put("memberId", m.memberId());
            o.put("clientId", m.clientId());
            o.put("memberEpoch", m.memberEpoch());
            assignment(o.putArray("assignment"), m.assignment());
            o.put("lastHeartbeatMs", m.lastHeartbeatMs());
        }
        return root;
    }

    private static void assignment(ArrayNode arr, List<TopicPartitions> assignment) {
        for (TopicPartitions tps : assignment) {
            ObjectNode o = arr.addObject();
            o.put("topic", tps.topic());
            ArrayNode ps = o.putArray("partitions");
            tps.partitions().forEach(ps::add);
        }
    }
}
