package io.tierlog.ingest;

import io.tierlog.http.ProblemType;
import io.tierlog.http.JsonProduce;
import io.tierlog.testkit.ManualClock;
import io.tierlog.log.HotLog;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class IngestServiceTest {
    private static final int MAX_REQUEST_BYTES = 4096;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private IngestService service;

    @BeforeEach
    void start() {
        service = newService();
        service.topics().create("orders", 3, TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, 100)));
    }

    @AfterEach
    void stop() {
        service.close();
    }

    private IngestService newService() {
        return new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), MAX_REQUEST_BYTES),
                clock, 0);
    }

    @Test
    void answersOffsetsInRequestOrderWithOneDenseBatchPerPartition() {
        ProduceResult r = produce("{\"records\": [{\"value\": 1, \"partition\": 1}, {\"value\": 2, \"partition\": 0},"
                + " {\"value\": 3, \"partition\": 1}, {\"key\": \"user-42\", \"value\": 4}]}");
        int keyed = Partitioner.forKey(bytes("user-42"), 3);
        assertThat(r.duplicate()).isFalse();
        assertThat(r.offsets()).extracting(PartitionOffset::partition).containsExactly(1, 0, 1, keyed);
        assertThat(r.offsets().subList(0, 3)).extracting(PartitionOffset::offset).containsExactly(0L, 0L, 1L);
        assertThat(values(1)).startsWith("1", "3");
        assertThat(new String(JsonProduce.answer(r), StandardCharsets.UTF_8))
                .startsWith("{\"offsets\":[{\"partition\":1,\"offset\":0},{\"partition\":0,\"offset\":0},");
        // The service stamps records without a timestamp with its clock.
        assertThat(read(0).get(0).timestamp()).isEqualTo(clock.millis());
    }

    @Test
    void storesTombstonesAsNullValues() {
        produce("{\"records\": [{\"key\": \"k\", \"value\": null, \"partition\": 2}]}");
        assertThat(read(2)).singleElement().satisfies(rec -> {
            assertThat(rec.value()).isNull();
            assertThat(new String(rec.key(), StandardCharsets.UTF_8)).isEqualTo("k");
        });
    }

    @Test
    void requestOverMaxRequestBytesIs413AndAppendsNothing() {
        String body = "{\"records\": [{\"value\": \"" + "x".repeat(MAX_REQUEST_BYTES) + "\", \"partition\": 0}]}";
        TierlogException e = fail(body);
        assertThat(e.type()).isEqualTo(ErrorType.REQUEST_TOO_LARGE);
        assertThat(ProblemType.of(e.type()).status()).isEqualTo(413);
        assertThat(ProblemType.of(e.type()).slug()).isEqualTo("request-too-large");
        assertNothingAppended();
    }

    @Test
    void oneRecordOverMaxMessageBytesIs413AndNothingOfTheRequestIsAppended() {
        String body = "{\"records\": [{\"value\": \"fine\", \"partition\": 0}, {\"value\": \"fine\", \"partition\": 1},"
                + " {\"value\": \"" + "x".repeat(120) + "\", \"partition\": 2}, {\"value\": \"fine\", \"partition\": 0}]}";
        TierlogException e = fail(body);
        assertThat(e.type()).isEqualTo(ErrorType.RECORD_TOO_LARGE);
        assertThat(ProblemType.of(e.type()).status()).isEqualTo(413);
        assertThat(e.extra()).containsEntry("field", "records[2]");
        assertThat(e.getMessage()).contains("records[2]").contains("max.message.bytes");
        assertNothingAppended();
    }

    @Test
    void unknownTopicUnknownPartitionAndInvalidTopicAreRejectedWithNothingAppended() {
        TierlogException unknownTopic = catchThrowableOfType(TierlogException.class,
                () -> JsonProduce.produce(service, "nope", bytes("{\"records\": [{\"value\": 1}]}")));
        assertThat(unknownTopic.type()).isEqualTo(ErrorType.UNKNOWN_TOPIC);
        assertThat(ProblemType.of(unknownTopic.type()).status()).isEqualTo(404);

        TierlogException unknownPartition = fail("{\"records\": [{\"value\": 1, \"partition\": 0},"
                + " {\"value\": 2, \"partition\": 3}]}");
        assertThat(unknownPartition.type()).isEqualTo(ErrorType.UNKNOWN_PARTITION);
        assertThat(ProblemType.of(unknownPartition.type()).status()).isEqualTo(404);
        assertThat(unknownPartition.extra()).containsEntry("partition", 3);

        TierlogException invalid = catchThrowableOfType(TierlogException.class,
                () -> JsonProduce.produce(service, "../etc", bytes("{\"records\": [{\"value\": 1}]}")));
        assertThat(invalid.type()).isEqualTo(ErrorType.INVALID_TOPIC);

        TierlogException bad = fail("{\"records\": [{\"value\": 1, \"partition\": 0}, {\"partition\": \"x\"}]}");
        assertThat(bad.type()).isEqualTo(ErrorType.BAD_REQUEST);
        assertNothingAppended();
    }

    @Test
    void idempotentProducerDuplicatesGapsAndFencing() {
        ProduceResult first = produce(producerBody("p1", 0, 0, "a", "b"));
        assertThat(first.duplicate()).isFalse();
        List<PartitionOffset> firstOffsets = first.offsets();
        int partition = firstOffsets.get(0).partition();

        ProduceResult retry = produce(producerBody("p1", 0, 0, "a", "b"));
        assertThat(retry.duplicate()).isTrue();
        assertThat(retry.offsets()).isEqualTo(firstOffsets);
        assertThat(values(partition)).containsExactly("\"a\"", "\"b\"");

        // Kafka's numbering: two records took sequences 0 and 1, so the next request starts at 2.
        TierlogException gap = fail(producerBody("p1", 0, 1, "c"));
        assertThat(gap.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(ProblemType.of(gap.type()).status()).isEqualTo(409);
        assertThat(gap.extra()).containsEntry("expectedSequence", 2);
        assertThat(gap.getMessage()).contains("'p1'");
        assertThat(values(partition)).hasSize(2);

        ProduceResult next = produce(producerBody("p1", 0, 2, "c"));
        assertThat(next.duplicate()).isFalse();
        assertThat(next.offsets()).containsExactly(new PartitionOffset(partition, 2));

        // A new epoch starts at sequence 0; the old epoch is then fenced.
        TierlogException notZero = fail(producerBody("p1", 1, 40, "d"));
        assertThat(notZero.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(notZero.extra()).containsEntry("expectedSequence", 0);
        assertThat(produce(producerBody("p1", 1, 0, "d")).offsets()).containsExactly(new PartitionOffset(partition, 3));
        TierlogException fenced = fail(producerBody("p1", 0, 3, "late"));
        assertThat(fenced.type()).isEqualTo(ErrorType.FENCED_PRODUCER);
        assertThat(ProblemType.of(fenced.type()).status()).isEqualTo(409);
        assertThat(fenced.getMessage()).contains("'p1'");
        assertThat(values(partition)).containsExactly("\"a\"", "\"b\"", "\"c\"", "\"d\"");

        // Another producer id has its own sequence space.
        assertThat(produce(producerBody("p2", 0, 7, "e")).duplicate()).isFalse();
    }

    @Test
    void producerStateSurvivesARestart() {
        ProduceResult original = produce(producerBody("p1", 3, 10, "a"));
        produce(producerBody("p1", 3, 11, "b", "c"));
        service.close();
        clock.advance(Duration.ofMinutes(5));

        service = newService();
        ProduceResult retry = produce(producerBody("p1", 3, 11, "b", "c"));
        assertThat(retry.duplicate()).isTrue();
        assertThat(retry.offsets()).extracting(PartitionOffset::offset).containsExactly(1L, 2L);
        assertThat(produce(producerBody("p1", 3, 10, "a")).offsets()).isEqualTo(original.offsets());
        assertThat(fail(producerBody("p1", 3, 14, "x")).type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(fail(producerBody("p1", 2, 13, "x")).type()).isEqualTo(ErrorType.FENCED_PRODUCER);
        assertThat(produce(producerBody("p1", 3, 13, "d")).offsets()).extracting(PartitionOffset::offset)
                .containsExactly(3L);
    }

    @Test
    void aProducerIdleForTheExpirationIsForgottenAndItsRetryAppendedAgain() {
        service.close();
        service = new IngestService(new IngestConfig(data, FsyncPolicy.ALWAYS, Duration.ofSeconds(1), MAX_REQUEST_BYTES,
                Duration.ofMinutes(10)), clock, 0);
        ProduceResult original = produce(producerBody("p1", 0, 0, "a"));
        clock.advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(produce(producerBody("p1", 0, 0, "a"))).isEqualTo(new ProduceResult(original.offsets(), true));

        clock.advance(Duration.ofMillis(1));
        ProduceResult late = produce(producerBody("p1", 0, 0, "a"));
        assertThat(late.duplicate()).isFalse();
        assertThat(late.offsets()).extracting(PartitionOffset::offset).containsExactly(original.offsets().get(0).offset() + 1);
    }

    @Test
    void aTopicCreatedByAnotherProcessIsSeenAtOnce() {
        try (IngestService other = newService()) {
            other.topics().create("late", 1, TopicConfig.DEFAULTS);
        }
        assertThat(JsonProduce.produce(service, "late", bytes("{\"records\": [{\"value\": 1}]}")).offsets())
                .containsExactly(new PartitionOffset(0, 0));
    }

    private static String producerBody(String id, int epoch, int sequence, String... values) {
        StringBuilder records = new StringBuilder();
        for (String v : values) {
            records.append(records.length() == 0 ? "" : ", ").append("{\"value\": \"").append(v).append("\"}");
        }
        return "{\"records\": [" + records + "], \"producer\": {\"id\": \"" + id + "\", \"epoch\": " + epoch
                + ", \"sequence\": " + sequence + "}}";
    }

    private ProduceResult produce(String body) {
        return JsonProduce.produce(service, "orders", bytes(body));
    }

    private TierlogException fail(String body) {
        TierlogException e = catchThrowableOfType(TierlogException.class, () -> produce(body));
        assertThat(e).as("produce %s", body.length() > 200 ? body.substring(0, 200) : body).isNotNull();
        return e;
    }

    private void assertNothingAppended() {
        for (int p = 0; p < 3; p++) {
            assertThat(new HotLog(data).reader(new TopicPartition("orders", p)).end(null).offset())
                    .as("end of partition %d", p).isZero();
        }
    }

    private List<LogRecord> read(int partition) {
        return new HotLog(data).reader(new TopicPartition("orders", partition)).read(0, null, 1000, 1 << 20).records();
    }

    private List<String> values(int partition) {
        return read(partition).stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
