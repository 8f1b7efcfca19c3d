package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

import static io.restassured.RestAssured.given;
import static io.tierlog.service.kafka.StreamsApps.await;
import static io.tierlog.service.kafka.StreamsApps.awaitRunning;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka Streams 4.4.0 on its own rebalance protocol ({@code group.protocol=streams}, KIP-1071) against the listener:
 * the service sets the group's topology from the first member, creates the repartition and changelog topics with
 * the partition counts Kafka's coordinator gives them, divides the tasks, tells every member where each task runs
 * (interactive queries), and hands a closed instance's tasks to the other, which restores their counts and counts on.
 * Seen failing without the feature: StreamsGroupHeartbeat not offered, the application ends in ERROR
 * (UnsupportedVersionException).
 */
@QuarkusTest
class KafkaStreamsGroupsTest {
    private static final String RUN = Long.toString(System.currentTimeMillis(), 36);

    @Inject
    KafkaListener listener;

    @TempDir
    Path stateDir;

    private KafkaStreams wordCount(String app, String input, String output, String instance, int port) {
        return wordCount(app, input, output, instance, port, StreamsConfig.AT_LEAST_ONCE);
    }

    private KafkaStreams wordCount(String app, String input, String output, String instance, int port,
                                   String guarantee) {
        return new KafkaStreams(StreamsApps.wordCount(input, output), config(app, instance, port, guarantee));
    }

    private Properties config(String app, String instance, int port, String guarantee) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(instance).toString());
        p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:" + port);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(ConsumerConfig.CLIENT_RACK_CONFIG, "zone-" + instance);
        p.put(StreamsConfig.clientTagPrefix("cluster"), "cluster-" + instance);
        return p;
    }

    @Test
    void twoInstancesDivideTheTasksTheServiceAssignsAndOneTakesOverWhenTheOtherCloses() throws Exception {
        String app = "streams-wordcount-" + RUN;
        String input = "streams-lines-" + RUN;
        String output = "streams-word-counts-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 4);
            // A standby of every task, as Kafka's group config asks (the application's num.standby.replicas is not
            // read on this protocol).
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, app);
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("streams.num.standby.replicas", "1"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("streams.rack.aware.assignment.tags", "cluster"),
                            AlterConfigOp.OpType.SET)))).all().get();
            assertThat(admin.describeConfigs(List.of(group)).all().get().get(group)
                    .get("streams.num.standby.replicas").value()).isEqualTo("1");
        }
        try (KafkaStreams one = wordCount(app, input, output, "one", 7001);
             KafkaStreams two = wordCount(app, input, output, "two", 7002)) {
            one.start();
            two.start();
            awaitRunning(one, two);
            produce(input, List.of("log tier log", "tier cold hot", "log log"));
            awaitCounts(output, Map.of("log", 4L, "tier", 2L, "cold", 1L, "hot", 1L));
            await("both instances run tasks, 8 in all (2 subtopologies x 4 partitions), and keep a standby of the "
                    + "other's counting tasks (subtopology 1, the one with state)",
                    () -> activeTasks(one) > 0 && activeTasks(two) > 0 && activeTasks(one) + activeTasks(two) == 8
                            && standbyTasks(one).equals(countingTasks(two))
                            && standbyTasks(two).equals(countingTasks(one)));

            try (Admin admin = KafkaClients.admin(listener.port())) {
                Map<String, TopicDescription> internal = admin.describeTopics(List.of(app + "-counts-repartition",
                        app + "-counts-changelog")).allTopicNames().get();
                assertThat(internal.values()).as("internal topics the service created, 4 partitions as the input")
                        .allSatisfy(t -> assertThat(t.partitions()).hasSize(4));

                await("the group stable: 2 tasks of each subtopology per member", () -> {
                    StreamsGroupDescription g = admin.describeStreamsGroups(List.of(app)).all().get().get(app);
                    return g.members().size() == 2 && g.members().stream().allMatch(m ->
                            m.assignment().activeTasks().size() == 2 && m.assignment().activeTasks().stream()
                                    .allMatch(t -> t.partitions().size() == 2));
                });
                StreamsGroupDescription group = admin.describeStreamsGroups(List.of(app)).all().get().get(app);
                assertThat(group.members()).hasSize(2);
                assertThat(group.subtopologies()).hasSize(2);
                Set<String> tasks = new TreeSet<>();
                for (StreamsGroupMemberDescription m : group.members()) {
                    assertThat(m.assignment().activeTasks()).as("2 tasks of each subtopology per member")
                            .allSatisfy(t -> assertThat(t.partitions()).hasSize(2)).hasSize(2);
                    assertThat(m.rackId()).as("the rack its consumer names").hasValueSatisfying(
                            rack -> assertThat(rack).startsWith("zone-"));
                    assertThat(m.clientTags()).as("its client.tag.cluster").containsKey("cluster");
                    m.assignment().activeTasks().forEach(t -> t.partitions().forEach(
                            p -> assertThat(tasks.add(t.subtopologyId() + "_" + p)).as("each task once").isTrue()));
                }
                assertThat(tasks).hasSize(8);

                List<String> streamsGroups = new ArrayList<>();
                for (GroupListing g : admin.listGroups(ListGroupsOptions.forStreamsGroups()).all().get()) {
                    assertThat(g.type()).contains(GroupType.STREAMS);
                    streamsGroups.add(g.groupId());
                }
                assertThat(streamsGroups).contains(app);

                // A streams group is not a consumer group: its input offsets cannot be deleted under it, and a
                // consumer cannot join it.
                assertThatThrownBy(() -> admin.deleteConsumerGroupOffsets(app,
                        Set.of(new org.apache.kafka.common.TopicPartition(input, 0))).all().get())
                        .hasCauseInstanceOf(GroupSubscribedToTopicException.class);
                Properties c = new Properties();
                c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
                c.put(ConsumerConfig.GROUP_ID_CONFIG, app);
                c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
                try (KafkaConsumer<String, String> intruder = new KafkaConsumer<>(c, Serdes.String().deserializer(),
                        Serdes.String().deserializer())) {
                    intruder.subscribe(List.of(input));
                    assertThatThrownBy(() -> {
                        Instant deadline = Instant.now().plusSeconds(30);
                        while (Instant.now().isBefore(deadline)) {
                            intruder.poll(Duration.ofMillis(100));
                        }
                    }).isInstanceOf(GroupIdNotFoundException.class);
                }
            }

            // Over HTTP too: a member joining is refused, and the group shows its members' tasks by subtopology.
            given().contentType("application/json").body("{\"memberId\":null,\"memberEpoch\":0,\"topics\":[\""
                    + input + "\"],\"sessionTimeoutMs\":30000}").post("/v1/groups/" + app + "/heartbeat")
                    .then().statusCode(409).body("type", org.hamcrest.Matchers.endsWith("group-protocol-mismatch"));
            assertThat(given().get("/v1/groups/" + app).then().statusCode(200).extract().jsonPath()
                    .getList("members.assignment.flatten().topic", String.class)).containsOnly("0", "1");

            // Kafka's own tool (kafka-streams-groups.sh) describes the group's members and their tasks.
            String described = String.join("\n", KafkaToolsClasspath.run(null,
                    "org.apache.kafka.tools.streams.StreamsGroupCommand", "--bootstrap-server",
                    KafkaClients.bootstrap(listener.port()), "--describe", "--members", "--group", app));
            assertThat(described).contains(app).contains("0:[").contains("1:[");

            // Interactive queries: each instance knows where every partition's state lives.
            await("both endpoints known to each instance", () -> hosts(one).size() == 2 && hosts(two).size() == 2);
            KeyQueryMetadata log = one.queryMetadataForKey("counts", "log", Serdes.String().serializer());
            assertThat(log.activeHost().port()).isIn(7001, 7002);

            two.close(Duration.ofSeconds(30));
            await("one runs every task", () -> activeTasks(one) == 8);
            produce(input, List.of("log hot", "hot"));
            awaitCounts(output, Map.of("log", 5L, "hot", 3L));
        }
    }

    /**
     * Exactly-once on the streams protocol: each task's output, changelog writes and input offsets commit in one
     * transaction, the offsets (TxnOffsetCommit) accepted from the streams member for the partitions its tasks read.
     */
    @Test
    void exactlyOnceV2CommitsTheTasksInputOffsetsInTransactions() throws Exception {
        String app = "streams-eos-" + RUN;
        String input = "streams-eos-lines-" + RUN;
        String output = "streams-eos-counts-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 2);
        }
        try (KafkaStreams eos = wordCount(app, input, output, "eos", 7003, StreamsConfig.EXACTLY_ONCE_V2)) {
            eos.start();
            awaitRunning(eos);
            produce(input, List.of("log tier log", "tier cold hot", "log log"));
            awaitCounts(output, Map.of("log", 4L, "tier", 2L, "cold", 1L, "hot", 1L), "read_committed");
            try (Admin admin = KafkaClients.admin(listener.port())) {
                await("the input offsets committed", () -> {
                    long sum = 0;
                    for (var e : admin.listConsumerGroupOffsets(app).partitionsToOffsetAndMetadata().get()
                            .entrySet()) {
                        sum += e.getKey().topic().equals(input) ? e.getValue().offset() : 0;
                    }
                    return sum == 3;
                });
            }
        }
    }

    /**
     * Warm-up tasks (Kafka 4.4's assignment refiner): an instance joining a running application with state restores
     * the counts it is to take over as warm-up tasks while the first instance keeps running them, and takes them once
     * it reports its copy caught up; counting goes on from where it was. Seen failing with the refinement off (the
     * counting tasks moved at once, no member ever listed warm-up tasks).
     */
    @Test
    void aJoiningInstanceWarmsUpTheCountsItTakesOverWhileTheirOwnerRunsThem() throws Exception {
        String app = "streams-warmup-" + RUN;
        String input = "streams-warmup-lines-" + RUN;
        String output = "streams-warmup-counts-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 2);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, app),
                    List.of(new AlterConfigOp(new ConfigEntry("streams.acceptable.recovery.lag", "0"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        try (KafkaStreams one = wordCount(app, input, output, "warm-one", 7003)) {
            one.start();
            awaitRunning(one);
            produce(input, List.of(words(2_000)));
            awaitCounts(output, Map.of("w0", 1L, "w1999", 1L));
            await("one counts in both tasks", () -> countingTasks(one).size() == 2);
            try (KafkaStreams two = wordCount(app, input, output, "warm-two", 7004);
                 Admin admin = KafkaClients.admin(listener.port())) {
                two.start();
                boolean warmedWhileOneRan = false;
                Instant deadline = Instant.now().plusSeconds(90);
                while (countingTasks(two).isEmpty()) {
                    assertThat(Instant.now()).as("two takes a counting task").isBefore(deadline);
                    StreamsGroupDescription g = admin.describeStreamsGroups(List.of(app)).all().get().get(app);
                    boolean warming = g.members().stream().anyMatch(m -> !m.assignment().warmupTasks().isEmpty());
                    boolean oneRunsBoth = g.members().stream().anyMatch(m -> m.assignment().activeTasks().stream()
                            .anyMatch(t -> t.subtopologyId().equals("1") && t.partitions().size() == 2));
                    warmedWhileOneRan |= warming && oneRunsBoth && countingTasks(one).size() == 2;
                    Thread.sleep(50);
                }
                assertThat(warmedWhileOneRan).as("a warm-up on two while one ran both counting tasks").isTrue();
                await("one counting task each", () -> countingTasks(one).size() == 1
                        && countingTasks(two).size() == 1);
                produce(input, List.of("w0 w1999"));
                awaitCounts(output, Map.of("w0", 2L, "w1999", 2L));
            }
        }
    }

    @Test
    void aRestartedApplicationRunsEachCountWhereItsStoreIsAndRestoresNothing() throws Exception {
        String app = "streams-restart-" + RUN;
        String input = "streams-restart-lines-" + RUN;
        String output = "streams-restart-counts-" + RUN;
        try (Admin admin = KafkaClients.admin(listener.port())) {
            StreamsApps.createTopics(admin, input, output, 4);
        }
        Map<String, Set<String>> before = new HashMap<>();
        try (KafkaStreams one = persistentWordCount(app, input, output, "restart-one", 7005);
             KafkaStreams two = persistentWordCount(app, input, output, "restart-two", 7006)) {
            one.start();
            two.start();
            awaitRunning(one, two);
            produce(input, List.of(words(2_000)));
            awaitCounts(output, Map.of("w0", 1L, "w1999", 1L));
            await("two counting tasks each", () -> countingTasks(one).size() == 2 && countingTasks(two).size() == 2);
            before.put("restart-one", countingTasks(one));
            before.put("restart-two", countingTasks(two));
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            await("both left the group", () -> admin.describeStreamsGroups(List.of(app)).all().get().get(app)
                    .members().isEmpty());
        }
        // Both processes start again on their state directories, under new member ids.
        RestoredRecords restored = new RestoredRecords();
        try (KafkaStreams one = persistentWordCount(app, input, output, "restart-one", 7005);
             KafkaStreams two = persistentWordCount(app, input, output, "restart-two", 7006)) {
            one.setGlobalStateRestoreListener(restored);
            two.setGlobalStateRestoreListener(restored);
            two.start();
            one.start();
            awaitRunning(one, two);
            await("two counting tasks each again", () -> countingTasks(one).size() == 2
                    && countingTasks(two).size() == 2);
            assertThat(countingTasks(one)).as("one's counts where its store is").isEqualTo(before.get("restart-one"));
            assertThat(countingTasks(two)).isEqualTo(before.get("restart-two"));
            produce(input, List.of("w0 w1999"));
            awaitCounts(output, Map.of("w0", 2L, "w1999", 2L));
            assertThat(restored.records.get()).as("changelog records restored").isZero();
        }
    }

    /** "w0 w1 ... w{n-1}": n distinct words, spread over every partition of the counts. */
    private static String words(int n) {
        StringBuilder words = new StringBuilder();
        for (int i = 0; i < n; i++) {
            words.append(i == 0 ? "" : " ").append('w').append(i);
        }
        return words.toString();
    }

    /** Counts the changelog records Kafka Streams restores into its stores. */
    private static final class RestoredRecords implements StateRestoreListener {
        final AtomicLong records = new AtomicLong();

        @Override
        public void onRestoreStart(org.apache.kafka.common.TopicPartition tp, String store, long start, long end) {
        }

        @Override
        public void onBatchRestored(org.apache.kafka.common.TopicPartition tp, String store, long end, long n) {
            records.addAndGet(n);
        }

        @Override
        public void onRestoreEnd(org.apache.kafka.common.TopicPartition tp, String store, long total) {
        }
    }

    /** A word count keeping its counts in RocksDB in the instance's state directory. */
    private KafkaStreams persistentWordCount(String app, String input, String output, String instance, int port) {
        return new KafkaStreams(StreamsApps.wordCount(input, output, Stores.persistentKeyValueStore("counts")),
                config(app, instance, port, StreamsConfig.AT_LEAST_ONCE));
    }

    /** The active tasks of subtopology 1 (the counts, with a state store) an instance runs. */
    private static Set<String> countingTasks(KafkaStreams app) {
        Set<String> ids = new TreeSet<>();
        app.metadataForLocalThreads().forEach(t -> t.activeTasks().forEach(task -> {
            if (task.taskId().subtopology() == 1) {
                ids.add(task.taskId().toString());
            }
        }));
        return ids;
    }

    private static Set<String> standbyTasks(KafkaStreams app) {
        Set<String> ids = new TreeSet<>();
        app.metadataForLocalThreads().forEach(t -> t.standbyTasks().forEach(task -> ids.add(task.taskId().toString())));
        return ids;
    }

    private static int activeTasks(KafkaStreams app) {
        return app.metadataForLocalThreads().stream().mapToInt(t -> t.activeTasks().size()).sum();
    }

    private static Set<Integer> hosts(KafkaStreams app) {
        Set<Integer> ports = new TreeSet<>();
        for (StreamsMetadata m : app.metadataForAllStreamsClients()) {
            if (!m.topicPartitions().isEmpty()) {
                ports.add(m.hostInfo().port());
            }
        }
        return ports;
    }

    private void produce(String topic, List<String> lines) throws Exception {
        StreamsApps.produce(listener.port(), topic, lines);
    }

    private void awaitCounts(String output, Map<String, Long> expected) {
        awaitCounts(output, expected, "read_uncommitted");
    }

    private void awaitCounts(String output, Map<String, Long> expected, String isolation) {
        StreamsApps.awaitCounts(KafkaClients.bootstrap(listener.port()), output, expected, isolation);
    }
}
