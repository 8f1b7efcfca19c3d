package io.tierlog.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Forward compatibility: a later service may add fields to its answers (docs/api.md lets it), and a client built
 * today must go on working. Every JSON answer of the real service is relayed by a {@link FaultProxy} with an unknown
 * field added to each of its objects; the client's admin calls, producer, consumer (JSON and record-batch fetches,
 * group heartbeats, commits) and problem documents must all parse as before.
 */
@Tag("slow")
class ForwardCompatibilityTest {
    static TestService service;
    static FaultProxy proxy;
    static TierlogClient client;

    @BeforeAll
    static void start() throws Exception {
        service = TestService.shared();
        proxy = new FaultProxy(service.url());
        proxy.addUnknownFields = true;
        client = TierlogClient.builder().url(proxy.url()).token(TestService.ADMIN_TOKEN).build();
    }

    @AfterAll
    static void stop() {
        proxy.close();
    }

    @Test
    void theAddedFieldsReachTheClientAndAStrictMapperWouldRefuseThem() throws Exception {
        // The check of the check: the proxy's answers really carry fields the client's types do not know, so the
        // tests below would fail with a mapper that refuses unknown properties.
        String topic = TestService.uniqueName("strict");
        service.adminClient().admin().createTopic(topic, 1, null);
        JsonNode answer = client.transport().get("/v1/topics/" + topic);
        assertThat(answer.has(FaultProxy.UNKNOWN_FIELD)).isTrue();
        assertThat(answer.path("partitionStates").path(0).has(FaultProxy.UNKNOWN_FIELD)).isTrue();
        ObjectMapper strict = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        assertThatThrownBy(() -> strict.treeToValue(answer, Admin.TopicDescription.class))
                .isInstanceOf(UnrecognizedPropertyException.class);
        assertThat(HttpTransport.JSON.isEnabled(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES))
                .as("the client's own mapper ignores unknown properties").isFalse();
    }

    @Test
    void adminAnswersWithUnknownFieldsParse() throws Exception {
        Admin admin = client.admin();
        String topic = TestService.uniqueName("fwd-admin");
        int before = proxy.answersWithUnknownFields.get();
        Admin.TopicDescription created = admin.createTopic(topic, 2, Map.of("retention.ms", 3_600_000));
        assertThat(created.partitions()).isEqualTo(2);
        assertThat(created.config()).containsEntry("retention.ms", 3_600_000);
        assertThat(admin.listTopics()).contains(new Admin.TopicSummary(topic, 2));
        assertThat(admin.describeTopic(topic).partitionStates()).hasSize(2).allMatch(s -> s.highWatermark() == 0);
        assertThat(admin.alterTopicConfig(topic, Map.of("retention.ms", 7_200_000)))
                .containsEntry("retention.ms", 7_200_000);
        assertThat(admin.latestOffset(topic, 0)).isZero();

        String group = TestService.uniqueName("fwd-group");
        admin.commitOffsets(group, Map.of(new TopicPartition(topic, 0), 0L));
        assertThat(admin.groupOffsets(group)).containsEntry(new TopicPartition(topic, 0), 0L);
        assertThat(admin.groupLag(group).partitions()).extracting(Admin.PartitionLag::topic).contains(topic);
        assertThat(admin.listGroups()).extracting(Admin.GroupSummary::group).contains(group);
        assertThat(admin.describeGroup(group).group()).isEqualTo(group);

        Admin.CreatedToken token = admin.createToken(TestService.uniqueName("fwd"), "describe:topic:" + topic, null);
        assertThat(token.token()).isNotBlank();
        assertThat(admin.listTokens()).extracting(Admin.TokenInfo::id).contains(token.id());
        admin.revokeToken(token.id());

        // A problem document with an unknown field still gives its type and detail.
        assertThatThrownBy(() -> admin.describeTopic(TestService.uniqueName("missing")))
                .isInstanceOfSatisfying(ProblemException.class, p -> {
                    assertThat(p.type()).isEqualTo("unknown-topic");
                    assertThat(p.body().has(FaultProxy.UNKNOWN_FIELD)).isTrue();
                });
        assertThat(proxy.answersWithUnknownFields.get() - before).isGreaterThanOrEqualTo(12);
    }

    @Test
    void producerAndConsumersReadAnswersWithUnknownFields() throws Exception {
        String topic = TestService.uniqueName("fwd-records");
        client.admin().createTopic(topic, 2, null);
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (Producer producer = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 100; i++) {
                sent.add(producer.send(new ProducerRecord(topic, i % 2, null, ("v" + i).getBytes(), null, null)));
            }
            producer.flush();
        }
        for (int i = 0; i < sent.size(); i++) {
            assertThat(sent.get(i).join().offset()).as("offset of v%d", i).isEqualTo(i / 2);
        }
        for (boolean batches : new boolean[]{true, false}) {
            try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withRecordBatches(batches))) {
                consumer.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
                List<ConsumerRecord> read = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (read.size() < 100 && System.nanoTime() < deadline) {
                    read.addAll(consumer.poll(Duration.ofSeconds(1)));
                }
                assertThat(read).as("record batches: %s", batches).hasSize(100)
                        .allMatch(r -> r.headers().isEmpty() && r.valueAsString().equals("v" + (r.offset() * 2
                                + r.partition())));
            }
        }
        String group = TestService.uniqueName("fwd-members");
        try (Consumer member = client.consumer(ConsumerConfig.group(group).withAutoCommitInterval(Duration.ofHours(1)))) {
            member.subscribe(List.of(topic));
            List<ConsumerRecord> read = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (read.size() < 100 && System.nanoTime() < deadline) {
                read.addAll(member.poll(Duration.ofMillis(500)));
            }
            assertThat(read).hasSize(100);
            member.commitSync();
        }
        assertThat(client.admin().groupOffsets(group)).containsEntry(new TopicPartition(topic, 0), 50L)
                .containsEntry(new TopicPartition(topic, 1), 50L);
    }
}
