package io.tierlog.service.kafka;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicIdException;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.UUID;

/**
 * Topics as Kafka clients name them: by name (older request versions) or by topic id (Fetch 13+, Produce 13+,
 * DeleteTopics 6+), the id being the topic's own {@link TopicMetadata#id()}, so it changes when a topic is deleted
 * and re-created, as in Kafka. Internal {@code __} topics are not visible over Kafka (their records are Tierlog's
 * own format, not Kafka's). Reads the shared volume on every call, as the HTTP API does.
 */
final class KafkaTopics {
    private final TopicStore topics;

    KafkaTopics(TopicStore topics) {
        this.topics = topics;
    }

    /**
     * Topic ids this process has handed out or resolved, with their names: an id names one topic forever (a topic
     * re-created under its name gets a new id), so authorization can name the topic of a request that uses ids without
     * reading the volume on the event loop. Grows with the topics ever seen, like Kafka's own id cache.
     */
    private static final Map<Uuid, String> NAMES = new ConcurrentHashMap<>();

    static Uuid idOf(TopicMetadata topic) {
        UUID id = topic.id();
        Uuid kafkaId = new Uuid(id.getMostSignificantBits(), id.getLeastSignificantBits());
        NAMES.putIfAbsent(kafkaId, topic.name());
        return kafkaId;
    }

    /** The name of a topic id seen before by this process (no I/O), if any. */
    static Optional<String> knownName(Uuid id) {
        return Optional.ofNullable(NAMES.get(id));
    }

    /** By name when one is given, else by id. */
    TopicMetadata resolve(String name, Uuid id) {
        if (name != null && !name.isEmpty()) {
            return byName(name);
        }
        if (id == null || Uuid.ZERO_UUID.equals(id)) {
            throw new TierlogException(ErrorType.UNKNOWN_TOPIC, "a topic name or id is required");
        }
        String known = NAMES.get(id);
        if (known != null) {
            // The usual case (Fetch 13+ names topics by id on every fetch): one topic read, not a listing of all.
            try {
                TopicMetadata t = topics.get(known);
                if (idOf(t).equals(id)) {
                    return t;
                }
            } catch (RuntimeException goneOrRecreated) {
                // deleted since: the listing below answers UNKNOWN_TOPIC_ID
            }
        }
        return topics.list().stream().filter(t -> !TopicAdmin.isInternal(t.name()) && idOf(t).equals(id)).findFirst()
                .orElseThrow(() -> new UnknownTopicIdException("unknown topic id " + id));
    }

    TopicMetadata byName(String name) {
        if (TopicAdmin.isInternal(name)) {
            throw new TierlogException(ErrorType.UNKNOWN_TOPIC, "topic '" + name + "' does not exist",
                    Map.of("topic", name));
        }
        return topics.get(name);
    }
}
