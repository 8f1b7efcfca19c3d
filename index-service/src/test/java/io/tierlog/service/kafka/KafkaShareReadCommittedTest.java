package io.tierlog.service.kafka;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A share group at {@code share.isolation.level=read_committed} over a transactional topic: Kafka's share consumers
 * and HTTP workers get the committed records only, nothing of an aborted transaction, and nothing of an open one until
 * it commits; a group at the default, read_uncommitted, gets every record.
 */
@QuarkusTest
class KafkaShareReadCommittedTest {
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    KafkaListener listener;

    @Test
    void aReadCommittedShareGroupGetsOnlyCommittedRecordsOverKafkaAndHttp() throws Exception {
        String topic = KafkaListenerTest.unique("shrc");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        String group = KafkaListenerTest.unique("shrc-k");
        try (Admin admin = KafkaClients.admin(listener.port())) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.isolation.level", "read_committed"),
                            AlterConfigOp.OpType.SET)))).all().get();
            Config described = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(described.get("share.isolation.level").value()).isEqualTo("read_committed");
            assertThat(described.get("share.isolation.level").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
        }

        try (KafkaProducer<String, String> producer = transactionalProducer();
             KafkaShareConsumer<String, String> consumer = shareConsumer(group)) {
            producer.initTransactions();
            for (int t = 0; t < 3; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, String.valueOf(t * 10 + i)));
                }
                producer.flush();
                if (t == 1) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "30"));
            producer.send(new ProducerRecord<>(topic, 0, null, "31"));
            producer.flush(); // offsets 12-13, in a transaction still open

            consumer.subscribe(List.of(topic));
            List<String> got = poll(consumer, 6);
            consumer.poll(Duration.ofSeconds(1)).forEach(r -> got.add(r.value())); // the open transaction holds
            assertThat(got).containsExactlyInAnyOrder("0", "1", "2", "20", "21", "22");

            // An HTTP worker of a read_committed group gets the same records; one of the default group gets them all.
            assertThat(httpLease("read_committed", topic)).containsExactlyInAnyOrder(0, 1, 2, 20, 21, 22);
            assertThat(httpLease(null, topic)).containsExactlyInAnyOrder(0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31);

            producer.commitTransaction();
            assertThat(poll(consumer, 2)).containsExactlyInAnyOrder("30", "31");
        }
    }

    @Test
    void anIsolationLevelKafkaDoesNotHaveIsRefusedNamingTheKey() throws Exception {
        String group = KafkaListenerTest.unique("shrc-bad");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("share.isolation.level", "snapshot"), AlterConfigOp.OpType.SET)))).all().get())
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("share.isolation.level");
            Config described = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(described.get("share.isolation.level").value()).isEqualTo("read_uncommitted");
            assertThat(described.get("share.isolation.level").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
        given().contentType(ContentType.JSON).body("{\"isolation\": \"snapshot\"}")
                .put("/v1/share-groups/" + group + "/config")
                .then().statusCode(400).body("field", org.hamcrest.Matchers.is("isolation"));
    }

    /**
     * Leases everything a new HTTP group (from the earliest record, at {@code isolation}) gets now; the values (the
     * records' values are JSON numbers, as a JSON lease answer shows them).
     */
    private static List<Integer> httpLease(String isolation, String topic) {
        String group = KafkaListenerTest.unique("shrc-h");
        String config = isolation == null ? "{\"start\": \"earliest\"}"
                : "{\"start\": \"earliest\", \"isolation\": \"" + isolation + "\"}";
        given().contentType(ContentType.JSON).body(config).put("/v1/share-groups/" + group + "/config")
                .then().statusCode(200)
                .body("config.isolation", org.hamcrest.Matchers.is(isolation == null ? "read_uncommitted" : isolation));
        return given().contentType(ContentType.JSON).body("{\"maxRecords\": 100}")
                .post("/v1/share-groups/" + group + "/topics/" + topic + "/lease")
                .then().statusCode(200).extract().jsonPath().getList("records.value", Integer.class);
    }

    private KafkaProducer<String, String> transactionalProducer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, KafkaListenerTest.unique("shrc-tx"));
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private KafkaShareConsumer<String, String> shareConsumer(String group) {
        return KafkaClients.shareConsumer(listener.port(), group, "implicit", Map.of());
    }

    /** Polls until {@code n} records arrived (or {@link #PATIENCE} passed); the values. */
    private static List<String> poll(KafkaShareConsumer<String, String> c, int n) {
        List<String> out = new ArrayList<>();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            c.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
        }
        return out;
    }
}
