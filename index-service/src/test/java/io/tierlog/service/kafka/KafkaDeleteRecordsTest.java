package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DeleteRecords over the listener (Admin's deleteRecords, what kafka-delete-records and Kafka Streams send): the log
 * start moves for Kafka and HTTP readers alike, never back, and an offset past the end changes nothing.
 */
@QuarkusTest
class KafkaDeleteRecordsTest {
    @Inject
    KafkaListener listener;

    private long deleteBefore(Admin admin, TopicPartition tp, long offset) throws Exception {
        return admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset))).lowWatermarks().get(tp).get()
                .lowWatermark();
    }

    @Test
    void recordsBelowTheNewLogStartAreGoneForEveryReader() throws Exception {
        String topic = KafkaListenerTest.unique("delrec");
        TopicPartition p0 = new TopicPartition(topic, 0);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = KafkaClients.producer(listener.port(), "all", "none")) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
                producer.send(new ProducerRecord<>(topic, 1, "k", "w" + i));
            }
            producer.flush();
        }
        try (Admin admin = KafkaClients.admin(listener.port())) {
            assertThat(deleteBefore(admin, p0, 4)).isEqualTo(4);
            assertThat(deleteBefore(admin, p0, 2)).as("the log start never moves back").isEqualTo(4);
            assertThatThrownBy(() -> deleteBefore(admin, p0, 11)).as("past the high watermark")
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.OffsetOutOfRangeException.class);
            assertThat(admin.listOffsets(Map.of(p0, OffsetSpec.earliest())).partitionResult(p0).get().offset())
                    .isEqualTo(4);
            assertThat(admin.listOffsets(Map.of(new TopicPartition(topic, 1), OffsetSpec.earliest()))
                    .partitionResult(new TopicPartition(topic, 1)).get().offset()).as("the other partition").isZero();
        }

        // A partition the topic does not have (Admin never sends one: it waits for a leader in Metadata).
        try (RawKafka raw = new RawKafka(listener.port())) {
            List<DeleteRecordsRequestData.DeleteRecordsTopic> topics = List.of(new DeleteRecordsRequestData
                    .DeleteRecordsTopic().setName(topic).setPartitions(List.of(
                    new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(5).setOffset(1))));
            DeleteRecordsResponse r = raw.call(new DeleteRecordsRequest.Builder(new DeleteRecordsRequestData()
                    .setTopics(topics).setTimeoutMs(1000)), ApiKeys.DELETE_RECORDS);
            assertThat(Errors.forCode(r.data().topics().find(topic).partitions().find(5).errorCode()))
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }

        // A consumer from the beginning starts at 4; one positioned below it is told it is out of range.
        assertThat(read(topic, 0, null, 6)).containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
        assertThatThrownBy(() -> read(topic, 0, 2L, 1)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(read(topic, 1, null, 10)).hasSize(10);

        // HTTP reads the same log: the partition starts at 4, an offset below is 416 with the bounds.
        assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                .getLong("partitionStates[0].logStartOffset")).isEqualTo(4);
        given().get("/v1/topics/" + topic + "/partitions/0/records?offset=3").then().statusCode(416);
        assertThat(given().get("/v1/topics/" + topic + "/partitions/0/records?offset=4").then().statusCode(200)
                .extract().jsonPath().getList("records.offset", Long.class)).startsWith(4L);

        // -1 is the high watermark: every record of the partition deleted.
        try (Admin admin = KafkaClients.admin(listener.port())) {
            assertThat(deleteBefore(admin, p0, -1)).isEqualTo(10);
        }
        assertThat(given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath()
                .getLong("partitionStates[0].logStartOffset")).isEqualTo(10);
    }

    /** The offsets of partition {@code p} read by an assigned consumer from {@code from} (null: the beginning). */
    private List<Long> read(String topic, int p, Long from, int expected) {
        TopicPartition tp = new TopicPartition(topic, p);
        List<Long> offsets = new ArrayList<>();
        try (KafkaConsumer<String, String> c = KafkaClients.consumer(listener.port(),
                Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, from == null ? "earliest" : "none"))) {
            c.assign(List.of(tp));
            if (from != null) {
                c.seek(tp, from);
            }
            Instant deadline = Instant.now().plusSeconds(30);
            while (offsets.size() < expected) {
                assertThat(Instant.now()).as("reading " + expected + " records").isBefore(deadline);
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    offsets.add(r.offset());
                }
            }
        }
        return offsets;
    }
}
