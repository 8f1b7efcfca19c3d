package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every API and version the listener offers, sent requests whose fields are random ({@link RandomRequestData}) but
 * which a client could send: each is answered on its open connection within its wait, the answer reads back at the
 * request's version, and no part of it says UNKNOWN_SERVER_ERROR (an exception no handler named: Kafka's 500). Bad
 * values must come back as the error Kafka gives for them. {@code -Dfuzz.kafka.requests-per-version=N} and
 * {@code -Dfuzz.kafka.seed=S} run longer or other rounds by hand, {@code -Dfuzz.kafka.apis=FETCH,PRODUCE} some APIs
 * alone.
 */
@QuarkusTest
class KafkaRandomRequestsTest {
    private static final int PER_VERSION = Integer.getInteger("fuzz.kafka.requests-per-version", 4);
    private static final long SEED = Long.getLong("fuzz.kafka.seed", 20261207L);
    /** Comma-separated API names (ApiKeys' constants) to send alone, by hand; all offered when unset. */
    private static final String ONLY = System.getProperty("fuzz.kafka.apis", "");

    @Inject
    KafkaListener listener;

    /** What one API's connection saw. */
    private record Outcome(ApiKeys api, int answered, List<String> failures) {
    }

    /** A new connection to the listener, ready to send requests (authenticated where the listener asks). */
    interface Connect {
        RawKafka open() throws IOException;
    }

    @Test
    void everyRequestAClientCouldSendIsAnsweredWithAnErrorItNames() throws Exception {
        int port = listener.port();
        String three = KafkaClients.topicWithRecords(port, "fuzz", 3, 5);
        String one = KafkaClients.topicWithRecords(port, "fuzz", 1, 5);
        String group = KafkaListenerTest.unique("fuzz-group");
        List<Uuid> ids = new ArrayList<>();
        try (Admin admin = KafkaClients.admin(port)) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(three, 1), new OffsetAndMetadata(2)))
                    .all().get();
            for (TopicDescription d : admin.describeTopics(List.of(three, one)).allTopicNames().get().values()) {
                ids.add(d.topicId());
            }
        }
        // Live members of a KIP-848 group and of a classic one, and the producer ids of a transactional and an
        // idempotent producer: requests naming them reach the membership and transaction paths.
        String transactionalId = KafkaListenerTest.unique("fuzz-txn");
        List<Long> producerIds = new ArrayList<>();
        try (RawKafka raw = new RawKafka(port)) {
            for (String id : Arrays.asList(transactionalId, null)) { // a null id: an idempotent producer
                InitProducerIdResponse init = raw.call(new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                        .setTransactionalId(id).setTransactionTimeoutMs(60_000)), (short) 4);
                assertThat(init.data().errorCode()).isEqualTo(Errors.NONE.code());
                producerIds.add(init.data().producerId());
            }
        }
        // A share group's member holding records in an open share session, and an open fetch session: requests
        // naming them reach the share-fetch, acknowledgement and incremental-fetch paths.
        String shareGroup = KafkaListenerTest.unique("fuzz-share");
        String shareMember = Uuid.randomUuid().toString();
        List<Integer> sessionIds = new ArrayList<>();
        try (Admin admin = KafkaClients.admin(port); RawKafka raw = new RawKafka(port)) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, shareGroup), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get();
            Uuid threeId = admin.describeTopics(List.of(three)).allTopicNames().get().get(three).topicId();
            ShareGroupHeartbeatResponse joined = raw.call(new ShareGroupHeartbeatRequest.Builder(
                    new ShareGroupHeartbeatRequestData().setGroupId(shareGroup).setMemberId(shareMember)
                            .setMemberEpoch(0).setSubscribedTopicNames(List.of(three))), (short) 1);
            assertThat(joined.data().errorCode()).isEqualTo(Errors.NONE.code());
            ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
            ShareFetchRequestData.FetchTopic shared = new ShareFetchRequestData.FetchTopic().setTopicId(threeId);
            FetchRequestData.FetchTopic fetched = new FetchRequestData.FetchTopic().setTopic(three).setTopicId(threeId);
            for (int p = 0; p < 3; p++) {
                shared.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p));
                fetched.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20));
            }
            topics.add(shared);
            ShareFetchResponse held = raw.call(new ShareFetchRequest.Builder(new ShareFetchRequestData()
                    .setGroupId(shareGroup).setMemberId(shareMember).setShareSessionEpoch(0).setMaxWaitMs(100)
                    .setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(10).setBatchSize(10).setTopics(topics)),
                    (short) 1);
            assertThat(held.data().errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(held.data().responses()).as("records acquired by the share member")
                    .anySatisfy(t -> assertThat(t.partitions()).anySatisfy(p -> assertThat(p.acquiredRecords())
                            .isNotEmpty()));
            FetchResponse session = raw.call(new FetchRequest(new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
                    .setMaxBytes(1 << 24).setSessionId(0).setSessionEpoch(0).setTopics(List.of(fetched)), (short) 12));
            assertThat(session.error()).isEqualTo(Errors.NONE);
            sessionIds.add(session.sessionId());
        }
        List<String> groups = List.of(group, KafkaListenerTest.unique("fuzz-848"),
                KafkaListenerTest.unique("fuzz-classic"), shareGroup);
        try (KafkaConsumer<String, String> consumer = joined(port, groups.get(1), "consumer", three);
             KafkaConsumer<String, String> classic = joined(port, groups.get(2), "classic", one)) {
            List<String> members = List.of(consumer.groupMetadata().memberId(), classic.groupMetadata().memberId(),
                    shareMember);
            List<String> names = new ArrayList<>(List.of(three, one, transactionalId));
            names.addAll(groups);
            RandomRequestData.Known known = new RandomRequestData.Known(names, ids, members, producerIds, sessionIds);
            assertThat(rounds(() -> new RawKafka(port), known, Set.of()))
                    .as("requests answered wrongly (seed %d)", SEED).isEmpty();
        }
    }

    /** A consumer of {@code group} ({@code protocol} consumer or classic) once it holds partitions of {@code topic}. */
    private static KafkaConsumer<String, String> joined(int port, String group, String protocol, String topic) {
        KafkaConsumer<String, String> consumer = KafkaClients.consumer(port, Map.of(ConsumerConfig.GROUP_ID_CONFIG,
                group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol));
        consumer.subscribe(List.of(topic));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (consumer.assignment().isEmpty() && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(100));
        }
        assertThat(consumer.assignment()).as("%s joined %s", protocol, group).isNotEmpty();
        return consumer;
    }

    /**
     * Sends random requests of every API and version the listener offers but {@code skipped}, each API on its own
     * connections, and returns what was answered wrongly; asserts that every API had requests answered.
     */
    static List<String> rounds(Connect connect, RandomRequestData.Known known, Set<ApiKeys> skipped)
            throws Exception {
        ApiVersionsResponseData.ApiVersionCollection offered;
        try (RawKafka raw = connect.open()) {
            ApiVersionsResponse versions = raw.call(new ApiVersionsRequest.Builder(), (short) 3);
            offered = versions.data().apiKeys();
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Outcome>> outcomes = new ArrayList<>();
            for (ApiVersionsResponseData.ApiVersion v : offered) {
                ApiKeys api = ApiKeys.forId(v.apiKey());
                if (skipped.contains(api) || !ONLY.isEmpty() && !List.of(ONLY.split(",")).contains(api.name())) {
                    continue;
                }
                RandomRequestData random = new RandomRequestData(SEED * 31 + api.id, known);
                outcomes.add(pool.submit(() -> send(connect, api, v.minVersion(), v.maxVersion(), random)));
            }
            List<String> failures = new ArrayList<>();
            int answered = 0;
            for (Future<Outcome> f : outcomes) {
                Outcome outcome = f.get();
                failures.addAll(outcome.failures());
                answered += outcome.answered();
                assertThat(outcome.answered()).as("%s: requests answered", outcome.api()).isPositive();
            }
            System.out.printf("random requests: %d answered over %d APIs, %d wrongly (seed %d)%n", answered,
                    outcomes.size(), failures.size(), SEED);
            return failures;
        } finally {
            pool.shutdownNow();
        }
    }

    /** What the random requests found, each named once, so that it stays found whatever the seed. */
    @Test
    void theRequestsRandomRoundsBrokeAreAnsweredWithKafkasErrors() throws Exception {
        int port = listener.port();
        String topic = KafkaClients.topicWithRecords(port, "odd", 2, 5);
        try (RawKafka raw = new RawKafka(port)) {
            // A fetch naming a partition twice: one answer, as the last naming asks (its file range was written
            // twice and the connection dropped).
            FetchRequestData.FetchTopic first = new FetchRequestData.FetchTopic().setTopic(topic);
            first.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(-1)
                    .setPartitionMaxBytes(1 << 20));
            FetchRequestData.FetchTopic again = new FetchRequestData.FetchTopic().setTopic(topic);
            again.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(2)
                    .setPartitionMaxBytes(1 << 20));
            FetchResponseData fetched = ((FetchResponse) call(raw, ApiKeys.FETCH, (short) 12, new FetchRequestData()
                    .setReplicaId(-1).setMaxBytes(1 << 20).setMinBytes(1).setSessionEpoch(-1)
                    .setTopics(List.of(first, again)))).data();
            assertThat(fetched.responses()).flatExtracting(FetchResponseData.FetchableTopicResponse::partitions)
                    .singleElement().satisfies(p -> {
                        assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                        assertThat(((Records) p.records()).batches().iterator().next().lastOffset()).isEqualTo(4);
                    });

            // A produce carrying no record set, to a topic it may write and to one it may not (kafka-clients' own
            // error answer fails on it, and the connection dropped).
            ProduceRequestData.TopicProduceDataCollection targets = new ProduceRequestData.TopicProduceDataCollection();
            for (String name : List.of(topic, "__consumer_offsets")) {
                ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(name);
                t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(null));
                targets.add(t);
            }
            ProduceResponseData produced = ((ProduceResponse) call(raw, ApiKeys.PRODUCE, (short) 9,
                    new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000).setTopicData(targets))).data();
            short refused = Errors.TOPIC_AUTHORIZATION_FAILED.code();
            assertThat(produced.responses())
                    .flatExtracting(ProduceResponseData.TopicProduceResponse::partitionResponses)
                    .extracting(ProduceResponseData.PartitionProduceResponse::errorCode)
                    .containsExactly(refused, refused);
            ProduceRequestData.TopicProduceDataCollection own = new ProduceRequestData.TopicProduceDataCollection();
            own.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(null))));
            ProduceResponseData ownTopic = ((ProduceResponse) call(raw, ApiKeys.PRODUCE, (short) 9,
                    new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000).setTopicData(own))).data();
            assertThat(ownTopic.responses().iterator().next().partitionResponses().get(0).errorCode())
                    .isEqualTo(Errors.CORRUPT_MESSAGE.code());

            // Metadata before version 12 asking for a topic by id alone: answers cannot carry a null name.
            MetadataRequestData.MetadataRequestTopic byId = new MetadataRequestData.MetadataRequestTopic().setName(null)
                    .setTopicId(Uuid.randomUuid());
            MetadataResponseData metadata = ((MetadataResponse) call(raw, ApiKeys.METADATA, (short) 10,
                    new MetadataRequestData().setTopics(List.of(byId)))).data();
            assertThat(metadata.topics()).singleElement().satisfies(t -> {
                assertThat(t.name()).isEmpty();
                assertThat(t.errorCode()).isNotIn(Errors.NONE.code(), Errors.UNKNOWN_SERVER_ERROR.code());
            });

            // LeaveGroup before version 3 answers with one top-level error (its answers have no member list).
            for (short v = 0; v < 3; v++) {
                LeaveGroupResponseData left = ((LeaveGroupResponse) call(raw, ApiKeys.LEAVE_GROUP, v,
                        new LeaveGroupRequestData().setGroupId(KafkaListenerTest.unique("g")).setMemberId("gone")))
                        .data();
                assertThat(left.errorCode()).as("LeaveGroup v%d", v).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
            }

            // Commits of a partition below 0, or of an offset below 0 inside a transaction.
            OffsetCommitRequestData.OffsetCommitRequestTopic negative = new OffsetCommitRequestData
                    .OffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
                            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(-1)
                                    .setCommittedOffset(1)));
            OffsetCommitResponseData committed = ((OffsetCommitResponse) call(raw, ApiKeys.OFFSET_COMMIT, (short) 8,
                    new OffsetCommitRequestData().setGroupId(KafkaListenerTest.unique("g"))
                            .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(negative)))).data();
            assertThat(committed.topics().get(0).partitions().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            for (int[] partitionAndOffset : new int[][]{{-1, 1}, {0, -5}}) {
                TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t = new TxnOffsetCommitRequestData
                        .TxnOffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
                                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                        .setPartitionIndex(partitionAndOffset[0])
                                        .setCommittedOffset(partitionAndOffset[1])));
                TxnOffsetCommitResponseData txnCommitted = ((TxnOffsetCommitResponse) call(raw,
                        ApiKeys.TXN_OFFSET_COMMIT, (short) 3, new TxnOffsetCommitRequestData().setTransactionalId("t")
                                .setGroupId("g").setProducerId(1).setProducerEpoch((short) 0)
                                .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(t)))).data();
                assertThat(txnCommitted.topics().get(0).partitions().get(0).errorCode())
                        .isEqualTo(partitionAndOffset[0] < 0 ? Errors.UNKNOWN_TOPIC_OR_PARTITION.code()
                                : Errors.INVALID_COMMIT_OFFSET_SIZE.code());
            }

            // Deleting a group's offset of a partition below 0 (found once rounds named live groups).
            String group = KafkaListenerTest.unique("g");
            OffsetCommitRequestData.OffsetCommitRequestTopic one = new OffsetCommitRequestData
                    .OffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
                            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                                    .setCommittedOffset(1)));
            call(raw, ApiKeys.OFFSET_COMMIT, (short) 8, new OffsetCommitRequestData().setGroupId(group)
                    .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(one)));
            OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection deleted =
                    new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
            deleted.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(topic).setPartitions(List.of(
                    new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(-1),
                    new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0))));
            OffsetDeleteResponseData offsetsDeleted = ((OffsetDeleteResponse) call(raw, ApiKeys.OFFSET_DELETE,
                    (short) 0, new OffsetDeleteRequestData().setGroupId(group).setTopics(deleted))).data();
            assertThat(offsetsDeleted.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(offsetsDeleted.topics().iterator().next().partitions())
                    .extracting(OffsetDeleteResponseData.OffsetDeleteResponsePartition::errorCode)
                    .containsExactly(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), Errors.NONE.code());

            // A transaction's partitions with one below 0: that one is unknown, the rest not attempted.
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection txnTopics =
                    new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
            txnTopics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(topic)
                    .setPartitions(List.of(-2, 1)));
            AddPartitionsToTxnResponseData added = ((AddPartitionsToTxnResponse) call(raw,
                    ApiKeys.ADD_PARTITIONS_TO_TXN, (short) 3, new AddPartitionsToTxnRequestData()
                            .setV3AndBelowTransactionalId("t").setV3AndBelowProducerId(1)
                            .setV3AndBelowProducerEpoch((short) 0).setV3AndBelowTopics(txnTopics))).data();
            assertThat(added.resultsByTopicV3AndBelow().iterator().next().resultsByPartition())
                    .extracting(AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult::partitionErrorCode)
                    .containsExactly(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), Errors.OPERATION_NOT_ATTEMPTED.code());
        }
    }

    /** Sends {@code data} as a request of {@code api} at {@code version} and reads its answer. */
    private static AbstractResponse call(RawKafka raw, ApiKeys api, short version, ApiMessage data)
            throws IOException {
        AbstractRequest request = parsed(api, version, data);
        assertThat(request).as("%s v%d as written", api, version).isNotNull();
        return raw.call(request);
    }

    private static Outcome send(Connect connect, ApiKeys api, short min, short max, RandomRequestData random)
            throws IOException {
        List<String> failures = new ArrayList<>();
        int answered = 0;
        int correlationId = 0;
        RawKafka raw = connect.open();
        try {
            for (short version = min; version <= max; version++) {
                for (int i = 0; i < PER_VERSION; i++) {
                    ApiMessage data = random.request(api, version);
                    AbstractRequest request = parsed(api, version, data);
                    if (request == null) {
                        continue; // the generated classes wrote what their own parser refuses: no client sends it
                    }
                    RequestHeader header = new RequestHeader(api, version, "fuzz", ++correlationId);
                    raw.send(header, request);
                    if (request instanceof ProduceRequest produce && produce.acks() == 0) {
                        continue; // no answer comes
                    }
                    String failure;
                    try {
                        AbstractResponse response = AbstractResponse.parseResponse(raw.receive(), header);
                        answered++;
                        String unknown = unknownServerError(response.data(), api.name());
                        failure = unknown == null ? null
                                : "UNKNOWN_SERVER_ERROR at " + unknown + " in " + response.data();
                    } catch (SocketTimeoutException e) {
                        failure = "no answer within 20 s";
                    } catch (IOException e) {
                        failure = "connection closed (" + e + ")";
                    } catch (RuntimeException e) {
                        failure = "unreadable answer (" + e + ")";
                    }
                    if (failure != null) {
                        failures.add(api + " v" + version + ": " + cut(failure) + "; request " + cut(data.toString()));
                        raw.close();
                        raw = connect.open();
                    }
                }
            }
        } finally {
            raw.close();
        }
        return new Outcome(api, answered, failures);
    }

    /** The request as the listener parses it, or null when kafka-clients' own parser refuses the bytes. */
    private static AbstractRequest parsed(ApiKeys api, short version, ApiMessage data) {
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            ByteBuffer body = ByteBuffer.allocate(data.size(cache, version));
            data.write(new ByteBufferAccessor(body), cache, version);
            body.flip();
            return AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(body)).request;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Where {@code message}, walked field by field, says UNKNOWN_SERVER_ERROR (as a path of getters), or null. The
     * responses' own {@code errorCounts} is not used: some of them fail on answers that repeat a resource.
     */
    private static String unknownServerError(Message message, String path) {
        for (Method getter : message.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass() == Object.class || getter.getName().equals("duplicate")) {
                continue;
            }
            String at = path + "." + getter.getName();
            Object value;
            try {
                value = getter.invoke(message);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(at, e);
            }
            if (getter.getReturnType() == short.class && getter.getName().toLowerCase(Locale.ROOT).endsWith("errorcode")
                    && (short) value == Errors.UNKNOWN_SERVER_ERROR.code()) {
                return at;
            }
            String inside = null;
            if (value instanceof Message nested) {
                inside = unknownServerError(nested, at);
            } else if (value instanceof Iterable<?> elements) {
                for (Object element : elements) {
                    if (element instanceof Message nested && (inside = unknownServerError(nested, at + "[]")) != null) {
                        break;
                    }
                }
            }
            if (inside != null) {
                return inside;
            }
        }
        return null;
    }

    private static String cut(String s) {
        return s.length() <= 600 ? s : s.substring(0, 600) + "...";
    }
}
