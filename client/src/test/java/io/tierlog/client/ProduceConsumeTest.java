package io.tierlog.client;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Producer and Consumer against the packaged service over real sockets: round trips, partitioning, seeking. */
@Tag("slow")
class ProduceConsumeTest {
    static TestService service;
    static TierlogClient client;

    @BeforeAll
    static void start() throws Exception {
        service = TestService.shared();
        client = service.adminClient();
    }

    @Test
    void everyRecordComesBackOnceInOrderWithKeysOnKafkasPartitionsInEveryCodec() throws Exception {
        for (Compression compression : Compression.values()) {
            String topic = TestService.uniqueName("roundtrip");
            client.admin().createTopic(topic, 4, null);
            int n = 5_000;
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            try (Producer producer = client.producer(ProducerConfig.defaults().withCompression(compression)
                    .withBatchBytes(64 * 1024))) {
                for (int i = 0; i < n; i++) {
                    String key = i % 3 == 0 ? null : "key-" + (i % 50);
                    sent.add(producer.send(new ProducerRecord(topic, null, key == null ? null : utf8(key),
                            utf8(value(i)), Map.of("i", utf8(Integer.toString(i))), null)));
                }
                producer.flush();
                assertThat(sent).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
            }
            for (int i = 0; i < n; i++) {
                if (i % 3 != 0) {
                    assertThat(sent.get(i).join().partition()).isEqualTo(
                            KafkaPartitioner.partitionForKey(utf8("key-" + (i % 50)), 4));
                }
            }
            Map<Integer, List<ConsumerRecord>> read = readAll(client, topic, 4, n, true);
            Map<String, RecordMetadata> where = new HashMap<>();
            for (int i = 0; i < n; i++) {
                where.put(value(i), sent.get(i).join());
            }
            // The service decompresses the batches to answer JSON fetches: the same records either way.
            Map<Integer, List<ConsumerRecord>> asJson = readAll(client, topic, 4, n, false);
            for (var e : read.entrySet()) {
                assertThat(asJson.get(e.getKey())).as("%s partition %d as JSON", compression, e.getKey())
                        .extracting(ConsumerRecord::valueAsString)
                        .containsExactlyElementsOf(e.getValue().stream().map(ConsumerRecord::valueAsString).toList());
            }
            int total = 0;
            for (var e : read.entrySet()) {
                long expect = 0;
                int lastI = -1;
                for (ConsumerRecord r : e.getValue()) {
                    assertThat(r.offset()).isEqualTo(expect++);
                    RecordMetadata m = where.get(r.valueAsString());
                    assertThat(m.partition()).isEqualTo(e.getKey());
                    assertThat(m.offset()).isEqualTo(r.offset());
                    int i = Integer.parseInt(new String(r.headers().get("i"), StandardCharsets.UTF_8));
                    assertThat(i).as("send order kept within a partition").isGreaterThan(lastI);
                    lastI = i;
                    total++;
                }
            }
            assertThat(total).isEqualTo(n);
        }
    }

    @Test
    void jsonFetchesReadTheSameAsRecordBatchesAndSeekGoesToOffsetsAndTimestamps() throws Exception {
        String topic = TestService.uniqueName("seek");
        client.admin().createTopic(topic, 1, null);
        try (Producer producer = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord(topic, 0, null, utf8("{\"n\":" + i + "}"), null, 10_000L + i));
            }
            producer.flush();
        }
        Map<Integer, List<ConsumerRecord>> json = readAll(client, topic, 1, 100, false);
        Map<Integer, List<ConsumerRecord>> batches = readAll(client, topic, 1, 100, true);
        assertThat(json.get(0)).extracting(ConsumerRecord::valueAsString)
                .containsExactlyElementsOf(batches.get(0).stream().map(ConsumerRecord::valueAsString).toList());
        assertThat(json.get(0)).extracting(ConsumerRecord::timestamp)
                .containsExactlyElementsOf(batches.get(0).stream().map(ConsumerRecord::timestamp).toList());

        TopicPartition tp = new TopicPartition(topic, 0);
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 42);
            assertThat(consumer.poll(Duration.ofSeconds(10)).get(0).offset()).isEqualTo(42);
            consumer.seekToTimestamp(tp, 10_070L);
            assertThat(consumer.poll(Duration.ofSeconds(10)).get(0).valueAsString()).isEqualTo("{\"n\":70}");
            consumer.seekToEnd(List.of(tp));
            assertThat(consumer.position(tp)).isEqualTo(100);
            assertThat(consumer.poll(Duration.ofMillis(200))).isEmpty();
        }
    }

    @Test
    void aLongPollAnswersAsSoonAsARecordArrives() throws Exception {
        String topic = TestService.uniqueName("longpoll");
        client.admin().createTopic(topic, 1, null);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults()); Producer producer =
                client.producer(ProducerConfig.defaults())) {
            consumer.assign(List.of(tp));
            assertThat(consumer.poll(Duration.ofMillis(100))).isEmpty();
            CompletableFuture<List<ConsumerRecord>> polled = CompletableFuture.supplyAsync(
                    () -> consumer.poll(Duration.ofSeconds(20)));
            producer.send(ProducerRecord.of(topic, null, "late")).get();
            long start = System.nanoTime();
            assertThat(polled.get()).extracting(ConsumerRecord::valueAsString).containsExactly("late");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void pollReturnsWithTheNextFetchAlreadyInFlight() throws Exception {
        String topic = TestService.uniqueName("prefetch");
        client.admin().createTopic(topic, 1, null);
        try (Producer producer = client.producer(ProducerConfig.defaults())) {
            for (int i = 0; i < 1_500; i++) {
                producer.send(ProducerRecord.of(topic, null, "v" + i));
                if (i % 300 == 299) {
                    producer.flush(); // stored batches of 300 records: a fetch of 500 ends inside the buffer's reach
                }
            }
            producer.flush();
        }
        List<String> got = new ArrayList<>();
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withMaxPollRecords(500))) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            while (got.size() < 1_500) {
                List<ConsumerRecord> batch = consumer.poll(Duration.ofSeconds(10));
                assertThat(batch).as("records within 10 s after %d", got.size()).isNotEmpty();
                batch.forEach(r -> got.add(r.valueAsString()));
                // Whatever is still buffered, the next fetch runs (or has answered) while the caller processes: a
                // consumer that fetched only when its buffer ran dry would sit idle here once its fetch chain ended.
                assertThat(consumer.fetchesInFlight()).as("fetches in flight after a poll, %d records in (%d buffered)",
                        got.size(), consumer.bufferedRecords()).isEqualTo(1);
            }
        }
        assertThat(got).hasSize(1_500).first().isEqualTo("v0");
        assertThat(got.get(1_499)).isEqualTo("v1499");
    }

    @Test
    void sendingToAnUnknownTopicFailsTheFutureWithTheProblem() {
        try (Producer producer = client.producer(ProducerConfig.defaults())) {
            CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of("no-such-topic-x", "k", "v"));
            assertThatThrownBy(f::join).cause().isInstanceOfSatisfying(ProblemException.class,
                    p -> assertThat(p.type()).isEqualTo("unknown-topic"));
            CompletableFuture<RecordMetadata> g = producer.send(new ProducerRecord("no-such-topic-x", 0, null,
                    utf8("v"), null, null));
            assertThatThrownBy(g::join).cause().isInstanceOfSatisfying(ProblemException.class,
                    p -> assertThat(p.type()).isEqualTo("unknown-topic"));
        }
    }

    @Test
    void aFullBufferFailsOrBlocksAsTheCallerChose() throws Exception {
        String topic = TestService.uniqueName("buffer");
        client.admin().createTopic(topic, 1, null);
        // A linger far longer than the test: nothing is sent, so the buffer only fills.
        ProducerConfig config = ProducerConfig.defaults().withLinger(Duration.ofHours(1)).withBatchBytes(4096);
        try (Producer failing = client.producer(config.withBuffer(4096, ProducerConfig.WhenFull.FAIL))) {
            failing.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null));
            assertThatThrownBy(() -> failing.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null)))
                    .isInstanceOf(BufferFullException.class);
        }
        try (Producer blocking = client.producer(config.withBuffer(4096, ProducerConfig.WhenFull.BLOCK)
                .withMaxBlock(Duration.ofMillis(300)))) {
            blocking.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null));
            long start = System.nanoTime();
            assertThatThrownBy(() -> blocking.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null)))
                    .isInstanceOf(BufferFullException.class).hasMessageContaining("maxBlock");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        }
        try (Producer blocking = client.producer(config.withBuffer(4096, ProducerConfig.WhenFull.BLOCK)
                .withMaxBlock(Duration.ofSeconds(60)))) {
            blocking.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null));
            CompletableFuture<CompletableFuture<RecordMetadata>> appended = CompletableFuture.supplyAsync(() ->
                    blocking.send(new ProducerRecord(topic, 0, null, new byte[3000], null, null)));
            assertThat(appended).as("blocked: nothing was sent, so no space was freed").isNotDone();
            blocking.flush(); // sends the lingering batch; its acknowledgement frees the space
            CompletableFuture<RecordMetadata> second = appended.get(30, java.util.concurrent.TimeUnit.SECONDS);
            blocking.flush();
            assertThat(second.get().offset()).as("after the records of the three producers before").isEqualTo(3);
        }
    }

    /** Mostly short values; every 1000th one of 150 kB, compressed across several LZ4 blocks and snappy chunks. */
    private static String value(int i) {
        return "value-" + i + (i % 1000 == 7 ? "-" + "abc".repeat(50_000) : "");
    }

    /** Reads {@code n} records of every partition from the start with an assigned consumer. */
    static Map<Integer, List<ConsumerRecord>> readAll(TierlogClient client, String topic, int partitions, int n,
                                                      boolean recordBatches) {
        Map<Integer, List<ConsumerRecord>> out = new TreeMap<>();
        try (Consumer consumer = client.consumer(ConsumerConfig.defaults().withRecordBatches(recordBatches))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
                out.put(p, new ArrayList<>());
            }
            consumer.assign(tps);
            int got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got < n && System.nanoTime() < deadline) {
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(2))) {
                    out.get(r.partition()).add(r);
                    got++;
                }
            }
            assertThat(consumer.poll(Duration.ofMillis(100))).as("nothing beyond the %d records", n).isEmpty();
        }
        return out;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
