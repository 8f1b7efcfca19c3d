package io.tierlog.groups;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.tierlog.log.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The durable state of one group, as stored in its state file (JSON, public fields bound by Jackson). Mutable
 * and not thread-safe: an instance lives only inside one locked read-modify-write of {@link GroupStateStore}.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
final class GroupState {
    /** Grows whenever the target assignment is recomputed (membership, subscriptions or partition counts). */
    public long groupEpoch;
    /** Partition counts of the subscribed topics when the target was last computed. */
    public TreeMap<String, Integer> partitionCounts = new TreeMap<>();
    public TreeMap<String, Member> members = new TreeMap<>();
    /** Membership by Kafka's classic protocol with the members' own assignor; null if the group never had it. */
    public ClassicGroup classic;
    /** The assignor ({@link GroupAssignor#wireName()}) that computed the target; null: none has yet (uniform). */
    public String assignor;
    /** The group's own configs ({@link GroupConfigs}), only those set. */
    public TreeMap<String, String> configs = new TreeMap<>();
    /** A streams group's topology (its members are assigned tasks, not partitions); null for a consumer group. */
    public StreamsTopology streamsTopology;
    /** Tasks per subtopology when last configured: the "partition counts" a streams group's assignor divides. */
    public TreeMap<String, Integer> streamsTasks = new TreeMap<>();
    /** The standby replicas per task the standby targets were computed for ({@link GroupConfigs#standbyReplicas}). */
    public int streamsStandbyReplicas;
    /** The warm-up tasks the group may run at once when its warm-up targets were computed ({@link WarmupTasks}). */
    public int streamsWarmupReplicas;
    /**
     * Until when (wall-clock ms) a streams group that was empty waits for more members before its first tasks go out;
     * 0 when it does not wait.
     */
    public long streamsAssignFromMs;
    /** A member asked the whole application to shut down; until the group is empty every member is told so. */
    public boolean streamsShutdown;
    /** Grows whenever which member serves which tasks at which endpoint changes (Kafka's endpoint epoch). */
    public int streamsEndpointEpoch;
    /** A digest of that map when the epoch was last set. */
    public int streamsEndpointDigest;
    /** Set by a change that removes the group's state; never stored. */
    @JsonIgnore
    boolean deleted;

    /** Whether the group is classic now (its members assign among themselves). */
    boolean classicActive() {
        return classic != null && classic.active();
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    static final class Member {
        public String memberId;
        public String clientId;
        /** A static member's instance id, unique in the group; null for a dynamic member. */
        public String instanceId;
        /** A static member that left for a while (epoch -2): it holds its partitions until its session ends. */
        public boolean departed;
        /** A classic consumer whose assignors the service does not run ({@link Heartbeat#assignsItself}). */
        public boolean assignsItself;
        /** The assignor the member asked for ({@link Heartbeat#assignor}); null: none. */
        public String assignor;
        public int memberEpoch;
        /** Wall-clock epoch ms of the receiving instance when the last heartbeat arrived (for people and other instances). */
        public long lastHeartbeatMs;
        /** The coordinator instance that received the last heartbeat ({@link GroupCoordinator}'s instance id). */
        public String heardBy;
        /** That instance's monotonic ms when the last heartbeat arrived: meaningful to {@link #heardBy} only. */
        public long heardAtMonotonicMs;
        public long sessionTimeoutMs;
        /** The heartbeat interval the group's configs gave this member; 0: derived from its session timeout. */
        public long heartbeatIntervalMs;
        /** The subscription the assignor serves: the named topics plus those {@link #topicRegex} matched last. */
        public TreeSet<String> topics = new TreeSet<>();
        /** A subscription by regular expression (RE2J, Kafka's SubscriptionPattern); null if none. */
        public String topicRegex;
        /** The topics subscribed to by name when {@link #topicRegex} is set; null: {@link #topics} are all named. */
        public TreeSet<String> namedTopics;
        /** Where the assignor wants this member's partitions to be. */
        public TreeMap<String, TreeSet<Integer>> target = new TreeMap<>();
        /** Granted and not taken back: what the member is told it owns. */
        public TreeMap<String, TreeSet<Integer>> assigned = new TreeMap<>();
        /** A streams member's process (several members of one application process share it); else null. */
        public String processId;
        /** A streams member's rack (availability zone), which its standbys avoid ({@link StandbyTasks}); else null. */
        public String rack;
        /** A streams member's client tags (Kafka Streams' {@code client.tag.<key>}); empty if it has none. */
        public TreeMap<String, String> clientTags = new TreeMap<>();
        /** A streams member's endpoint for interactive queries; null if it has none. */
        public StreamsTopology.Endpoint userEndpoint;
        /** The topology epoch a streams member joined with. */
        public int topologyEpoch;
        /** Where the standby tasks of a streams member should be ({@link StandbyTasks}). */
        public TreeMap<String, TreeSet<Integer>> standbyTarget = new TreeMap<>();
        /** The standby tasks a streams member is told to keep: its target minus what it still runs as active. */
        public TreeMap<String, TreeSet<Integer>> standby = new TreeMap<>();
        /**
         * Where a streams member restores state for tasks moving to it that stay with their owner until it caught up
         * ({@link WarmupTasks}).
         */
        public TreeMap<String, TreeSet<Integer>> warmupTarget = new TreeMap<>();
        /** The warm-up tasks a streams member is told to run: its warm-up target minus what it runs as active. */
        public TreeMap<String, TreeSet<Integer>> warmup = new TreeMap<>();
        /**
         * How far a streams member's local copy of each task's state is (its changelog offsets summed, as last
         * reported; {@link WarmupTasks#LATEST} for a task it runs as active).
         */
        public TreeMap<String, TreeMap<Integer, Long>> taskOffsets = new TreeMap<>();
        /**
         * The end offsets of each task's changelogs (summed) a streams member last reported: the largest any member
         * reported is what copies of the task's state lag behind.
         */
        public TreeMap<String, TreeMap<Integer, Long>> taskEndOffsets = new TreeMap<>();
        /** Whether the streams member reports its tasks' offsets at all (version 0 clients do not). */
        public boolean reportsTaskOffsets;
        /** Taken back but still listed by the member's last heartbeat: still its own, given to no one else. */
        public TreeMap<String, TreeSet<Integer>> revoking = new TreeMap<>();

        /** Every partition this member may be consuming: assigned plus revoking. */
        Set<TopicPartition> holds() {
            Set<TopicPartition> s = toSet(assigned);
            s.addAll(toSet(revoking));
            return s;
        }
    }

    static Set<TopicPartition> toSet(Map<String, TreeSet<Integer>> m) {
        Set<TopicPartition> s = new TreeSet<>(StickyBalancedAssignor.ORDER);
        m.forEach((t, ps) -> ps.forEach(p -> s.add(new TopicPartition(t, p))));
        return s;
    }

    static TreeMap<String, TreeSet<Integer>> toMap(Iterable<TopicPartition> tps) {
        TreeMap<String, TreeSet<Integer>> m = new TreeMap<>();
        for (TopicPartition tp : tps) {
            m.computeIfAbsent(tp.topic(), t -> new TreeSet<>()).add(tp.partition());
        }
        return m;
    }

    /** Reported task offsets by task, from their stored form. */
    static Map<TopicPartition, Long> toOffsets(Map<String, TreeMap<Integer, Long>> m) {
        Map<TopicPartition, Long> out = new HashMap<>();
        m.forEach((sub, ps) -> ps.forEach((p, offset) -> out.put(new TopicPartition(sub, p), offset)));
        return out;
    }

    /**
     * Task offsets in their stored form, keeping only tasks that exist ({@code taskCounts} per subtopology) and
     * offsets that are known (Kafka Streams reports an end it does not know as {@link Long#MAX_VALUE}).
     */
    static TreeMap<String, TreeMap<Integer, Long>> toNested(Map<TopicPartition, Long> offsets,
                                                            Map<String, Integer> taskCounts) {
        TreeMap<String, TreeMap<Integer, Long>> out = new TreeMap<>();
        offsets.forEach((task, offset) -> {
            Integer count = taskCounts.get(task.topic());
            if (count != null && task.partition() >= 0 && task.partition() < count && offset != null
                    && offset != Long.MAX_VALUE) {
                out.computeIfAbsent(task.topic(), x -> new TreeMap<>()).put(task.partition(), offset);
            }
        });
        return out;
    }

    static List<TopicPartitions> toList(Map<String, TreeSet<Integer>> m) {
        List<TopicPartitions> out = new ArrayList<>();
        m.forEach((t, ps) -> {
            if (!ps.isEmpty()) {
                out.add(new TopicPartitions(t, List.copyOf(ps)));
            }
        });
        return out;
    }
}
