package io.tierlog.service.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own tools (kafka-tools 4.4.0) against the listener, each as a child process: ConsoleProducer and
 * ConsoleConsumer, kafka-consumer-groups' describe and reset-offsets, VerifiableProducer and VerifiableConsumer (every
 * acknowledged record consumed), TransactionalMessageCopier (exactly once through random aborts) and
 * kafka-transactions, each on {@link KafkaToolsClasspath}.
 */
@QuarkusTest
class KafkaToolsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    KafkaListener listener;

    @BeforeAll
    static void toolsClasspath() throws Exception {
        KafkaToolsClasspath.get(); // resolved (or the class skipped) before any test starts a tool
    }

    private static List<String> tool(String stdin, String mainClass, String... args) throws Exception {
        return KafkaToolsClasspath.run(stdin, mainClass, args);
    }

    private String bootstrap() {
        return KafkaClients.bootstrap(listener.port());
    }

    private void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    private static long committed(String group, String topic, int partition) {
        List<Map<String, Object>> offsets = given().get("/v1/groups/" + group + "/offsets").then().statusCode(200)
                .extract().jsonPath().getList("offsets");
        return offsets.stream().filter(o -> o.get("topic").equals(topic) && ((Number) o.get("partition")).intValue() == partition)
                .mapToLong(o -> ((Number) o.get("offset")).longValue()).findFirst().orElse(-1);
    }

    @Test
    void consoleToolsAndConsumerGroupCommand() throws Exception {
        String topic = KafkaListenerTest.unique("tools");
        String group = KafkaListenerTest.unique("tools-g");
        createTopic(topic, 2);
        tool("alpha\nbeta\ngamma\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap(),
                "--topic", topic);
        List<String> read = tool(null, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server",
                bootstrap(), "--topic", topic, "--group", group, "--from-beginning", "--max-messages", "3");
        assertThat(read).containsExactlyInAnyOrder("alpha", "beta", "gamma");
        // The console consumer commits what it read as it closes: both partitions at their ends.
        long ends = committed(group, topic, 0) + committed(group, topic, 1);
        assertThat(ends).isEqualTo(3);

        List<String> described = tool(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", bootstrap(), "--describe", "--group", group);
        assertThat(String.join("\n", described)).contains(group).contains(topic).contains("CURRENT-OFFSET");

        tool(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap(),
                "--reset-offsets", "--to-earliest", "--group", group, "--topic", topic, "--execute");
        assertThat(committed(group, topic, 0)).isZero();
        assertThat(committed(group, topic, 1)).isZero();
    }

    @Test
    void consumerGroupCommandDescribesAGroupWhoseMembersAssign() throws Exception {
        String topic = KafkaListenerTest.unique("tools-own");
        String group = KafkaListenerTest.unique("tools-own-g");
        createTopic(topic, 2);
        Map<String, String> c = LabelledAssignor.consumerConfig(group, "only");
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "labelled-tool-client");
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(), c)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (consumer.assignment().size() < 2) {
                assertThat(System.nanoTime()).as("assigned by its own assignor").isLessThan(deadline);
                consumer.poll(java.time.Duration.ofMillis(100));
            }
            consumer.commitSync();
            String described = String.join("\n", tool(null,
                    "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap(),
                    "--describe", "--group", group));
            assertThat(described).contains(group).contains(topic).contains("labelled-tool-client");
            String state = String.join("\n", tool(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                    "--bootstrap-server", bootstrap(), "--describe", "--group", group, "--state"));
            assertThat(state).contains("labelled").contains("Stable");
            assertThat(tool(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                    bootstrap(), "--list")).contains(group);
        }
    }

    @Test
    void shareGroupCommandDescribesListsAndDeletesAShareGroup() throws Exception {
        String topic = KafkaListenerTest.unique("tools-share");
        String group = KafkaListenerTest.unique("tools-share-g");
        createTopic(topic, 1);
        KafkaClients.produceToEachPartition(listener.port(), topic, 1, 0, 10);
        tool(null, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", bootstrap(), "--alter",
                "--entity-type", "groups", "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest");
        java.util.Properties p = new java.util.Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "4");
        try (org.apache.kafka.clients.consumer.KafkaShareConsumer<String, String> consumer =
                     new org.apache.kafka.clients.consumer.KafkaShareConsumer<>(p,
                             new org.apache.kafka.common.serialization.StringDeserializer(),
                             new org.apache.kafka.common.serialization.StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int got = 0;
            while (got == 0) {
                assertThat(System.nanoTime()).as("records within 60 s").isLessThan(deadline);
                got = consumer.poll(java.time.Duration.ofMillis(200)).count();
            }
            assertThat(got).isEqualTo(4);
            consumer.commitSync(); // implicit mode: accepts the 4, so the group starts at offset 4
            String members = String.join("\n", tool(null, "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
                    "--bootstrap-server", bootstrap(), "--describe", "--group", group, "--members"));
            assertThat(members).contains(group).contains(topic);
        }
        List<String> offsets = tool(null, "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
                "--bootstrap-server", bootstrap(), "--describe", "--group", group);
        assertThat(offsets).as("GROUP TOPIC PARTITION START-OFFSET LAG").anySatisfy(line -> assertThat(
                line.trim().split("\\s+")).contains(group, topic, "0", "4", "6"));
        assertThat(tool(null, "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server",
                bootstrap(), "--list")).contains(group);
        tool(null, "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server", bootstrap(),
                "--delete", "--group", group);
        given().get("/v1/share-groups/" + group).then().statusCode(404);
    }

    @Test
    void shareGroupCommandResetsAndDeletesAShareGroupsOffsets() throws Exception {
        String topic = KafkaListenerTest.unique("tools-share-reset");
        String group = KafkaListenerTest.unique("tools-share-reset-g"); // no share consumer ever joined it
        createTopic(topic, 2);
        KafkaClients.produceToEachPartition(listener.port(), topic, 2, 0, 10);
        String command = "org.apache.kafka.tools.consumer.group.ShareGroupCommand";
        tool(null, command, "--bootstrap-server", bootstrap(), "--reset-offsets", "--group", group, "--topic", topic,
                "--to-earliest", "--execute");
        assertThat(startOffsets(group, topic)).containsExactly(0L, 0L);
        tool(null, command, "--bootstrap-server", bootstrap(), "--reset-offsets", "--group", group, "--topic",
                topic + ":0", "--to-offset", "7", "--execute");
        assertThat(startOffsets(group, topic)).containsExactly(7L, 0L);

        // A worker of the group gets partition 0 from offset 7 on, partition 1 from the start.
        List<String> values = given().contentType(io.restassured.http.ContentType.JSON).body("{\"maxRecords\": 100}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease").then().statusCode(200).extract()
                .jsonPath().getList("records.value", String.class).stream() // bytes that are not JSON: base64
                .map(v -> new String(java.util.Base64.getDecoder().decode(v), StandardCharsets.UTF_8)).toList();
        assertThat(values).hasSize(13).contains("0-7", "0-8", "0-9").doesNotContain("0-6");

        List<String> out = tool(null, command, "--bootstrap-server", bootstrap(), "--delete-offsets", "--group", group,
                "--topic", topic);
        assertThat(out).anySatisfy(line -> assertThat(line).contains(topic).containsIgnoringCase("succe"));
        given().get("/v1/share-groups/" + group).then().statusCode(404); // neither state nor config left
    }

    /** Each partition's start offset in the share group, by partition, as HTTP shows it. */
    private static List<Long> startOffsets(String group, String topic) {
        return given().get("/v1/share-groups/" + group).then().statusCode(200).extract().jsonPath()
                .getList("topics.find { it.topic == '" + topic + "' }.partitions.sort { it.partition }.startOffset",
                        Long.class);
    }

    @Test
    void logDirsCommandShowsEachPartitionsHotBytes() throws Exception {
        String topic = KafkaListenerTest.unique("tools-dirs");
        createTopic(topic, 2);
        tool("a\nb\nc\nd\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap(),
                "--topic", topic);
        List<Long> hotBytes = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                .getList("partitionStates.hotBytes", Long.class);
        String json = tool(null, "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bootstrap(),
                "--describe", "--topic-list", topic).stream().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
        io.restassured.path.json.JsonPath dirs = io.restassured.path.json.JsonPath.from(json);
        assertThat(dirs.getList("brokers.logDirs.logDir.flatten()", String.class)).containsOnly(KafkaLogDirs.LOG_DIR);
        for (int p = 0; p < 2; p++) {
            assertThat(dirs.getLong("brokers.logDirs.partitions.flatten().flatten().find { it.partition == '" + topic
                    + "-" + p + "' }.size")).as("partition " + p).isEqualTo(hotBytes.get(p));
        }
        assertThat(hotBytes.get(0) + hotBytes.get(1)).isPositive();
    }

    @Test
    void transactionsCommandDescribesAPartitionsProducers() throws Exception {
        String topic = KafkaListenerTest.unique("tools-producers");
        createTopic(topic, 1);
        // ConsoleProducer is idempotent by default (kafka-clients' enable.idempotence=true): three records, 0..2.
        tool("a\nb\nc\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap(),
                "--topic", topic);
        List<String> out = tool(null, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", bootstrap(),
                "describe-producers", "--topic", topic, "--partition", "0");
        assertThat(out).as("ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp ...")
                .anySatisfy(l -> assertThat(l).contains("ProducerId").contains("LastSequence"));
        List<String[]> rows = out.stream().map(l -> l.trim().split("\\s+")).filter(c -> c.length >= 6
                && c[0].matches("\\d+")).toList();
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)[1]).as("epoch").isEqualTo("0");
        assertThat(rows.get(0)[3]).as("last sequence").isEqualTo("2");
    }

    /**
     * Kafka's own exactly-once check, the tool its system tests run: TransactionalMessageCopier reads a partition and
     * copies it in transactions of 20 records, aborting some at random (and then re-reading from its committed
     * offset), committing its input offsets in each transaction. A read_committed consumer of the output must find
     * every input record exactly once. Then {@code kafka-transactions list} and {@code describe} show the
     * copier's transactional id, complete.
     */
    @Test
    void transactionalMessageCopierCopiesEveryRecordExactlyOnceThroughRandomAborts() throws Exception {
        String input = KafkaListenerTest.unique("copier-in");
        String output = KafkaListenerTest.unique("copier-out");
        String id = KafkaListenerTest.unique("copier-tx");
        createTopic(input, 1);
        createTopic(output, 1);
        int n = 400;
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < n; i++) {
            lines.append("m").append(i).append('\n');
        }
        tool(lines.toString(), "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", bootstrap(),
                "--topic", input);
        tool(null, "org.apache.kafka.tools.TransactionalMessageCopier", "--broker-list", bootstrap(),
                "--input-topic", input, "--input-partition", "0", "--output-topic", output,
                "--max-messages", Integer.toString(n), "--transaction-size", "20", "--transactional-id", id,
                "--consumer-group", KafkaListenerTest.unique("copier-g"), "--use-group-metadata",
                "--enable-random-aborts");
        List<String> copied = KafkaClients.readToEnd(listener.port(), output, 0, "read_committed");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            expected.add("m" + i);
        }
        assertThat(copied).as("every input record once, in order").containsExactlyElementsOf(expected);
        // At read_uncommitted the copies of aborted transactions that reached the log are there too. A client drops
        // the batches of an aborted transaction it has not sent yet, so there may be none (the first run under
        // transaction protocol 2 had none): that the copier did abort shows in its epoch below.
        long uncommitted = KafkaClients.readToEnd(listener.port(), output, 0, "read_uncommitted").size();
        assertThat(uncommitted).as("committed and aborted copies").isGreaterThanOrEqualTo(n);

        List<String> listed = tool(null, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                bootstrap(), "list");
        assertThat(listed).anySatisfy(l -> assertThat(l).contains(id).contains("CompleteCommit"));
        List<String> described = tool(null, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                bootstrap(), "describe", "--transactional-id", id);
        assertThat(described).anySatisfy(l -> assertThat(l).contains("CompleteCommit"));
        // Protocol 2 ends every transaction at a new epoch, from 0: the 20 commits, and one more per abort (the copier
        // aborts about one transaction in three; none in 20 would happen 3 times in 10,000 runs).
        String header = described.stream().filter(l -> l.contains("ProducerEpoch")).findFirst().orElseThrow();
        int column = List.of(header.trim().split("\\s+")).indexOf("ProducerEpoch");
        String row = described.stream().filter(l -> l.contains(id) && !l.contains("ProducerEpoch")).findFirst()
                .orElseThrow();
        assertThat(Integer.parseInt(row.trim().split("\\s+")[column])).as("EndTxns, aborts included")
                .isGreaterThan(n / 20);
    }

    @Test
    void verifiableProducerAndConsumerLoseNothingAcknowledged() throws Exception {
        String topic = KafkaListenerTest.unique("verifiable");
        String group = KafkaListenerTest.unique("verifiable-g");
        createTopic(topic, 3);
        int n = 300;
        Map<Integer, Set<Long>> acked = new HashMap<>();
        for (String line : tool(null, "org.apache.kafka.tools.VerifiableProducer", "--bootstrap-server", bootstrap(),
                "--topic", topic, "--max-messages", Integer.toString(n), "--acks", "-1")) {
            if (!line.startsWith("{")) {
                continue;
            }
            JsonNode event = JSON.readTree(line);
            if ("producer_send_success".equals(event.path("name").asText())) {
                acked.computeIfAbsent(event.get("partition").asInt(), k -> new HashSet<>()).add(event.get("offset").asLong());
            }
        }
        assertThat(acked.values().stream().mapToInt(Set::size).sum()).isEqualTo(n);

        Map<Integer, Set<Long>> consumed = new HashMap<>();
        for (String line : tool(null, "org.apache.kafka.tools.VerifiableConsumer", "--bootstrap-server", bootstrap(),
                "--topic", topic, "--group-id", group, "--max-messages", Integer.toString(n),
                "--reset-policy", "earliest")) {
            if (!line.startsWith("{")) {
                continue;
            }
            JsonNode event = JSON.readTree(line);
            if ("records_consumed".equals(event.path("name").asText())) {
                for (JsonNode p : event.get("partitions")) {
                    Set<Long> offsets = consumed.computeIfAbsent(p.get("partition").asInt(), k -> new HashSet<>());
                    for (long o = p.get("minOffset").asLong(); o <= p.get("maxOffset").asLong(); o++) {
                        offsets.add(o);
                    }
                }
            }
        }
        acked.forEach((partition, offsets) -> assertThat(consumed.getOrDefault(partition, Set.of()))
                .as("partition %d: every acknowledged record consumed", partition).containsAll(offsets));
    }
}
