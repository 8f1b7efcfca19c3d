package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Properties;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * DescribeProducers (Admin's {@code describeProducers}, what {@code kafka-transactions describe-producers} runs): a
 * partition's idempotent producers as the producer state holds them, Kafka's and HTTP's alike, since both share it.
 */
@QuarkusTest
class KafkaDescribeProducersTest {
    @Inject
    KafkaListener listener;

    @Test
    void listsTheIdempotentProducersOfEachPartition() throws Exception {
        String topic = KafkaListenerTest.unique("producers");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
            // An HTTP producer with decimal id 7 at epoch 2: three records, sequences 0..2, to partition 0.
            given().contentType("application/json")
                    .body("{\"records\": [{\"value\": 1, \"partition\": 0}, {\"value\": 2, \"partition\": 0},"
                            + " {\"value\": 3, \"partition\": 0}], \"producer\": {\"id\": \"7\", \"epoch\": 2, \"sequence\": 0}}")
                    .post("/v1/topics/" + topic + "/records").then().statusCode(200);
            // A Kafka idempotent producer: five records to partition 0, sequences 0..4.
            try (KafkaProducer<String, String> idempotent = idempotentProducer()) {
                for (int i = 0; i < 5; i++) {
                    idempotent.send(new ProducerRecord<>(topic, 0, null, "v" + i)).get();
                }
            }
            // Records without a producer id leave partition 1 with none.
            KafkaClients.produceToEachPartition(listener.port(), topic, 2, 0, 3);

            List<ProducerState> p0 = admin.describeProducers(List.of(new TopicPartition(topic, 0))).all().get()
                    .get(new TopicPartition(topic, 0)).activeProducers();
            assertThat(p0).hasSize(2);
            ProducerState http = p0.stream().filter(s -> s.producerId() == 7).findFirst().orElseThrow();
            assertThat(http.producerEpoch()).isEqualTo(2);
            assertThat(http.lastSequence()).isEqualTo(2);
            assertThat(http.lastTimestamp()).isPositive();
            assertThat(http.currentTransactionStartOffset()).isEmpty();
            ProducerState kafka = p0.stream().filter(s -> s.producerId() != 7).findFirst().orElseThrow();
            assertThat(kafka.producerEpoch()).isZero();
            assertThat(kafka.lastSequence()).isEqualTo(4);

            assertThat(admin.describeProducers(List.of(new TopicPartition(topic, 1))).all().get()
                    .get(new TopicPartition(topic, 1)).activeProducers()).isEmpty();
        }
    }

    @Test
    void unknownTopicsAndPartitionsAreAnsweredEachOnItsOwn() throws Exception {
        String topic = KafkaListenerTest.unique("producers-unknown");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        DescribeProducersRequestData data = new DescribeProducersRequestData();
        data.topics().add(new DescribeProducersRequestData.TopicRequest().setName(topic).setPartitionIndexes(List.of(0, 5)));
        data.topics().add(new DescribeProducersRequestData.TopicRequest().setName(topic + "-none")
                .setPartitionIndexes(List.of(0)));
        try (RawKafka kafka = new RawKafka(listener.port())) {
            DescribeProducersResponse r = kafka.call(new DescribeProducersRequest.Builder(data), ApiKeys.DESCRIBE_PRODUCERS);
            assertThat(r.data().topics()).hasSize(2);
            var known = r.data().topics().get(0).partitions();
            assertThat(known.get(0).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(known.get(0).activeProducers()).isEmpty();
            assertThat(known.get(1).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            assertThat(r.data().topics().get(1).partitions().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        }
    }

    private KafkaProducer<String, String> idempotentProducer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }
}
