package io.tierlog.log.topic;

import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.io.AtomicFiles;
import io.tierlog.log.io.FileVersion;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Topic metadata on the hot volume, one JSON file per topic under {@code <data-dir>/__metadata/topics/}.
 *
 * <p>The hot volume is shared by processes (ingest functions and the index-service), so every call checks the file:
 * a change made by another process is seen at once. The last parse is kept with the file's version (one {@code stat},
 * {@link FileVersion}) and reused while the version is unchanged and settled, else the file is read and parsed again
 * unless its bytes are those parsed last time (every produce and fetch looks its topic up; a read of the file cost
 * a fetch of 8 partitions more than the rest of its lookups on a busy volume, ADR 0073). Creation is
 * atomic and exclusive across processes (a hard link, which fails if the name exists); config updates replace the
 * file atomically (rename). A reader therefore sees either the old or the new file, never a partial one.
 *
 * <p>Thread-safe.
 */
public final class TopicStore {

    private final Path dir;
    private final Clock clock;
    /** The last parse of each topic's file, by name. */
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();

    /** A parse, the bytes and version it came from, and whether the version is settled (see class). */
    private record Parsed(FileVersion version, boolean settled, byte[] json, TopicMetadata topic) {
    }

    public TopicStore(Path dataDir, Clock clock) {
        this.dir = dataDir.resolve("__metadata").resolve("topics");
        this.clock = clock;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    /** Creates a topic; {@code topic-exists} if one of that name exists. */
    public TopicMetadata create(String name, int partitions, TopicConfig config) {
        TopicMetadata topic = new TopicMetadata(name, UUID.randomUUID(), partitions, config, clock.millis());
        if (!AtomicFiles.createExclusive(file(name), toJson(topic))) {
            throw new TierlogException(ErrorType.TOPIC_EXISTS, "topic '" + name + "' already exists",
                    Map.of("topic", name));
        }
        return topic;
    }

    public Optional<TopicMetadata> find(String name) {
        Path file = file(name);
        long now = clock.millis();
        try {
            FileVersion version = FileVersion.of(Files.readAttributes(file, BasicFileAttributes.class));
            Parsed last = parsed.get(name);
            if (last != null && last.settled() && version.equals(last.version())) {
                return Optional.of(last.topic());
            }
            // Read after the stat: the bytes are never older than the version kept with them.
            byte[] json = Files.readAllBytes(file);
            TopicMetadata topic = last != null && Arrays.equals(last.json(), json) ? last.topic() : fromJson(json);
            parsed.put(name, new Parsed(version, version.settledBy(now), json, topic));
            return Optional.of(topic);
        } catch (NoSuchFileException e) {
            parsed.remove(name);
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read topic " + name, e);
        }
    }

    /** The topic, or {@code unknown-topic}. */
    public TopicMetadata get(String name) {
        return find(name).orElseThrow(() -> unknownTopic(name));
    }

    /** The contract's 404 {@code unknown-topic} for {@code name}. */
    public static TierlogException unknownTopic(String name) {
        return new TierlogException(ErrorType.UNKNOWN_TOPIC, "topic '" + name + "' does not exist",
                Map.of("topic", name));
    }

    public TopicMetadata updateConfig(String name, Map<String, ?> changes) {
        TopicMetadata current = get(name);
        TopicMetadata updated = new TopicMetadata(name, current.id(), current.partitions(),
                current.config().with(changes), current.createdAtMs());
        AtomicFiles.replace(file(name), toJson(updated));
        return updated;
    }

    /**
     * Grows the topic to {@code partitions} partitions (Kafka's CreatePartitions): the new ones start empty, the
     * existing ones keep their data, and keyed records map to partitions by the new count from then on, as in Kafka.
     * The same unlocked read-modify-write of the metadata file as {@link #updateConfig}.
     *
     * @throws TierlogException {@code bad-request} naming {@code partitions} unless it is above the current
     *                          count and at most {@link TopicMetadata#MAX_PARTITIONS}; {@code unknown-topic}
     */
    public TopicMetadata increasePartitions(String name, int partitions) {
        TopicMetadata current = get(name);
        if (partitions <= current.partitions() || partitions > TopicMetadata.MAX_PARTITIONS) {
            throw new TierlogException(ErrorType.BAD_REQUEST, "topic '" + name + "' has " + current.partitions()
                    + " partitions; a new count must be above that and at most " + TopicMetadata.MAX_PARTITIONS + ": "
                    + partitions, Map.of("field", "partitions"));
        }
        TopicMetadata updated = new TopicMetadata(name, current.id(), partitions, current.config(),
                current.createdAtMs());
        AtomicFiles.replace(file(name), toJson(updated));
        return updated;
    }

    /**
     * Re-creates a topic exactly as described (same id, partitions, config and creation time), e.g. from the
     * cold tier's copy on a node whose hot volume is empty. Exclusive like {@link #create}: returns false,
     * changing nothing, if a topic of that name exists.
     */
    public boolean restore(TopicMetadata topic) {
        return AtomicFiles.createExclusive(file(topic.name()), toJson(topic));
    }

    /** Removes the metadata file, which makes the topic unknown to every process; true if it existed. */
    public boolean delete(String name) {
        Names.requireValidTopic(name);
        try {
            return Files.deleteIfExists(file(name));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete topic " + name, e);
        }
    }

    /** All topics, by name. */
    public List<TopicMetadata> list() {
        List<TopicMetadata> topics = new ArrayList<>();
        for (String name : names()) {
            find(name).ifPresent(topics::add);
        }
        return topics;
    }

    /** The names of all topics, sorted: one directory listing, no topic file read (a stray file is no topic). */
    public List<String> names() {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".json"))
                    .map(f -> f.substring(0, f.length() - ".json".length())).filter(Names::isValid)
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }

    private Path file(String name) {
        return dir.resolve(Names.requireValidTopic(name) + ".json");
    }

    static byte[] toJson(TopicMetadata t) {
        return TopicJson.bytes(TopicJson.write(t, TopicJson.newNode()), true);
    }

    static TopicMetadata fromJson(byte[] bytes) throws IOException {
        return TopicJson.read(bytes);
    }
}
