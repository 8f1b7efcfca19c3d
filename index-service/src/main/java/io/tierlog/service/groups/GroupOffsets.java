package io.tierlog.service.groups;

import io.tierlog.ingest.IngestService;
import io.tierlog.ingest.Partitioner;
import io.tierlog.ingest.ProduceRecord;
import io.tierlog.ingest.ProduceRequest;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.log.topic.TopicMetadata;
import io.tierlog.log.topic.TopicStore;
import io.tierlog.service.topics.TopicAdmin;
import io.tierlog.service.config.TierlogConfig;
import io.tierlog.service.read.FetchResult;
import io.tierlog.service.read.PartitionReads;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.runtime.Startup;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Consumer-group committed offsets, kept the Kafka way: every commit is a record in the internal topic
 * {@value #TOPIC} on the hot volume (durable state, appended through {@link IngestService} like any produce),
 * and the current offsets are the fold of that log into memory. Deleting the index loses nothing, and commits
 * made by another service instance on the same volume are seen on the next {@link #refresh()}.
 *
 * <p>The topic is compacted ({@code cleanup.policy=compact}, as Kafka's): once its sealed segments are tiered, the
 * cleaner keeps the last commit of each key, so the fold at start reads what is current, not all history.
 *
 * <p>Record format: key = UTF-8 {@code group \0 topic \0 partition}; value = UTF-8 JSON
 * {@code {"offset": N, "commitTimestamp": ms, "topicId": "<uuid>"}}, with {@code "metadata": "..."} when a Kafka
 * client committed some; a null value (tombstone) removes the entry.
 *
 * <p>A commit belongs to one incarnation of its topic, named by the topic's id: once the topic is deleted, or deleted
 * and created again under its name, the commit is no longer the group's (as Kafka removes a deleted topic's offsets),
 * so a group reading the new topic starts where its reset policy says, not at a position in the old one. Commits
 * written before ids were recorded have none and stay the group's. All of a group's
 * commits go to partition {@code murmur2(group) % partitions}, so one PUT is one atomic batch and a group's
 * commits are totally ordered. Records that do not parse are skipped with a warning (they were not written by us).
 *
 * <p>Thread-safe: commits append concurrently; folding is serialized.
 */
@Singleton
@Startup
public class GroupOffsets {
    public static final String TOPIC = TopicAdmin.INTERNAL_PREFIX + "consumer_offsets";
    /** The longest metadata a commit may carry: Kafka's {@code offset.metadata.max.bytes} default (it counts chars). */
    public static final int MAX_METADATA_CHARS = 4096;
    private static final Logger LOG = Logger.getLogger(GroupOffsets.class);
    private static final int FOLD_BATCH = 5000;
    /** The commit log is keyed by (group, topic, partition): Kafka compacts its __consumer_offsets too. */
    private static final Map<String, Object> COMPACTED = Map.of(TopicConfig.CLEANUP_POLICY, TopicConfig.POLICY_COMPACT);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a first-unconsumed timestamp serves {@link #lagMs} (retention or compaction may move the record). */
    static final Duration FIRST_TIMESTAMP_REUSE = Duration.ofMinutes(1);
    /** Remembered timestamps above which all are forgotten (one per lagging group and partition in use). */
    private static final int MAX_FIRST_TIMESTAMPS = 100_000;

    private final IngestService ingest;
    private final TopicStore topics;
    private final PartitionReads reads;
    private final Clock clock;
    private final int partitions;
    private final long[] folded;
    /** group → "topic\0partition"-ordered commits. */
    private final Map<String, Map<Key, Commit>> committed = new ConcurrentHashMap<>();
    /** Timestamps of first unconsumed records, by partition and committed offset (see {@link #lagMs}). */
    private final Map<FirstUnconsumed, Remembered> firstTimestamps = new ConcurrentHashMap<>();

    private record Key(String topic, int partition) {
    }

    /**
     * @param metadata null when the commit carried none
     * @param topicId  the id of the topic incarnation committed to; null for a commit written before ids were kept
     */
    private record Commit(long offset, String metadata, UUID topicId) {
        /** Whether this commit is of the topic as {@code topics} finds it now. */
        boolean ofCurrent(Optional<TopicMetadata> topic) {
            return topicId == null || topic.map(t -> t.id().equals(topicId)).orElse(false);
        }
    }

    private record FirstUnconsumed(TopicPartition tp, long committed) {
    }

    private record Remembered(long timestamp, long readAtMs) {
    }

    private static final Comparator<Key> ORDER = Comparator.comparing(Key::topic).thenComparingInt(Key::partition);

    public GroupOffsets(IngestService ingest, TopicAdmin admin, TopicStore topics, PartitionReads reads,
                        TierlogConfig config, Clock clock) {
        this.ingest = ingest;
        this.topics = topics;
        this.reads = reads;
        this.clock = clock;
        TopicMetadata meta = topics.find(TOPIC).orElseGet(() -> {
            try {
                return admin.createAny(TOPIC, config.groups().offsetsTopicPartitions(), COMPACTED);
            } catch (TierlogException e) {
                if (e.type() == ErrorType.TOPIC_EXISTS) {
                    return topics.get(TOPIC); // another instance created it first
                }
                throw e;
            }
        });
        if (!meta.config().compacts()) {
            // Created before compaction existed: as in Kafka, the commit log keeps each key's last commit, so the
            // fold at start reads one record per (group, topic, partition) rather than every commit ever made.
            meta = topics.updateConfig(TOPIC, COMPACTED);
            LOG.infof("%s is now compacted (cleanup.policy=compact)", TOPIC);
        }
        this.partitions = meta.partitions();
        this.folded = new long[partitions];
        refresh();
    }

    /**
     * Validates every entry, then appends them as one batch. Nothing is written unless all are valid.
     *
     * @throws TierlogException {@code invalid-group}, {@code unknown-topic}, {@code unknown-partition},
     *                          {@code bad-request} (negative offset) or {@code offset-out-of-range} (above the
     *                          partition's high watermark)
     */
    public void commit(String group, List<CommittedOffset> offsets) {
        Names.requireValidGroup(group);
        long now = clock.millis();
        List<ProduceRecord> records = new ArrayList<>(offsets.size());
        int target = Partitioner.forKey(group.getBytes(StandardCharsets.UTF_8), partitions);
        for (int i = 0; i < offsets.size(); i++) {
            CommittedOffset o = offsets.get(i);
            TopicMetadata topic = topics.get(o.topic());
            topic.requirePartition(o.partition());
            if (o.offset() < 0) {
                throw new TierlogException(ErrorType.BAD_REQUEST, "offsets[" + i + "].offset must be >= 0: " + o.offset(),
                        Map.of("field", "offsets[" + i + "].offset"));
            }
            if (o.metadata() != null && o.metadata().length() > MAX_METADATA_CHARS) {
                throw new TierlogException(ErrorType.BAD_REQUEST, "offsets[" + i + "].metadata must be at most "
                        + MAX_METADATA_CHARS + " characters: " + o.metadata().length(),
                        Map.of("field", "offsets[" + i + "].metadata"));
            }
            TopicPartition tp = new TopicPartition(o.topic(), o.partition());
            long hw = reads.highWatermark(tp);
            if (o.offset() > hw) {
                throw PartitionReads.outOfRange(tp, o.offset(), Math.min(reads.logStartOffset(tp), hw), hw);
            }
            ObjectNode json = JSON.createObjectNode().put("offset", o.offset()).put("commitTimestamp", now)
                    .put("topicId", topic.id().toString());
            if (o.metadata() != null && !o.metadata().isEmpty()) {
                json.put("metadata", o.metadata());
            }
            byte[] value = json.toString().getBytes(StandardCharsets.UTF_8);
            records.add(new ProduceRecord(key(group, o.topic(), o.partition()), value,
                    List.of(), target, now));
        }
        if (records.isEmpty()) {
            return;
        }
        ingest.produce(TOPIC, new ProduceRequest(records, Optional.empty()));
        refresh();
    }

    /**
     * Removes every committed offset of {@code group} (one batch of tombstones); false when it had none.
     * The caller holds the group's lock ({@code GroupCoordinator#delete}), so no commit races with it.
     */
    public boolean delete(String group) {
        Names.requireValidGroup(group);
        refresh();
        List<CommittedOffset> current = listed(committed.getOrDefault(group, Map.of()), name -> Optional.empty(), true);
        if (current.isEmpty()) {
            return false;
        }
        long now = clock.millis();
        int target = Partitioner.forKey(group.getBytes(StandardCharsets.UTF_8), partitions);
        List<ProduceRecord> tombstones = new ArrayList<>(current.size());
        for (CommittedOffset o : current) {
            tombstones.add(new ProduceRecord(key(group, o.topic(), o.partition()), null, List.of(), target, now));
        }
        ingest.produce(TOPIC, new ProduceRequest(tombstones, Optional.empty()));
        refresh();
        return true;
    }

    /**
     * Removes the group's committed offsets of {@code partitions} (one batch of tombstones for those it has);
     * returns the partitions that had one. The caller decides whether the group may lose them (Kafka's OffsetDelete
     * refuses topics the group's members subscribe to).
     */
    public List<TopicPartition> delete(String group, Collection<TopicPartition> partitions) {
        Names.requireValidGroup(group);
        Set<TopicPartition> asked = new HashSet<>(partitions);
        List<TopicPartition> had = new ArrayList<>();
        refresh();
        for (CommittedOffset o : listed(committed.getOrDefault(group, Map.of()), name -> Optional.empty(), true)) {
            TopicPartition tp = new TopicPartition(o.topic(), o.partition());
            if (asked.contains(tp)) {
                had.add(tp);
            }
        }
        if (had.isEmpty()) {
            return had;
        }
        long now = clock.millis();
        int target = Partitioner.forKey(group.getBytes(StandardCharsets.UTF_8), this.partitions);
        List<ProduceRecord> tombstones = new ArrayList<>(had.size());
        for (TopicPartition tp : had) {
            tombstones.add(new ProduceRecord(key(group, tp.topic(), tp.partition()), null, List.of(), target, now));
        }
        ingest.produce(TOPIC, new ProduceRequest(tombstones, Optional.empty()));
        refresh();
        return had;
    }

    /** The group's committed offsets, ordered by topic and partition; empty for a group that never committed. */
    public List<CommittedOffset> offsets(String group) {
        Names.requireValidGroup(group);
        refresh();
        return listed(committed.getOrDefault(group, Map.of()), memoized(), false);
    }

    /** A lookup of topics by name that reads each one once: one listing may name a topic many times. */
    private Function<String, Optional<TopicMetadata>> memoized() {
        Map<String, Optional<TopicMetadata>> seen = new HashMap<>();
        return name -> seen.computeIfAbsent(name, topics::find);
    }

    /**
     * @param all also the commits of a topic incarnation that is gone (to remove them), which are otherwise left out
     */
    private static List<CommittedOffset> listed(Map<Key, Commit> offsets,
                                                Function<String, Optional<TopicMetadata>> topicByName, boolean all) {
        List<CommittedOffset> out = new ArrayList<>(offsets.size());
        offsets.forEach((k, v) -> {
            if (all || v.ofCurrent(topicByName.apply(k.topic()))) {
                out.add(new CommittedOffset(k.topic(), k.partition(), v.offset(), v.metadata()));
            }
        });
        return out;
    }

    /** Groups with at least one committed offset, by name. */
    public List<String> groups() {
        refresh();
        Function<String, Optional<TopicMetadata>> topicByName = memoized();
        return committed.entrySet().stream().filter(e -> !listed(e.getValue(), topicByName, false).isEmpty())
                .map(Map.Entry::getKey).sorted().toList();
    }

    /** Folds records appended to {@value #TOPIC} since the last fold, by any process. */
    public synchronized void refresh() {
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(TOPIC, p);
            while (true) {
                FetchResult r;
                try {
                    r = reads.fetch(tp, folded[p], FOLD_BATCH, 4 * 1024 * 1024);
                } catch (TierlogException e) {
                    if (e.type() != ErrorType.OFFSET_OUT_OF_RANGE) {
                        throw e;
                    }
                    // Retention moved the start past what we folded; continue from the new start.
                    folded[p] = ((Number) e.extra().get("logStartOffset")).longValue();
                    continue;
                }
                if (r.records().isEmpty()) {
                    break;
                }
                r.records().forEach(this::apply);
                folded[p] = r.nextOffset();
            }
        }
    }

    private void apply(LogRecord r) {
        String[] parts = r.key() == null ? new String[0] : new String(r.key(), StandardCharsets.UTF_8).split("\0", -1);
        Commit commit = r.value() == null ? null : parseCommit(r.value());
        if (parts.length != 3 || (r.value() != null && commit == null)) {
            LOG.warnf("%s offset %d: skipping a record that is not a group commit", TOPIC, r.offset());
            return;
        }
        int partition;
        try {
            partition = Integer.parseInt(parts[2]);
        } catch (NumberFormatException e) {
            LOG.warnf("%s offset %d: skipping a record with partition '%s'", TOPIC, r.offset(), parts[2]);
            return;
        }
        Map<Key, Commit> m = committed.computeIfAbsent(parts[0],
                g -> new java.util.concurrent.ConcurrentSkipListMap<>(ORDER));
        if (commit == null) {
            m.remove(new Key(parts[1], partition));
        } else {
            m.put(new Key(parts[1], partition), commit);
        }
    }

    private static Commit parseCommit(byte[] value) {
        try {
            JsonNode json = JSON.readTree(value);
            JsonNode offset = json.get("offset");
            if (offset == null || !offset.canConvertToLong()) {
                return null;
            }
            JsonNode metadata = json.get("metadata");
            JsonNode topicId = json.get("topicId");
            return new Commit(offset.asLong(), metadata != null && metadata.isTextual() ? metadata.asText() : null,
                    topicId != null && topicId.isTextual() ? UUID.fromString(topicId.asText()) : null);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static byte[] key(String group, String topic, int partition) {
        return (group + "\0" + topic + "\0" + partition).getBytes(StandardCharsets.UTF_8);
    }

    /** Lag of each committed partition of {@code group} whose topic still exists. */
    public List<PartitionLag> lag(String group) {
        return lag(offsets(group), new LagLookups());
    }

    /**
     * The lag of every group with commits, by group (sorted), after one fold of the commits log: what the metrics
     * refresh reports. {@link #lag} folds once per call, and a refresh that folded per group listed every partition
     * of the commits topic once per group; here each topic and partition end is looked up once for all groups.
     */
    public Map<String, List<PartitionLag>> lags() {
        return lags(Map.of());
    }

    /**
     * As {@link #lags()}, with partition ends the caller has just looked up (the metrics refresh reads every
     * public partition's high watermark first): each is used as is, not looked up again.
     */
    public Map<String, List<PartitionLag>> lags(Map<TopicPartition, Long> knownHighWatermarks) {
        refresh();
        LagLookups lookups = new LagLookups();
        lookups.highWatermarks.putAll(knownHighWatermarks);
        Map<String, List<PartitionLag>> out = new TreeMap<>();
        committed.forEach((group, offsets) -> {
            if (!offsets.isEmpty()) {
                out.put(group, lag(listed(offsets, name -> lookups.topicsByName.computeIfAbsent(name, topics::find),
                        false), lookups));
            }
        });
        return out;
    }

    /** Topics and partition ends looked up once per lag computation, however many groups share them. */
    private static final class LagLookups {
        final Map<String, Optional<TopicMetadata>> topicsByName = new HashMap<>();
        final Map<TopicPartition, Long> highWatermarks = new HashMap<>();
    }

    private List<PartitionLag> lag(List<CommittedOffset> offsets, LagLookups lookups) {
        List<PartitionLag> out = new ArrayList<>();
        for (CommittedOffset o : offsets) {
            Optional<TopicMetadata> topic = lookups.topicsByName.computeIfAbsent(o.topic(), topics::find);
            if (topic.isEmpty() || o.partition() >= topic.get().partitions()) {
                continue;
            }
            TopicPartition tp = new TopicPartition(o.topic(), o.partition());
            long hw = lookups.highWatermarks.computeIfAbsent(tp, reads::highWatermark);
            long lag = Math.max(0, hw - o.offset());
            out.add(new PartitionLag(o.topic(), o.partition(), o.offset(), hw, lag, lag == 0 ? 0 : lagMs(tp, o.offset())));
        }
        return out;
    }

    /**
     * Now minus the timestamp of the first unconsumed record (the first retained one if retention passed it). The
     * timestamp is remembered for {@link #FIRST_TIMESTAMP_REUSE} per partition and committed offset: reading it
     * reads that record's whole batch, and a group that stays behind would otherwise have it read again at every
     * metrics refresh, for each of its partitions.
     */
    private long lagMs(TopicPartition tp, long committed) {
        FirstUnconsumed key = new FirstUnconsumed(tp, committed);
        long now = clock.millis();
        Remembered known = firstTimestamps.get(key);
        if (known != null && now - known.readAtMs() >= 0 && now - known.readAtMs() < FIRST_TIMESTAMP_REUSE.toMillis()) {
            return known.timestamp() < 0 ? 0 : Math.max(0, now - known.timestamp());
        }
        long timestamp = firstUnconsumedTimestamp(tp, committed);
        if (firstTimestamps.size() >= MAX_FIRST_TIMESTAMPS) {
            firstTimestamps.clear();
        }
        firstTimestamps.put(key, new Remembered(timestamp, now));
        return timestamp < 0 ? 0 : Math.max(0, now - timestamp);
    }

    /** The timestamp of the first record at or after {@code committed} (or the log start), or -1 if there is none. */
    private long firstUnconsumedTimestamp(TopicPartition tp, long committed) {
        FetchResult r;
        try {
            r = reads.fetch(tp, committed, 1, 1);
        } catch (TierlogException e) {
            if (e.type() != ErrorType.OFFSET_OUT_OF_RANGE) {
                throw e;
            }
            // Retention passed the committed offset: the first unconsumed record is the first retained one.
            r = reads.fetch(tp, ((Number) e.extra().get("logStartOffset")).longValue(), 1, 1);
        }
        return r.records().isEmpty() ? -1 : r.records().get(0).timestamp();
    }

    /** @param lagMs now minus the timestamp of the first unconsumed record; 0 when caught up */
    public record PartitionLag(String topic, int partition, long committedOffset, long highWatermark, long lag,
                               long lagMs) {
    }

    /** Group → total lag, for every group. */
    public Map<String, Long> totalLags() {
        Map<String, Long> out = new TreeMap<>();
        lags().forEach((g, lags) -> out.put(g, lags.stream().mapToLong(PartitionLag::lag).sum()));
        return out;
    }
}
