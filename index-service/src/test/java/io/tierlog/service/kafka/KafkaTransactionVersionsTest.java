package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transaction protocol 2 (KIP-890 part 2) beside protocol 1 on one listener: the listener finalizes
 * {@code transaction.version} 2, so kafka-clients 4 end each transaction at a new epoch (which the markers carry) and
 * add partitions by producing to them; a client of protocol 1 (its request versions: AddPartitionsToTxn, Produce up
 * to 11, EndTxn up to 4) keeps protocol 1's rules and epochs.
 */
@QuarkusTest
class KafkaTransactionVersionsTest {
    @Inject
    KafkaListener listener;

    @Test
    void theListenerFinalizesTransactionVersion2() throws Exception {
        try (RawKafka raw = new RawKafka(listener.port())) {
            ApiVersionsResponse r = raw.call(new ApiVersionsRequest(new ApiVersionsRequestData()
                    .setClientSoftwareName("raw").setClientSoftwareVersion("1"), (short) 3));
            assertThat(r.data().finalizedFeatures().find("transaction.version").maxVersionLevel()).isEqualTo((short) 2);
            assertThat(r.data().finalizedFeaturesEpoch()).isPositive();
            assertThat(r.data().apiKeys().find(org.apache.kafka.common.protocol.ApiKeys.END_TXN.id).maxVersion())
                    .isEqualTo((short) 5);
        }
    }

    @Test
    void kafka4ClientsEndEachTransactionAtANewEpochThatTheMarkersCarry() throws Exception {
        String topic = topic("tv2");
        TopicPartition p0 = new TopicPartition(topic, 0);
        String id = KafkaListenerTest.unique("tv2");
        List<Short> epochs = new ArrayList<>();
        try (KafkaProducer<String, String> producer = transactional(id);
             Admin admin = KafkaClients.admin(listener.port())) {
            producer.initTransactions();
            epochs.add(epoch(admin, id));
            for (int t = 0; t < 3; t++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, null, "p0-" + t));
                producer.send(new ProducerRecord<>(topic, 1, null, "p1-" + t));
                if (t == 1) {
                    producer.flush();
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
                epochs.add(epoch(admin, id));
            }
            List<ProducerState> onP0 = admin.describeProducers(List.of(p0)).partitionResult(p0).get().activeProducers();
            assertThat(onP0).singleElement().extracting(ProducerState::producerEpoch)
                    .as("the last marker's epoch").isEqualTo((int) epochs.get(3));
        }
        assertThat(epochs).as("one epoch per transaction").containsExactly((short) 0, (short) 1, (short) 2, (short) 3);
        assertThat(committedValues(topic)).containsExactlyInAnyOrder("p0-0", "p1-0", "p0-2", "p1-2");
    }

    @Test
    void protocol1RequestsKeepProtocol1RulesBesideProtocol2() throws Exception {
        String topic = topic("tv1");
        String id = KafkaListenerTest.unique("tv1");
        try (RawKafka raw = new RawKafka(listener.port())) {
            InitProducerIdResponse init = initProducerId(raw, id, (short) 4);
            long pid = init.data().producerId();
            short epoch = init.data().producerEpoch();

            // Protocol 1: a produce (v11) must follow AddPartitionsToTxn.
            assertThat(produce(raw, id, topic, 0, pid, epoch, 0, (short) 11)).isEqualTo(Errors.INVALID_TXN_STATE);
            AddPartitionsToTxnResponse added = raw.call(AddPartitionsToTxnRequest.Builder.forClient(id, pid, epoch,
                    List.of(new TopicPartition(topic, 0))), (short) 3);
            assertThat(added.errors().values()).singleElement().satisfies(byPartition ->
                    assertThat(byPartition.values()).containsOnly(Errors.NONE));
            assertThat(produce(raw, id, topic, 0, pid, epoch, 0, (short) 11)).isEqualTo(Errors.NONE);
            EndTxnResponse v4 = raw.call(new EndTxnRequest.Builder(new EndTxnRequestData().setTransactionalId(id)
                    .setProducerId(pid).setProducerEpoch(epoch).setCommitted(true), false), (short) 4);
            assertThat(v4.error()).isEqualTo(Errors.NONE);

            // Protocol 2 on the same id: a produce (v12) adds its partition; EndTxn v5 answers the next epoch.
            assertThat(produce(raw, id, topic, 1, pid, epoch, 0, (short) 12)).isEqualTo(Errors.NONE);
            // A partition the topic does not have is refused and never joins the transaction (its commit goes through).
            assertThat(produce(raw, id, topic, 5, pid, epoch, 0, (short) 12)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            EndTxnResponse v5 = raw.call(new EndTxnRequest.Builder(new EndTxnRequestData().setTransactionalId(id)
                    .setProducerId(pid).setProducerEpoch(epoch).setCommitted(true), true), (short) 5);
            assertThat(v5.error()).isEqualTo(Errors.NONE);
            assertThat(v5.data().producerId()).isEqualTo(pid);
            assertThat(v5.data().producerEpoch()).as("protocol 1 kept the epoch; protocol 2 bumps it")
                    .isEqualTo((short) (epoch + 1));
            // A batch of the ended transaction arriving late is fenced by the markers' epoch.
            assertThat(produce(raw, id, topic, 1, pid, epoch, 1, (short) 12)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        }
        assertThat(committedValues(topic)).containsExactlyInAnyOrder("v-0-0", "v-1-0");
    }

    /**
     * kafka-clients 4.x can send a transaction's EndTxn before its first produce (a race in its Sender); the commit is
     * answered retriable, so the client retries it behind its batches instead of dying of INVALID_TXN_STATE.
     */
    @Test
    void aCommitAheadOfItsTransactionsFirstProduceIsRetriable() throws Exception {
        String topic = topic("ahead");
        String id = KafkaListenerTest.unique("ahead");
        try (RawKafka raw = new RawKafka(listener.port())) {
            InitProducerIdResponse init = initProducerId(raw, id, (short) 5);
            long pid = init.data().producerId();
            short epoch = init.data().producerEpoch();
            EndTxnRequest.Builder commit = new EndTxnRequest.Builder(new EndTxnRequestData().setTransactionalId(id)
                    .setProducerId(pid).setProducerEpoch(epoch).setCommitted(true), true);

            assertThat(raw.<EndTxnResponse>call(commit, (short) 5).error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
            assertThat(produce(raw, id, topic, 0, pid, epoch, 0, (short) 12)).isEqualTo(Errors.NONE);
            EndTxnResponse retried = raw.call(commit, (short) 5);
            assertThat(retried.error()).isEqualTo(Errors.NONE);
            assertThat(retried.data().producerEpoch()).isEqualTo((short) (epoch + 1));
        }
        assertThat(committedValues(topic)).containsExactly("v-0-0");
    }

    /** InitProducerId for a new transactional id, at {@code version}. */
    private static InitProducerIdResponse initProducerId(RawKafka raw, String id, short version) throws Exception {
        return raw.call(new InitProducerIdRequest.Builder(new InitProducerIdRequestData().setTransactionalId(id)
                .setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short) -1)), version);
    }

    private static Errors produce(RawKafka raw, String id, String topic, int partition, long pid, short epoch,
                                  int sequence, short version) throws Exception {
        MemoryRecords batch = MemoryRecords.withTransactionalRecords(Compression.NONE, pid, epoch, sequence,
                new SimpleRecord(System.currentTimeMillis(), null,
                        ("v-" + partition + "-" + sequence).getBytes(StandardCharsets.UTF_8)));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(batch))));
        ProduceResponse r = raw.call(new ProduceRequest.Builder(version, version, new ProduceRequestData()
                .setTransactionalId(id).setAcks((short) -1).setTimeoutMs(20_000).setTopicData(topics)), version);
        return Errors.forCode(r.data().responses().iterator().next().partitionResponses().get(0).errorCode());
    }

    private String topic(String prefix) throws Exception {
        String topic = KafkaListenerTest.unique(prefix);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        return topic;
    }

    private KafkaProducer<String, String> transactional(String id) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static short epoch(Admin admin, String id) throws Exception {
        return (short) admin.describeTransactions(List.of(id)).description(id).get().producerEpoch();
    }

    private List<String> committedValues(String topic) {
        try (KafkaConsumer<String, String> consumer = KafkaClients.consumer(listener.port(),
                Map.of("isolation.level", "read_committed"))) {
            List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            List<String> out = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(20);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
            }
            return out;
        }
    }
}
