package io.tierlog.ingest;

import io.tierlog.http.JsonProduce;
import io.tierlog.log.HotLog;
import io.tierlog.log.ErrorType;
import io.tierlog.log.FsyncPolicy;
import io.tierlog.log.PartitionReader;
import io.tierlog.log.Position;
import io.tierlog.log.TierlogException;
import io.tierlog.log.TopicPartition;
import io.tierlog.log.format.BatchInfo;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.topic.TopicConfig;
import io.tierlog.testkit.ManualClock;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static io.tierlog.ingest.KafkaBatches.T0;
import static io.tierlog.ingest.KafkaBatches.builder;
import static io.tierlog.ingest.KafkaBatches.bytes;
import static io.tierlog.ingest.KafkaBatches.concat;
import static io.tierlog.ingest.KafkaBatches.header;
import static io.tierlog.ingest.KafkaBatches.idempotent;
import static io.tierlog.ingest.KafkaBatches.patched;
import static io.tierlog.ingest.KafkaBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The binary produce path, {@link IngestService#produceBatches}: Kafka RecordBatch v2 bodies built by kafka-clients'
 * {@code MemoryRecordsBuilder}, appended to real segment files and read back through {@link PartitionReader}.
 */
class BatchProduceTest {
    private static final String TOPIC = "events";
    private static final int MAX_REQUEST_BYTES = 64 * 1024;
    private static final int MAX_MESSAGE_BYTES = 1000;

    @TempDir
    Path data;

    private final ManualClock clock = new ManualClock(1_800_000_000_000L);
    private IngestService service;

    @BeforeEach
    void start() {
        service = newService();
        service.topics().create(TOPIC, 2,
                TopicConfig.DEFAULTS.with(Map.of(TopicConfig.MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES)));
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
    void kafkaBuiltBatchRoundTripsWithOffsetsKeysValuesHeadersAndTimestamps() {
        MemoryRecordsBuilder b = builder();
        b.append(T0, bytes("k1"), bytes("v1"), new org.apache.kafka.common.header.Header[]{header("trace", "abc"),
                header("empty", null)});
        b.append(T0 + 5, null, bytes("no key"));
        b.append(T0 + 2, bytes("k3"), null); // a tombstone, and a timestamp lower than its predecessor's
        ByteBuffer body = b.build().buffer();
        ByteBuffer sent = concat(body);

        BatchProduceResult r = service.produceBatches(TOPIC, 1, body);

        assertThat(r).isEqualTo(new BatchProduceResult(1, 0, 3, false));
        List<LogRecord> read = read(1);
        assertThat(read).extracting(LogRecord::offset).containsExactly(0L, 1L, 2L);
        assertThat(read).extracting(LogRecord::timestamp).containsExactly(T0, T0 + 5, T0 + 2);
        assertThat(read).extracting(rec -> str(rec.key())).containsExactly("k1", null, "k3");
        assertThat(read).extracting(rec -> str(rec.value())).containsExactly("v1", "no key", null);
        assertThat(read.get(0).headers()).extracting(Header::name).containsExactly("trace", "empty");
        assertThat(str(read.get(0).headers().get(0).value())).isEqualTo("abc");
        assertThat(read.get(0).headers().get(1).value()).isNull();
        assertThat(read.get(1).headers()).isEmpty();

        // The client's bytes are stored as sent from the magic byte on: the CRC and everything it covers.
        byte[] stored = segmentBytes(1);
        assertThat(stored).hasSize(sent.remaining());
        assertThat(ByteBuffer.wrap(stored, 16, stored.length - 16))
                .isEqualTo(sent.duplicate().position(16));
        assertThat(ByteBuffer.wrap(stored).getInt(12)).as("partition leader epoch: unknown, as in our batches")
                .isEqualTo(-1);

        // The answer is the JSON path's, byte for byte.
        assertThat(new String(JsonProduce.answer(r), StandardCharsets.UTF_8)).isEqualTo(
                "{\"offsets\":[{\"partition\":1,\"offset\":0},{\"partition\":1,\"offset\":1},"
                        + "{\"partition\":1,\"offset\":2}],\"duplicate\":false}");
        assertThat(JsonProduce.answer(r)).isEqualTo(JsonProduce.answer(r.toProduceResult()));
    }

    @Test
    void offsetsStayDenseAcrossJsonAndBinaryAppends() {
        JsonProduce.produce(service, TOPIC, bytes("{\"records\": [{\"value\": \"j0\", \"partition\": 0},"
                + " {\"value\": \"j1\", \"partition\": 0}]}"));
        // A producer writes baseOffset 0; the log stamps its own.
        assertThat(service.produceBatches(TOPIC, 0, values("b2", "b3", "b4")).baseOffset()).isEqualTo(2);
        assertThat(JsonProduce.produce(service, TOPIC, bytes("{\"records\": [{\"value\": \"j5\", \"partition\": 0}]}")).offsets())
                .containsExactly(new PartitionOffset(0, 5));
        assertThat(service.produceBatches(TOPIC, 0, values("b6")).baseOffset()).isEqualTo(6);

        assertThat(read(0)).extracting(LogRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
        assertThat(read(0)).extracting(rec -> str(rec.value()))
                .containsExactly("\"j0\"", "\"j1\"", "b2", "b3", "b4", "\"j5\"", "b6");
        assertThat(batches(0)).extracting(BatchInfo::baseOffset).containsExactly(0L, 2L, 5L, 6L);
    }

    @Test
    void severalBatchesInOneBodyLandAsOneBatch() {
        ByteBuffer body = concat(values("a", "b"), values("c"), values("d", "e", "f"));

        BatchProduceResult r = service.produceBatches(TOPIC, 0, body);

        assertThat(r).isEqualTo(new BatchProduceResult(0, 0, 6, false));
        assertThat(read(0)).extracting(rec -> str(rec.value())).containsExactly("a", "b", "c", "d", "e", "f");
        assertThat(read(0)).extracting(LogRecord::timestamp).containsExactly(T0, T0 + 1, T0, T0, T0 + 1, T0 + 2);
        // One batch: visible to readers all at once, and truncated whole if its writer dies mid-write.
        assertThat(batches(0)).singleElement().satisfies(b -> {
            assertThat(b.recordCount()).isEqualTo(6);
            assertThat(b.maxTimestamp()).isEqualTo(T0 + 2);
        });
    }

    @Test
    void aRecordWithoutTimestampGetsTheAppendTimeAsOnTheJsonPath() {
        MemoryRecordsBuilder b = idempotent(5, 0, 0);
        b.append(RecordBatch.NO_TIMESTAMP, null, bytes("no time"));
        b.append(T0, null, bytes("timed"));
        ByteBuffer body = b.build().buffer();

        service.produceBatches(TOPIC, 0, body);

        assertThat(read(0)).extracting(LogRecord::timestamp).containsExactly(clock.millis(), T0);
        // Re-encoded with the append time, keeping the producer fields: a retry is still recognised.
        assertThat(batches(0)).singleElement().satisfies(info -> {
            assertThat(info.maxTimestamp()).isEqualTo(clock.millis());
            assertThat(info.producerId()).isEqualTo(5);
            assertThat(info.baseSequence()).isZero();
        });
        clock.advance(Duration.ofSeconds(1));
        assertThat(service.produceBatches(TOPIC, 0, body.rewind()).duplicate()).isTrue();
        assertThat(read(0)).hasSize(2);
    }

    @Test
    void idempotentBatchesDeduplicateAndConflictExactlyLikeTheJsonPathAndShareItsProducerIds() {
        ByteBuffer first = values(idempotent(77, 0, 0), "a", "b");
        assertThat(service.produceBatches(TOPIC, 0, first)).isEqualTo(new BatchProduceResult(0, 0, 2, false));

        // The retry (the same bytes, already stamped by the first append) appends nothing.
        Map<String, Long> sizes = fileSizes();
        assertThat(service.produceBatches(TOPIC, 0, first.rewind())).isEqualTo(new BatchProduceResult(0, 0, 2, true));
        assertThat(fileSizes()).isEqualTo(sizes);

        // JSON producer id "77" is the same producer as producerId 77: two records took sequences 0 and 1, so its
        // next sequence is 2 (Kafka's numbering).
        assertThat(JsonProduce.produce(service, TOPIC, bytes("{\"records\": [{\"value\": \"c\", \"partition\": 0}],"
                + " \"producer\": {\"id\": \"77\", \"epoch\": 0, \"sequence\": 2}}")).offsets())
                .containsExactly(new PartitionOffset(0, 2));

        TierlogException gap = fail(0, values(idempotent(77, 0, 4), "gap"));
        assertThat(gap.type()).isEqualTo(ErrorType.OUT_OF_ORDER_SEQUENCE);
        assertThat(gap.extra()).containsEntry("expectedSequence", 3);

        assertThat(service.produceBatches(TOPIC, 0, values(idempotent(77, 1, 0), "d")).baseOffset()).isEqualTo(3);
        TierlogException fenced = fail(0, values(idempotent(77, 0, 3), "late"));
        assertThat(fenced.type()).isEqualTo(ErrorType.FENCED_PRODUCER);
        assertThat(fenced.extra()).containsEntry("currentEpoch", 1);

        // The state is derived from the log, so a new process answers the same.
        service.close();
        service = newService();
        assertThat(service.produceBatches(TOPIC, 0, values(idempotent(77, 1, 0), "d")).duplicate()).isTrue();
        assertThat(read(0)).extracting(rec -> str(rec.value())).containsExactly("a", "b", "\"c\"", "d");
    }

    @Test
    void everyRejectionNamesTheFieldAndChangesNothing() {
        service.produceBatches(TOPIC, 0, values("existing"));
        service.produceBatches(TOPIC, 1, values("existing"));
        Map<String, Long> before = fileSizes();
        List<String> checked = new ArrayList<>();
        rejections().forEach(c -> {
            TierlogException e = catchThrowableOfType(TierlogException.class,
                    () -> service.produceBatches(TOPIC, c.partition, c.body.get()));
            assertThat(e).as(c.name).isNotNull();
            assertThat(e.type()).as(c.name + ": " + e.getMessage()).isEqualTo(c.type);
            assertThat(e.getMessage()).as(c.name).contains(c.detail);
            if (c.field != null) {
                assertThat(e.extra()).as(c.name + ": " + e.getMessage()).containsEntry("field", c.field);
            }
            assertThat(fileSizes()).as(c.name + ": files unchanged").isEqualTo(before);
            checked.add(c.name);
        });
        assertThat(checked).hasSize((int) rejections().count());
        assertThat(read(0)).hasSize(1);
        assertThat(read(1)).hasSize(1);
    }

    private record Rejection(String name, int partition, Supplier<ByteBuffer> body, ErrorType type, String field,
                             String detail) {
    }

    private static Rejection bad(String name, Supplier<ByteBuffer> body, String detail) {
        return new Rejection(name, 0, body, ErrorType.BAD_REQUEST, "body", detail);
    }

    private static Stream<Rejection> rejections() {
        return Stream.of(
                bad("empty body", () -> ByteBuffer.allocate(0), "empty"),
                bad("magic 1", () -> {
                    MemoryRecordsBuilder v1 = new MemoryRecordsBuilder(ByteBuffer.allocate(1024),
                            RecordBatch.MAGIC_VALUE_V1, Compression.NONE, TimestampType.CREATE_TIME, 0L,
                            RecordBatch.NO_TIMESTAMP, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                            RecordBatch.NO_SEQUENCE, false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, 1024);
                    v1.append(T0, null, bytes("old"));
                    return v1.build().buffer();
                }, "magic 1; only RecordBatch v2"),
                bad("CRC mismatch", () -> {
                    ByteBuffer b = values("payload");
                    b.put(b.limit() - 2, (byte) 'X');
                    return b;
                }, "CRC32C mismatch"),
                bad("body cut short", () -> values("payload").limit(70), "only 70 bytes remain"),
                bad("length field shorter than a header", () -> values("x").putInt(8, 10), "shorter than the 61-byte"),
                bad("trailing bytes", () -> concat(values("x"), ByteBuffer.allocate(5)), "5 trailing bytes"),
                bad("trailing garbage", () -> concat(values("x"), ByteBuffer.wrap(new byte[40]).putInt(8, 1000).clear()),
                        "batch 1 at byte"),
                bad("unknown codec", () -> patched(values("x"), b -> b.putShort(21, (short) 5)),
                        "compression codec id 5"),
                bad("gzip that does not decompress", () -> patched(values(KafkaBatches.builder(
                        Compression.gzip().build(), TimestampType.CREATE_TIME, -1, (short) -1, -1, false), "zipped"),
                        b -> b.put(61, (byte) 0)), "gzip-compressed records do not decompress"),
                bad("LogAppendTime", () -> values(KafkaBatches.builder(Compression.NONE, TimestampType.LOG_APPEND_TIME,
                        -1, (short) -1, -1, false), "x"), "only CreateTime"),
                bad("transactional", () -> values(KafkaBatches.builder(Compression.NONE, TimestampType.CREATE_TIME,
                        5, (short) 0, 0, true), "x"), "transactional"),
                bad("control batch", () -> patched(values("x"), b -> b.putShort(21, (short) 0x20)), "control batch"),
                bad("unknown attribute bits", () -> patched(values("x"), b -> b.putShort(21, (short) 0x100)),
                        "unknown bits"),
                bad("record count 0", () -> patched(values("x"), b -> b.putInt(57, 0)), "recordCount 0"),
                bad("lastOffsetDelta beyond the records", () -> patched(values("x", "y"), b -> b.putInt(23, 5)),
                        "lastOffsetDelta 5 with recordCount 2"),
                bad("offset deltas with a gap", () -> {
                    MemoryRecordsBuilder g = builder();
                    g.appendWithOffset(0, T0, null, bytes("x"));
                    g.appendWithOffset(2, T0, null, bytes("y"));
                    return patched(g.build().buffer(), b -> b.putInt(23, 1));
                }, "offsetDelta 2 where 1 was expected"),
                bad("more records declared than present", () -> patched(values("x", "y"), b -> {
                    b.putInt(57, 3);
                    b.putInt(23, 2);
                }), "ends after 2 of its 3 records"),
                bad("record length disagrees with its fields", () -> patched(values("x"), b -> b.put(61,
                        (byte) (b.get(61) + 2))), "record 0: length"),
                bad("record attributes set", () -> patched(values("x"), b -> b.put(62, (byte) 1)),
                        "record attributes 1"),
                bad("header name not UTF-8", () -> patched(withHeader("h", "v"), b -> b.put(b.limit() - 3, (byte) 0xff)),
                        "header 0 name is not valid UTF-8"),
                bad("null header name", () -> patched(withHeader("h", "v"), b -> b.put(b.limit() - 4, (byte) 1)),
                        "header 0 name length -1; it must not be null"),
                bad("maxTimestamp lies", () -> patched(values("x", "y"), b -> b.putLong(35, T0 + 99)),
                        "maxTimestamp " + (T0 + 99) + " but the largest record timestamp is " + (T0 + 1)),
                bad("negative timestamp", () -> patched(values("x"), b -> {
                    b.putLong(27, -2);
                    b.putLong(35, -2);
                }), "timestamp -2"),
                bad("sequence without a producer", () -> patched(values("x"), b -> b.putInt(53, 3)),
                        "must both be -1 when producerId is -1"),
                bad("negative producer id", () -> patched(values("x"), b -> b.putLong(43, -7)), "producerId -7"),
                bad("idempotent body of two batches", () -> concat(values(idempotent(9, 0, 0), "x"),
                        values(idempotent(9, 0, 1), "y")), "an idempotent request must be exactly one batch"),
                bad("a valid batch followed by a broken one", () -> {
                    ByteBuffer first = values("fine");
                    ByteBuffer second = values("broken");
                    second.put(second.limit() - 2, (byte) 'X'); // in the value, before the header count
                    return concat(first, second);
                }, "batch 1 at byte"),
                new Rejection("record over max.message.bytes, named by its index in the body", 0,
                        () -> concat(values("a", "b"), values("c", "x".repeat(MAX_MESSAGE_BYTES + 1))),
                        ErrorType.RECORD_TOO_LARGE, "records[3]", "max.message.bytes is " + MAX_MESSAGE_BYTES),
                new Rejection("body over max.request.bytes", 0, () -> ByteBuffer.allocate(MAX_REQUEST_BYTES + 1),
                        ErrorType.REQUEST_TOO_LARGE, null, "max.request.bytes"),
                new Rejection("unknown partition", 2, () -> values("x"), ErrorType.UNKNOWN_PARTITION, null,
                        "no partition 2"),
                new Rejection("negative partition", -1, () -> values("x"), ErrorType.UNKNOWN_PARTITION, null,
                        "no partition -1"));
    }

    /** One record whose last bytes are: header count, name length, the 1-byte name, value length, 1-byte value. */
    private static ByteBuffer withHeader(String name, String value) {
        MemoryRecordsBuilder b = builder();
        b.append(T0, null, bytes("v"), new org.apache.kafka.common.header.Header[]{header(name, value)});
        return b.build().buffer();
    }

    @Test
    void unknownAndInvalidTopicsAreRejected() {
        assertThat(catchThrowableOfType(TierlogException.class,
                () -> service.produceBatches("nope", 0, values("x"))).type()).isEqualTo(ErrorType.UNKNOWN_TOPIC);
        assertThat(catchThrowableOfType(TierlogException.class,
                () -> service.produceBatches("../etc", 0, values("x"))).type()).isEqualTo(ErrorType.INVALID_TOPIC);
    }

    private TierlogException fail(int partition, ByteBuffer body) {
        Map<String, Long> sizes = fileSizes();
        TierlogException e = catchThrowableOfType(TierlogException.class,
                () -> service.produceBatches(TOPIC, partition, body));
        assertThat(e).isNotNull();
        assertThat(fileSizes()).isEqualTo(sizes);
        return e;
    }

    /** Every file under the data directory (segments, snapshots, metadata) and its size. */
    private Map<String, Long> fileSizes() {
        try (Stream<Path> files = Files.walk(data)) {
            Map<String, Long> out = new TreeMap<>();
            files.filter(Files::isRegularFile).forEach(f -> {
                try {
                    out.put(data.relativize(f).toString(), Files.size(f));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private PartitionReader reader(int partition) {
        return new HotLog(data).reader(new TopicPartition(TOPIC, partition));
    }

    private List<LogRecord> read(int partition) {
        return reader(partition).read(0, null, 1000, 1 << 20).records();
    }

    private List<BatchInfo> batches(int partition) {
        List<BatchInfo> out = new ArrayList<>();
        reader(partition).scan(new Position(0, 0, 0), (info, batch) -> out.add(info));
        return out;
    }

    private byte[] segmentBytes(int partition) {
        try {
            return Files.readAllBytes(reader(partition).directory().resolve("00000000000000000000.log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
