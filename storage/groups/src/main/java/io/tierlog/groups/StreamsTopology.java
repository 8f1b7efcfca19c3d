package io.tierlog.groups;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.tierlog.log.ErrorType;
import io.tierlog.log.Names;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.topic.TopicMetadata;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A streams group's topology (Kafka Streams' rebalance protocol, KIP-1071), as its first member sent it: the
 * subtopologies, what each reads, and the internal topics (repartition and changelog) the group needs. A task is
 * (subtopology, partition); a subtopology has as many tasks as its largest source topic has partitions, and task
 * {@code p} reads partition {@code p} of each of its source topics. Stored in the group's state file.
 *
 * @param epoch the client's topology epoch: a member with another one is told its topology is stale
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record StreamsTopology(int epoch, List<Subtopology> subtopologies) {
    /** Most subtopologies, topics per subtopology and configs per topic: a state file is read on every call. */
    public static final int MAX_SUBTOPOLOGIES = 1000;
    private static final int MAX_PARTITIONS = TopicMetadata.MAX_PARTITIONS;
    public static final int MAX_TOPICS_PER_SUBTOPOLOGY = 1000;
    public static final int MAX_CONFIGS_PER_TOPIC = 100;
    /** Longest config value, process id and endpoint host kept. */
    public static final int MAX_STRING_CHARS = 1024;

    public StreamsTopology {
        subtopologies = List.copyOf(subtopologies);
    }

    /**
     * @param sourceTopics            the user topics it reads
     * @param repartitionSourceTopics the internal topics it reads, written by other subtopologies
     * @param changelogTopics         its state stores' changelogs: as many partitions as it has tasks
     * @param repartitionSinkTopics   the internal topics it writes (read by other subtopologies)
     * @param copartitionGroups       sets of its source topics (user and internal) that must have equal partitions
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Subtopology(String id, List<String> sourceTopics, List<InternalTopic> repartitionSourceTopics,
                              List<InternalTopic> changelogTopics, List<String> repartitionSinkTopics,
                              List<List<String>> copartitionGroups) {
        public Subtopology {
            sourceTopics = List.copyOf(sourceTopics);
            repartitionSourceTopics = List.copyOf(repartitionSourceTopics);
            changelogTopics = List.copyOf(changelogTopics);
            repartitionSinkTopics = List.copyOf(repartitionSinkTopics);
            copartitionGroups = copartitionGroups.stream().map(List::copyOf).toList();
        }

        /** Every topic it reads: user source topics, then repartition topics. */
        public List<String> allSourceTopics() {
            List<String> all = new ArrayList<>(sourceTopics);
            repartitionSourceTopics.forEach(t -> {
                if (!all.contains(t.name())) {
                    all.add(t.name());
                }
            });
            return all;
        }
    }

    /**
     * An internal topic the service creates for the group.
     *
     * @param partitions fixed by the application, or 0: derived (a repartition topic from the subtopologies that
     *                   write it, a changelog from its subtopology's task count)
     * @param configs    topic configs to create it with
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record InternalTopic(String name, int partitions, Map<String, String> configs) {
        public InternalTopic {
            configs = configs == null ? Map.of() : Map.copyOf(configs);
        }
    }

    /** Where a member answers interactive queries about the state its tasks keep. */
    public record Endpoint(String host, int port) {
    }

    /** The topic partitions a member's active and standby tasks read, and its endpoint: where to query their state. */
    public record MemberEndpoint(String memberId, Endpoint endpoint, List<TopicPartitions> partitions,
                                 List<TopicPartitions> standbyPartitions) {
        public MemberEndpoint {
            partitions = List.copyOf(partitions);
            standbyPartitions = List.copyOf(standbyPartitions);
        }
    }

    /** Something that keeps the group from running all its tasks, with Kafka's status code. */
    public record Status(int code, String detail) {
        public static final int STALE_TOPOLOGY = 0;
        public static final int MISSING_SOURCE_TOPICS = 1;
        public static final int INCORRECTLY_PARTITIONED_TOPICS = 2;
        public static final int MISSING_INTERNAL_TOPICS = 3;
        public static final int SHUTDOWN_APPLICATION = 4;
        /** A member lacks a client tag the group's standby placement uses (Kafka 4.4, heartbeat version 1 on). */
        public static final int MISSING_CLIENT_TAGS = 6;
    }

    /**
     * The topology against the topics as they are now.
     *
     * @param taskCounts     tasks per subtopology; all 0 while the topology cannot run (see {@code statuses})
     * @param internalTopics the internal topics with their partition counts, for creation; empty while the topology
     *                       cannot run
     */
    public record Configured(Map<String, Integer> taskCounts, Map<String, InternalTopic> internalTopics,
                             List<Status> statuses) {
        public boolean ready() {
            return statuses.isEmpty();
        }
    }

    /** Rejects a topology that could not be configured whatever the topics: names, ids and sizes. */
    public StreamsTopology validated() {
        if (subtopologies.isEmpty() || subtopologies.size() > MAX_SUBTOPOLOGIES) {
            throw invalid("a topology has 1 to " + MAX_SUBTOPOLOGIES + " subtopologies: " + subtopologies.size());
        }
        Set<String> ids = new HashSet<>();
        Set<String> internal = new HashSet<>();
        for (Subtopology s : subtopologies) {
            if (s.id() == null || !Names.isValid(s.id()) || !ids.add(s.id())) {
                throw invalid("subtopology ids must be distinct and valid topic-like names: " + s.id());
            }
            if (s.sourceTopics().size() + s.repartitionSourceTopics().size() + s.changelogTopics().size()
                    + s.repartitionSinkTopics().size() > MAX_TOPICS_PER_SUBTOPOLOGY) {
                throw invalid("subtopology " + s.id() + " names more than " + MAX_TOPICS_PER_SUBTOPOLOGY + " topics");
            }
            if (s.allSourceTopics().isEmpty()) {
                throw invalid("subtopology " + s.id() + " reads no topic (patterns are not supported)");
            }
            s.sourceTopics().forEach(StreamsTopology::requireTopicName);
            s.repartitionSinkTopics().forEach(StreamsTopology::requireTopicName);
            for (InternalTopic t : concat(s.repartitionSourceTopics(), s.changelogTopics())) {
                requireTopicName(t.name());
                if (t.partitions() < 0 || t.partitions() > MAX_PARTITIONS) {
                    throw invalid("internal topic " + t.name() + " must have 0 (derived) to " + MAX_PARTITIONS
                            + " partitions: " + t.partitions());
                }
                if (t.configs().size() > MAX_CONFIGS_PER_TOPIC || t.configs().entrySet().stream().anyMatch(
                        c -> c.getKey().length() > MAX_STRING_CHARS || c.getValue() == null
                                || c.getValue().length() > MAX_STRING_CHARS)) {
                    throw invalid("internal topic " + t.name() + " has more than " + MAX_CONFIGS_PER_TOPIC
                            + " configs or one longer than " + MAX_STRING_CHARS + " characters");
                }
                internal.add(t.name());
            }
            for (List<String> group : s.copartitionGroups()) {
                for (String t : group) {
                    if (!s.allSourceTopics().contains(t)) {
                        throw invalid("copartition group of subtopology " + s.id() + " names " + t
                                + ", which it does not read");
                    }
                }
            }
        }
        for (Subtopology s : subtopologies) {
            for (String sink : s.repartitionSinkTopics()) {
                if (!internal.contains(sink)) {
                    throw invalid("subtopology " + s.id() + " writes " + sink + ", which no subtopology reads");
                }
            }
        }
        return this;
    }

    /**
     * Task counts and internal topics as Kafka's coordinator configures them: every user source topic must exist;
     * a repartition topic without a fixed count gets the largest count of the topics read by the subtopologies
     * writing it (repeated until all are known); topics of a copartition group must agree, and a derived repartition
     * topic in one takes the group's count; a changelog has its subtopology's task count.
     */
    public Configured configure(PartitionCounts counts) {
        Map<String, Integer> zero = new TreeMap<>();
        subtopologies.forEach(s -> zero.put(s.id(), 0));
        Set<String> missing = new TreeSet<>();
        for (Subtopology s : subtopologies) {
            for (String t : s.sourceTopics()) {
                if (!isRepartition(t) && counts.partitions(t) <= 0) {
                    missing.add(t);
                }
            }
        }
        if (!missing.isEmpty()) {
            return new Configured(zero, Map.of(), List.of(new Status(Status.MISSING_SOURCE_TOPICS,
                    "source topics " + String.join(", ", missing) + " are missing")));
        }
        Map<String, Integer> repartition = new LinkedHashMap<>();
        subtopologies.forEach(s -> s.repartitionSourceTopics().forEach(t -> repartition.put(t.name(), t.partitions())));
        try {
            deriveRepartitionCounts(repartition, counts);
            enforceCopartitioning(repartition, counts);
        } catch (IllegalStateException e) {
            return new Configured(zero, Map.of(), List.of(new Status(Status.INCORRECTLY_PARTITIONED_TOPICS,
                    e.getMessage())));
        }
        Map<String, Integer> tasks = new TreeMap<>();
        Map<String, InternalTopic> internal = new TreeMap<>();
        for (Subtopology s : subtopologies) {
            int n = 0;
            for (String t : s.allSourceTopics()) {
                n = Math.max(n, repartition.containsKey(t) ? repartition.get(t) : counts.partitions(t));
            }
            tasks.put(s.id(), n);
            for (InternalTopic c : s.changelogTopics()) {
                internal.put(c.name(), new InternalTopic(c.name(), n, c.configs()));
            }
            for (InternalTopic r : s.repartitionSourceTopics()) {
                internal.put(r.name(), new InternalTopic(r.name(), repartition.get(r.name()), r.configs()));
            }
        }
        return new Configured(tasks, internal, List.of());
    }

    private void deriveRepartitionCounts(Map<String, Integer> repartition, PartitionCounts counts) {
        boolean unknown = repartition.containsValue(0);
        while (unknown) {
            boolean progress = false;
            unknown = false;
            for (Map.Entry<String, Integer> e : repartition.entrySet()) {
                if (e.getValue() > 0) {
                    continue;
                }
                int derived = 0;
                for (Subtopology writer : subtopologies) {
                    if (writer.repartitionSinkTopics().contains(e.getKey())) {
                        for (String in : writer.allSourceTopics()) {
                            derived = Math.max(derived, repartition.containsKey(in) ? repartition.get(in)
                                    : counts.partitions(in));
                        }
                    }
                }
                if (derived > 0) {
                    e.setValue(derived);
                    progress = true;
                } else {
                    unknown = true;
                }
            }
            if (unknown && !progress) {
                throw new IllegalStateException("the partition counts of repartition topics "
                        + repartition.entrySet().stream().filter(x -> x.getValue() == 0).map(Map.Entry::getKey)
                        .toList() + " cannot be derived from the topics written into them");
            }
        }
    }

    private void enforceCopartitioning(Map<String, Integer> repartition, PartitionCounts counts) {
        for (Subtopology s : subtopologies) {
            Map<String, Integer> fixedInternal = new TreeMap<>();
            s.repartitionSourceTopics().forEach(t -> fixedInternal.put(t.name(), t.partitions()));
            for (List<String> group : s.copartitionGroups()) {
                Set<Integer> userCounts = new TreeSet<>();
                int most = 0;
                for (String t : group) {
                    if (!repartition.containsKey(t)) {
                        userCounts.add(counts.partitions(t));
                    } else if (fixedInternal.getOrDefault(t, 0) > 0) {
                        userCounts.add(fixedInternal.get(t));
                    } else {
                        most = Math.max(most, repartition.get(t));
                    }
                }
                if (userCounts.size() > 1) {
                    throw new IllegalStateException("topics " + group + " of subtopology " + s.id()
                            + " must be co-partitioned but have " + userCounts + " partitions");
                }
                int count = userCounts.isEmpty() ? most : userCounts.iterator().next();
                for (String t : group) {
                    if (repartition.containsKey(t) && fixedInternal.getOrDefault(t, 0) == 0) {
                        repartition.put(t, count);
                    }
                }
            }
        }
    }

    private boolean isRepartition(String topic) {
        return subtopologies.stream().anyMatch(s -> s.repartitionSourceTopics().stream()
                .anyMatch(t -> t.name().equals(topic)));
    }

    /** The subtopology ids, for the tasks each member is assigned among. */
    public Set<String> subtopologyIds() {
        Set<String> ids = new TreeSet<>();
        subtopologies.forEach(s -> ids.add(s.id()));
        return ids;
    }

    /** The subtopologies that keep state (have changelogs): only their tasks get standbys. */
    public Set<String> statefulSubtopologies() {
        Set<String> ids = new TreeSet<>();
        subtopologies.stream().filter(s -> !s.changelogTopics().isEmpty()).forEach(s -> ids.add(s.id()));
        return ids;
    }

    /** The topic partitions the given tasks read ({@code topic} of each is a subtopology id). */
    public Set<TopicPartition> partitionsRead(Collection<TopicPartition> tasks) {
        Map<String, Subtopology> byId = new TreeMap<>();
        subtopologies.forEach(s -> byId.put(s.id(), s));
        Set<TopicPartition> out = new TreeSet<>(StickyBalancedAssignor.ORDER);
        for (TopicPartition task : tasks) {
            Subtopology s = byId.get(task.topic());
            if (s != null) {
                s.allSourceTopics().forEach(t -> out.add(new TopicPartition(t, task.partition())));
            }
        }
        return out;
    }

    /** Every topic the topology reads or writes: user sources, repartition and changelog topics. */
    public Set<String> topics() {
        Set<String> all = new TreeSet<>();
        for (Subtopology s : subtopologies) {
            all.addAll(s.allSourceTopics());
            s.changelogTopics().forEach(t -> all.add(t.name()));
            all.addAll(s.repartitionSinkTopics());
        }
        return all;
    }

    private static List<InternalTopic> concat(List<InternalTopic> a, List<InternalTopic> b) {
        List<InternalTopic> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static void requireTopicName(String name) {
        if (name == null || !Names.isValid(name)) {
            throw invalid("not a valid topic name: " + name);
        }
    }

    private static TierlogException invalid(String detail) {
        return new TierlogException(ErrorType.BAD_REQUEST, "invalid topology: " + detail, Map.of("field", "topology"));
    }
}
