package io.tierlog.ingest;

import io.tierlog.http.JsonProduce;
import io.tierlog.log.HotLog;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.internals.ProducerIdAndEpoch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Idempotent produce with Kafka's numbering: a sequence counts the records a producer sent to a partition, a request
 * spanning several partitions carries one sequence per partition, and every partition is checked before anything
 * is appended (shared contract, "Produce"; issue 19, defect 1).
 */
class KafkaNumberedIdempotenceTest {
    private static final String TOPIC = "orders";

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private IngestService service;

    @BeforeEach
    void start() {
        service = newService();
        service.topics().create(TOPIC, 3, TopicConfig.DEFAULTS);
    }

    @AfterEach
    void stop() {
        service.close();
    }

    private IngestService newService() {
        return new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 1 << 20), clock, 0);
    }

    /** The scenario: once a request skipped a partition, every later request touching it used to get 409. */
    @Test
    void aRequestThatSkipsAPartitionDoesNotBlockTheLaterOnes() {
        ProduceResult first = produce(body("w", 0, Map.of(0, 0, 1, 0), rec(0, "a"), rec(0, "b"), rec(1, "c")));
        assertThat(first.offsets()).containsExactly(at(0, 0), at(0, 1), at(1, 0));

        // Only partition 0: its sequence continues at 2 (two records took 0 and 1).
        assertThat(produce(body("w", 0, 2, rec(0, "d"))).offsets()).containsExactly(at(0, 2));

        // Partition 1 continues at 1, partition 0 at 3.
        ProduceResult third = produce(body("w", 0, Map.of(0, 3, 1, 1), rec(1, "e"), rec(0, "f"), rec(1, "g")));
        assertThat(third.duplicate()).isFalse();
        assertThat(third.offsets()).containsExactly(at(1, 1), at(0, 3), at(1, 2));

        ProduceResult retry = produce(body("w", 0, Map.of(0, 3, 1, 1), rec(1, "e"), rec(0, "f"), rec(1, "g")));
        assertThat(retry).isEqualTo(new ProduceResult(third.offsets(), true));

        assertThat(produce(body("w", 0, Map.of(0, 4, 1, 3), rec(0, "h"), rec(1, "i"))).offsets())
                .containsExactly(at(0, 4), at(1, 3));
        assertThat(values(0)).containsExactly("a", "b", "d", "f", "h");
        assertThat(values(1)).containsExactly("c", "e", "g", "i");
    }

    @Test
    void aConflictInOnePartitionAppendsNothingInAny() {
        produce(body("writer-7", 0, Map.of(0, 0, 1, 0), rec(0, "a"), rec(1, "b")));

        TierlogException gap = fail(body("writer-7", 0, Map.of(0, 1, 1, 5), rec(0, "c"), rec(1, "d")));
        assertThat(gap.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(gap.extra()).containsEntry("partition", 1).containsEntry("expectedSequence", 1);
        // The detail names the producer id the client sent, not the 64-bit id derived from it.
        assertThat(gap.getMessage()).contains("'writer-7'")
                .doesNotContain(String.valueOf(new ProducerRef("writer-7", 0, 0).numericId()));
        assertThat(values(0)).as("partition 0's sequence was fine, but nothing is appended").containsExactly("a");

        // A newer epoch in partition 1 fences the old epoch in both.
        produce(body("writer-7", 1, 0, rec(1, "new epoch")));
        TierlogException fenced = fail(body("writer-7", 0, Map.of(0, 1, 1, 1), rec(0, "c"), rec(1, "d")));
        assertThat(fenced.type()).isEqualTo(ErrorType.FENCED_PRODUCER);
        assertThat(fenced.getMessage()).contains("'writer-7'");
        assertThat(values(0)).containsExactly("a");
        assertThat(values(1)).containsExactly("b", "new epoch");
    }

    /**
     * A process that wrote the request's partition-0 batch and died before partition 1 (its client got no answer):
     * the retry, received by another process, appends only partition 1's records and answers partition 0's
     * original offsets.
     */
    @Test
    void aRetryAfterACrashBetweenPartitionsAppendsOnlyTheMissingOnes() {
        produce(body("other", 0, 0, rec(0, "earlier")));
        try (IngestService crashed = newService()) {
            // What the crashed process had written: partition 0's share of the request, with its sequence.
            JsonProduce.produce(crashed, TOPIC, bytes(body("c", 0, 0, rec(0, "a"), rec(0, "b"))));
        }
        String request = body("c", 0, Map.of(0, 0, 1, 0), rec(0, "a"), rec(1, "x"), rec(0, "b"));

        ProduceResult retry = produce(request);
        assertThat(retry.duplicate()).as("partition 1 was appended now").isFalse();
        assertThat(retry.offsets()).containsExactly(at(0, 1), at(1, 0), at(0, 2));
        assertThat(values(0)).containsExactly("earlier", "a", "b");
        assertThat(values(1)).containsExactly("x");

        // Once complete, the request is a duplicate everywhere, in this process and in a new one.
        assertThat(produce(request)).isEqualTo(new ProduceResult(retry.offsets(), true));
        service.close();
        service = newService();
        assertThat(produce(request)).isEqualTo(new ProduceResult(retry.offsets(), true));
        assertThat(values(0)).hasSize(3);
        assertThat(values(1)).hasSize(1);
    }

    @Test
    void sequencesMustNameExactlyThePartitionsTouched() {
        TierlogException one = fail(body("p", 0, 0, rec(0, "a"), rec(1, "b")));
        assertThat(one.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertThat(one.extra()).containsEntry("field", "producer.sequences");
        assertThat(one.getMessage()).contains("producer.sequences").contains("[0, 1]");

        TierlogException missing = fail(body("p", 0, Map.of(0, 0), rec(0, "a"), rec(1, "b")));
        assertThat(missing.extra()).containsEntry("field", "producer.sequences");
        assertThat(missing.getMessage()).contains("partition 1");

        TierlogException extra = fail(body("p", 0, Map.of(0, 0, 1, 0, 2, 0), rec(0, "a"), rec(1, "b")));
        assertThat(extra.extra()).containsEntry("field", "producer.sequences");
        assertThat(extra.getMessage()).contains("partition 2");

        for (int p = 0; p < 3; p++) {
            assertThat(new HotLog(data).reader(new TopicPartition(TOPIC, p)).end(null).offset())
                    .as("end of partition %d", p).isZero();
        }
        // sequences with a single partition is fine too.
        assertThat(produce(body("p", 0, Map.of(2, 0), rec(2, "a"))).offsets()).containsExactly(at(2, 0));
    }

    @Test
    void aRetryOfAnyOfTheLastFiveBatchesAnswersItsOriginalOffsets() {
        List<String> requests = new ArrayList<>();
        List<ProduceResult> results = new ArrayList<>();
        int sequence = 0;
        for (int n : new int[]{2, 1, 3, 1, 2, 4}) {
            String[] values = new String[n];
            for (int i = 0; i < n; i++) {
                values[i] = "s" + (sequence + i);
            }
            String request = body("p", 0, sequence, recs(0, values));
            requests.add(request);
            results.add(produce(request));
            sequence += n;
        }
        for (int i = 1; i < requests.size(); i++) {
            assertThat(produce(requests.get(i))).as("retry of request %d", i)
                    .isEqualTo(new ProduceResult(results.get(i).offsets(), true));
        }
        // The oldest batch is no longer retained (Kafka keeps five): its retry is out of order, not re-appended.
        assertThat(fail(requests.get(0)).type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(values(0)).hasSize(13);
    }

    @Test
    void sequencesWrapAfterIntegerMaxValueAsKafkasDo() {
        // A producer the partition does not know may start anywhere; two records take MAX-1 and MAX.
        ProduceResult high = produce(body("w", 0, Integer.MAX_VALUE - 1, rec(0, "a"), rec(0, "b")));
        assertThat(fail(body("w", 0, Integer.MAX_VALUE, rec(0, "c"))).extra()).containsEntry("expectedSequence", 0);
        assertThat(produce(body("w", 0, 0, rec(0, "c"))).offsets()).containsExactly(at(0, 2));
        assertThat(produce(body("w", 0, Integer.MAX_VALUE - 1, rec(0, "a"), rec(0, "b"))))
                .isEqualTo(new ProduceResult(high.offsets(), true));
        assertThat(produce(body("w", 0, 1, rec(0, "d"), rec(0, "e"))).offsets()).containsExactly(at(0, 3), at(0, 4));
    }

    /**
     * Batches built by kafka-clients' own {@link ProducerBatch}, numbered as its idempotent producer numbers them
     * ({@code TransactionManager}: the next batch's base sequence is the previous one's plus its record count),
     * including the sender's resend of an in-flight batch.
     */
    @Test
    void kafkaProducerBatchesNumberedByRecordCountAreAcceptedAndTheirResendsDeduplicated() {
        ProducerIdAndEpoch producer = new ProducerIdAndEpoch(4242L, (short) 0);
        int sequence = 0;
        List<ByteBuffer> sent = new ArrayList<>();
        List<BatchProduceResult> answers = new ArrayList<>();
        long next = 0;
        for (int n : new int[]{1, 3, 2, 5, 1}) {
            ProducerBatch batch = producerBatch(n, "b" + sent.size());
            batch.setProducerState(producer, sequence, false);
            batch.close();
            assertThat(batch.lastSequence()).isEqualTo(sequence + n - 1);
            ByteBuffer body = batch.records().buffer();
            sent.add(body.duplicate());
            BatchProduceResult answer = service.produceBatches(TOPIC, 1, body);
            assertThat(answer).isEqualTo(new BatchProduceResult(1, next, n, false));
            answers.add(answer);
            next += n;
            sequence = batch.lastSequence() + 1;
        }
        // The sender resends a batch whose answer it did not get: the same bytes, the original offsets.
        for (int i = 0; i < sent.size(); i++) {
            assertThat(service.produceBatches(TOPIC, 1, sent.get(i).duplicate().rewind()))
                    .isEqualTo(new BatchProduceResult(1, answers.get(i).baseOffset(), answers.get(i).recordCount(), true));
        }
        // A batch that skips a sequence is out of order and names the sequence expected.
        ProducerBatch gap = producerBatch(1, "gap");
        gap.setProducerState(producer, sequence + 1, false);
        gap.close();
        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> service.produceBatches(TOPIC, 1, gap.records().buffer()));
        assertThat(e.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(e.extra()).containsEntry("expectedSequence", sequence);
        assertThat(read(1)).hasSize(12);
        // The JSON path continues the same producer's numbering ("4242" is producerId 4242).
        assertThat(produce(body("4242", 0, sequence, rec(1, "json"))).offsets()).containsExactly(at(1, 12));
    }

    private ProducerBatch producerBatch(int records, String prefix) {
        ProducerBatch batch = new ProducerBatch(new org.apache.kafka.common.TopicPartition(TOPIC, 1),
                KafkaBatches.builder(), clock.millis());
        for (int i = 0; i < records; i++) {
            assertThat(batch.tryAppend(KafkaBatches.T0 + i, null, bytes(prefix + "-" + i), new Header[0], null,
                    clock.millis())).isNotNull();
        }
        return batch;
    }

    private record Rec(int partition, String value) {
    }

    private static Rec rec(int partition, String value) {
        return new Rec(partition, value);
    }

    private static Rec[] recs(int partition, String... values) {
        Rec[] out = new Rec[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = rec(partition, values[i]);
        }
        return out;
    }

    private static String body(String id, int epoch, int sequence, Rec... records) {
        return records(records) + ", \"producer\": {\"id\": \"" + id + "\", \"epoch\": " + epoch + ", \"sequence\": "
                + sequence + "}}";
    }

    private static String body(String id, int epoch, Map<Integer, Integer> sequences, Rec... records) {
        StringJoiner s = new StringJoiner(", ", "{", "}");
        sequences.forEach((p, seq) -> s.add("\"" + p + "\": " + seq));
        return records(records) + ", \"producer\": {\"id\": \"" + id + "\", \"epoch\": " + epoch + ", \"sequences\": "
                + s + "}}";
    }

    private static String records(Rec... records) {
        StringJoiner out = new StringJoiner(", ", "{\"records\": [", "]");
        for (Rec r : records) {
            out.add("{\"value\": \"" + r.value() + "\", \"partition\": " + r.partition() + "}");
        }
        return out.toString();
    }

    private static PartitionOffset at(int partition, long offset) {
        return new PartitionOffset(partition, offset);
    }

    private ProduceResult produce(String body) {
        return JsonProduce.produce(service, TOPIC, bytes(body));
    }

    private TierlogException fail(String body) {
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> produce(body));
        assertThat(e).as("produce %s", body).isNotNull();
        return e;
    }

    private List<LogRecord> read(int partition) {
        return new HotLog(data).reader(new TopicPartition(TOPIC, partition)).read(0, null, 1000, 1 << 20).records();
    }

    /** Values as sent: JSON strings are stored as their JSON text, so the quotes are dropped here. */
    private List<String> values(int partition) {
        return read(partition).stream().map(r -> {
            String json = new String(r.value(), StandardCharsets.UTF_8);
            return json.startsWith("\"") ? json.substring(1, json.length() - 1) : json;
        }).toList();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
