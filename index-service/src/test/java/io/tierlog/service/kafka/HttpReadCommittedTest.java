package io.tierlog.service.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.tierlog.service.http.RecordBatchesMedia;
import io.tierlog.tiering.TieredStorage;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

/**
 * HTTP readers of a partition that Kafka transactional producers write: {@code isolation=read_committed} on fetch
 * (JSON and record batches), stream and the offset lookup reads up to the last stable offset and never a record of an
 * aborted transaction, hot or cold; and at any isolation a reader whose offset holds only markers moves past them
 * rather than asking for the same offset again.
 */
@QuarkusTest
class HttpReadCommittedTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    KafkaListener listener;
    @Inject
    TieredStorage tiered;

    @TestHTTPResource("/")
    URL root;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void readCommittedFetchesSkipAbortsAndEndAtTheOpenTransaction() throws Exception {
        String topic = topic("rc-fetch", Map.of());
        try (KafkaProducer<String, String> txn = transactional();
             KafkaProducer<String, String> plain = KafkaClients.producer(listener.port(), "all", "none")) {
            txn.initTransactions();
            committed(txn, topic, "a0", "a1");                           // 0-1, marker 2
            txn.beginTransaction();                                      // 3-5 aborted, marker 6
            send(txn, topic, "x0", "x1", "x2");
            txn.abortTransaction();
            committed(txn, topic, "c0");                                 // 7, marker 8
            txn.beginTransaction();
            send(txn, topic, "t0");                                      // 9: open
            plain.send(new ProducerRecord<>(topic, 0, null, "after")).get();   // 10

            JsonPath committed = fetch(topic, "offset=0&maxRecords=100&isolation=read_committed");
            assertThat(committed.getList("records", Map.class).stream().map(HttpReadCommittedTest::value).toList()).containsExactly("a0", "a1", "c0");
            assertThat(committed.getLong("nextOffset")).as("ends at the open transaction").isEqualTo(9);
            assertThat(committed.getLong("lastStableOffset")).isEqualTo(9);
            assertThat(committed.getLong("highWatermark")).isEqualTo(11);
            JsonPath uncommitted = fetch(topic, "offset=0&maxRecords=100");
            assertThat(uncommitted.getList("records", Map.class).stream().map(HttpReadCommittedTest::value).toList())
                    .containsExactly("a0", "a1", "x0", "x1", "x2", "c0", "t0", "after");
            assertThat(uncommitted.getMap("$")).doesNotContainKey("lastStableOffset");
            // Paged one record at a time, a reader passes the aborted records and markers without a gap in between.
            List<String> paged = new ArrayList<>();
            long next = 0;
            for (int i = 0; i < 10 && next < 9; i++) {
                JsonPath page = fetch(topic, "offset=" + next + "&maxRecords=1&isolation=read_committed");
                paged.addAll(page.getList("records", Map.class).stream().map(HttpReadCommittedTest::value).toList());
                assertThat(page.getLong("nextOffset")).as("progress from %d", next).isGreaterThan(next);
                next = page.getLong("nextOffset");
            }
            assertThat(paged).containsExactly("a0", "a1", "c0");
            assertThat(given().get("/v1/topics/" + topic + "/partitions/0/offsets?at=latest&isolation=read_committed")
                    .then().statusCode(200).extract().jsonPath().getLong("offset")).isEqualTo(9);
            assertThat(given().get("/v1/topics/" + topic + "/partitions/0/offsets?timestamp=0&isolation=read_committed")
                    .then().statusCode(200).extract().jsonPath().getLong("offset")).isZero();

            // A long-poll held back by the open transaction answers once it commits, with what it held back.
            CompletableFuture<HttpResponse<String>> poll = http.sendAsync(HttpRequest.newBuilder(
                    uri(topic, "/records?offset=9&waitMs=20000&isolation=read_committed")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(poll).as("waits while the transaction is open").isNotCompleted();
            txn.commitTransaction();                                     // marker 11
            JsonNode answered = JSON.readTree(poll.get(15, TimeUnit.SECONDS).body());
            assertThat(values(answered)).containsExactly("t0", "after");
            assertThat(answered.get("nextOffset").asLong()).isEqualTo(12);
        }
    }

    @Test
    void readCommittedRecordBatchesLeaveOutAbortedBatches() throws Exception {
        String topic = topic("rc-batches", Map.of());
        try (KafkaProducer<String, String> txn = transactional()) {
            txn.initTransactions();
            committed(txn, topic, "a0");
            txn.beginTransaction();
            send(txn, topic, "x0");
            txn.abortTransaction();
            committed(txn, topic, "c0");
        }
        HttpResponse<byte[]> committed = batches(topic, "offset=0&isolation=read_committed");
        assertThat(committed.statusCode()).isEqualTo(200);
        assertThat(dataValues(committed.body())).containsExactly("a0", "c0");
        assertThat(committed.headers().firstValue(RecordBatchesMedia.LAST_STABLE_OFFSET)).hasValue("6");
        assertThat(committed.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET)).hasValue("6");
        HttpResponse<byte[]> uncommitted = batches(topic, "offset=0");
        assertThat(dataValues(uncommitted.body())).containsExactly("a0", "x0", "c0");
        assertThat(uncommitted.headers().firstValue(RecordBatchesMedia.LAST_STABLE_OFFSET)).isEmpty();
        // All that lies at offset 2 is aborted or a marker: an empty body that moves the reader past it.
        HttpResponse<byte[]> aborted = batches(topic, "offset=2&maxRecords=1&isolation=read_committed&waitMs=20000");
        assertThat(dataValues(aborted.body())).isEmpty();
        assertThat(Long.parseLong(aborted.headers().firstValue(RecordBatchesMedia.NEXT_OFFSET).orElseThrow()))
                .isGreaterThan(2);
    }

    @Test
    void aReaderAtAMarkerMovesPastItAtEitherIsolation() throws Exception {
        String topic = topic("rc-marker", Map.of());
        try (KafkaProducer<String, String> txn = transactional()) {
            txn.initTransactions();
            committed(txn, topic, "a0");                                 // 0, marker 1
        }
        for (String isolation : List.of("", "&isolation=read_committed")) {
            // A long-poll at the marker answers at once: there is a record past it (the marker) and nothing to wait for.
            JsonPath atMarker = fetch(topic, "offset=1&waitMs=20000" + isolation);
            assertThat(atMarker.getList("records")).isEmpty();
            assertThat(atMarker.getLong("nextOffset")).as(isolation).isEqualTo(2);
            assertThat(atMarker.getLong("highWatermark")).isEqualTo(2);
        }
    }

    @Test
    void aReadCommittedStreamSkipsAbortsAndTailsCommits() throws Exception {
        String topic = topic("rc-stream", Map.of());
        try (KafkaProducer<String, String> txn = transactional()) {
            txn.initTransactions();
            committed(txn, topic, "a0");
            txn.beginTransaction();
            send(txn, topic, "x0", "x1");
            txn.abortTransaction();
            txn.beginTransaction();
            send(txn, topic, "t0");
            HttpResponse<Stream<String>> r = http.send(HttpRequest.newBuilder(
                    uri(topic, "/stream?offset=earliest&isolation=read_committed"))
                    .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofLines());
            assertThat(r.statusCode()).isEqualTo(200);
            List<String> seen = new ArrayList<>();
            try (Stream<String> lines = r.body()) {
                Iterator<String> it = lines.iterator();
                while (seen.size() < 2 && it.hasNext()) {
                    String line = it.next();
                    if (line.startsWith("data: ")) {
                        seen.add(value(JSON.convertValue(JSON.readTree(line.substring(6)), Map.class)));
                        if (seen.size() == 1) {
                            txn.commitTransaction();                     // t0 is held back until now
                        }
                    }
                }
            }
            assertThat(seen).containsExactly("a0", "t0");
        }
    }

    @Test
    void abortedRecordsStayHiddenFromHttpReadersOnceCold() throws Exception {
        String topic = topic("rc-cold", Map.of("segment.bytes", "4096", "local.retention.bytes", "0"));
        List<String> committed = new ArrayList<>();
        try (KafkaProducer<String, String> txn = transactional()) {
            txn.initTransactions();
            for (int t = 0; t < 16; t++) {
                txn.beginTransaction();
                for (int i = 0; i < 4; i++) {
                    String value = "t" + t + "-" + i + "-" + "x".repeat(150);
                    txn.send(new ProducerRecord<>(topic, 0, null, value)).get();
                    if (t % 2 == 0) {
                        committed.add(value);
                    }
                }
                if (t % 2 == 0) {
                    txn.commitTransaction();
                } else {
                    txn.abortTransaction();
                }
            }
        }
        tiered.runTieringPass();
        tiered.runRetentionPass();
        JsonPath state = given().get("/v1/topics/" + topic).then().statusCode(200).extract().jsonPath();
        assertThat(state.getLong("partitionStates[0].hotStartOffset")).as(state.prettify()).isGreaterThan(40);
        List<String> read = new ArrayList<>();
        long next = 0;
        for (int i = 0; i < 200 && read.size() < committed.size(); i++) {
            JsonPath page = fetch(topic, "offset=" + next + "&maxRecords=5&isolation=read_committed");
            read.addAll(page.getList("records", Map.class).stream().map(HttpReadCommittedTest::value).toList());
            next = page.getLong("nextOffset");
        }
        assertThat(read).containsExactlyElementsOf(committed);
        HttpResponse<byte[]> coldBatches = batches(topic, "offset=0&maxBytes=100000000&isolation=read_committed");
        assertThat(dataValues(coldBatches.body())).isSubsetOf(committed).isNotEmpty();
    }

    @Test
    void anUnknownIsolationIsABadRequestNamingTheField() {
        String topic = topic("rc-bad", Map.of());
        for (String path : List.of("/records?offset=0&isolation=serializable", "/offsets?at=latest&isolation=x",
                "/stream?isolation=READ_COMMITTED")) {
            badIsolation(given().get("/v1/topics/" + topic + "/partitions/0" + path));
        }
        badIsolation(given().header("Accept", RecordBatchesMedia.TYPE)
                .get("/v1/topics/" + topic + "/partitions/0/records?offset=0&isolation=1"));
    }

    private static void badIsolation(io.restassured.response.Response r) {
        r.then().statusCode(400).contentType("application/problem+json").body("field", equalTo("isolation"))
                .body("detail", containsString("read_committed"));
    }

    private String topic(String prefix, Map<String, String> configs) {
        String topic = KafkaListenerTest.unique(prefix);
        try (Admin admin = KafkaClients.admin(listener.port())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return topic;
    }

    private KafkaProducer<String, String> transactional() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaClients.bootstrap(listener.port()));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, KafkaListenerTest.unique("rc"));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static void committed(KafkaProducer<String, String> txn, String topic, String... values) throws Exception {
        txn.beginTransaction();
        send(txn, topic, values);
        txn.commitTransaction();
    }

    private static void send(KafkaProducer<String, String> txn, String topic, String... values) throws Exception {
        for (String v : values) {
            txn.send(new ProducerRecord<>(topic, 0, null, v)).get();
        }
    }

    private static JsonPath fetch(String topic, String query) {
        return given().get("/v1/topics/" + topic + "/partitions/0/records?" + query)
                .then().statusCode(200).extract().jsonPath();
    }

    private HttpResponse<byte[]> batches(String topic, String query) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(topic, "/records?" + query)).header("Accept", RecordBatchesMedia.TYPE)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private URI uri(String topic, String rest) {
        return URI.create(root.toString()).resolve("/v1/topics/" + topic + "/partitions/0" + rest);
    }

    private static List<String> values(JsonNode body) {
        List<String> out = new ArrayList<>();
        body.get("records").forEach(r -> out.add(value(JSON.convertValue(r, Map.class))));
        return out;
    }

    /** A record's value as the producer sent it: the test's values are not JSON text, so they come as base64. */
    private static String value(Map<?, ?> record) {
        assertThat(record.get("valueEncoding")).isEqualTo("base64");
        return new String(java.util.Base64.getDecoder().decode((String) record.get("value")), StandardCharsets.UTF_8);
    }

    /** The values of the data (not control) batches in a record-batches body. */
    private static List<String> dataValues(byte[] body) {
        List<String> out = new ArrayList<>();
        for (RecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(body)).batches()) {
            if (batch.isControlBatch()) {
                continue;
            }
            for (Record r : batch) {
                out.add(StandardCharsets.UTF_8.decode(r.value()).toString());
            }
        }
        return out;
    }
}
