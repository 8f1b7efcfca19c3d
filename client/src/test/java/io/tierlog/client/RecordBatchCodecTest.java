package io.tierlog.client;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The JDK-only RecordBatch v2 codec against kafka-clients' own reader and writer, both ways. */
class RecordBatchCodecTest {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<ProducerRecord> records() {
        Map<String, byte[]> headers = new LinkedHashMap<>();
        headers.put("trace", utf8("abc"));
        headers.put("empty", null);
        return List.of(
                new ProducerRecord("t", 0, utf8("k1"), utf8("v1"), headers, 1_000L),
                new ProducerRecord("t", 0, null, utf8("v2"), null, 1_005L),
                new ProducerRecord("t", 0, utf8("k3"), null, null, 999L));
    }

    @Test
    void kafkaReadsWhatTheClientWritesInEveryCodec() {
        for (io.tierlog.client.Compression c : io.tierlog.client.Compression.values()) {
            byte[] bytes = RecordBatchCodec.encode(records(), c, 77L, (short) 3, 40);
            MemoryRecords parsed = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
            List<RecordBatch> batches = new ArrayList<>();
            parsed.batches().forEach(batches::add);
            assertThat(batches).hasSize(1);
            RecordBatch batch = batches.get(0);
            batch.ensureValid(); // CRC32C
            assertThat(batch.magic()).isEqualTo((byte) 2);
            assertThat(batch.producerId()).isEqualTo(77L);
            assertThat(batch.producerEpoch()).isEqualTo((short) 3);
            assertThat(batch.baseSequence()).isEqualTo(40);
            assertThat(batch.lastSequence()).isEqualTo(42);
            assertThat(batch.maxTimestamp()).isEqualTo(1_005L);
            assertThat(batch.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
            assertThat((int) batch.compressionType().id).isEqualTo(c.code);
            List<Record> rs = new ArrayList<>();
            batch.forEach(rs::add);
            assertThat(rs).hasSize(3);
            assertThat(rs.get(0).timestamp()).isEqualTo(1_000L);
            assertThat(StandardCharsets.UTF_8.decode(rs.get(0).key()).toString()).isEqualTo("k1");
            assertThat(rs.get(0).headers()).extracting(Header::key).containsExactly("trace", "empty");
            assertThat(rs.get(0).headers()[1].value()).isNull();
            assertThat(rs.get(1).hasKey()).isFalse();
            assertThat(rs.get(2).hasValue()).isFalse();
            assertThat(rs.get(2).timestamp()).isEqualTo(999L);
        }
    }

    @Test
    void theClientReadsWhatKafkaWritesFromTheRequestedOffsetOn() {
        for (Compression codec : List.of(Compression.gzip().build(), Compression.snappy().build(),
                Compression.lz4().build(), Compression.zstd().build())) {
            readsKafkaBatches(codec);
        }
    }

    private static void readsKafkaBatches(Compression codec) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder first = MemoryRecords.builder(buffer, codec,
                TimestampType.CREATE_TIME, 100L);
        first.append(5L, utf8("a"), utf8("x"), new Header[]{new RecordHeader("h", utf8("1"))});
        first.append(6L, null, utf8("y"));
        MemoryRecords one = first.build();
        MemoryRecordsBuilder second = MemoryRecords.builder(ByteBuffer.allocate(4096), Compression.NONE,
                TimestampType.CREATE_TIME, 102L);
        second.append(7L, utf8("b"), null);
        MemoryRecords two = second.build();
        ByteBuffer both = ByteBuffer.allocate(one.sizeInBytes() + two.sizeInBytes());
        both.put(one.buffer()).put(two.buffer());

        List<ConsumerRecord> all = RecordBatchCodec.decode("t", 2, both.array(), 0);
        assertThat(all).extracting(ConsumerRecord::offset).containsExactly(100L, 101L, 102L);
        assertThat(all.get(0).keyAsString()).isEqualTo("a");
        assertThat(new String(all.get(0).headers().get("h"), StandardCharsets.UTF_8)).isEqualTo("1");
        assertThat(all.get(1).key()).isNull();
        assertThat(all.get(2).value()).isNull();
        assertThat(all.get(2).timestamp()).isEqualTo(7L);
        // A fetch may start inside a batch: the records below the asked offset are skipped.
        assertThat(RecordBatchCodec.decode("t", 2, both.array(), 101)).extracting(ConsumerRecord::offset)
                .containsExactly(101L, 102L);
    }

    @Test
    void aCorruptBatchOrAForeignCodecIsReportedNotMisread() {
        byte[] bytes = RecordBatchCodec.encode(records(), io.tierlog.client.Compression.NONE, -1, (short) -1, -1);
        bytes[bytes.length - 1] ^= 1;
        assertThatThrownBy(() -> RecordBatchCodec.decode("t", 0, bytes, 0)).hasMessageContaining("CRC32C");

        // Codec 5 is none of Kafka's: reported, not misread.
        byte[] foreign = RecordBatchCodec.encode(records(), io.tierlog.client.Compression.NONE);
        foreign[22] = 5;
        RecordBatchCodec.stamp(foreign, -1, (short) -1, -1);
        assertThatThrownBy(() -> RecordBatchCodec.decode("t", 0, foreign, 0))
                .isInstanceOf(RecordBatchCodec.UnsupportedCodecException.class);
    }

    @Test
    void aCodecWhoseOptionalLibraryIsMissingIsReportedUnavailable() throws Exception {
        // The client's classes alone, without snappy-java, lz4-java and zstd-jni: as in an application that added none.
        URL classes = io.tierlog.client.Compression.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader bare = new URLClassLoader(new URL[]{classes}, ClassLoader.getPlatformClassLoader())) {
            Class<?> compression = Class.forName(io.tierlog.client.Compression.class.getName(), true, bare);
            for (Object c : compression.getEnumConstants()) {
                boolean available = (boolean) compression.getMethod("available").invoke(c);
                assertThat(available).as("%s available without its library", c)
                        .isEqualTo(c.toString().equals("NONE") || c.toString().equals("GZIP"));
            }
        }
        for (io.tierlog.client.Compression c : io.tierlog.client.Compression.values()) {
            assertThat(c.available()).as("%s with the test class path", c).isTrue();
        }
    }

    @Test
    void aCursorCountsTheRecordsFromItsOffsetAndChecksEveryRecordBeforeTheFirstIsMade() {
        byte[] batch = RecordBatchCodec.encode(records(), io.tierlog.client.Compression.NONE, -1L, (short) -1, -1);
        ByteBuffer.wrap(batch).putLong(0, 10L); // base offset 10: offsets 10, 11, 12
        RecordBatchCodec.stamp(batch, -1L, (short) -1, -1); // CRC again
        RecordBatchCodec.Cursor cursor = RecordBatchCodec.cursor("t", 0, batch, 11);
        assertThat(cursor.remaining()).isEqualTo(2);
        ConsumerRecord first = cursor.next();
        assertThat(first.offset()).isEqualTo(11);
        assertThat(first.valueAsString()).isEqualTo("v2");
        assertThat(cursor.remaining()).isEqualTo(1);
        assertThat(cursor.next().offset()).isEqualTo(12);
        assertThat(cursor.next()).isNull();

        // The first record's length one byte short, under a valid CRC: refused when the cursor is made (on the fetch
        // thread), not later when poll makes the record.
        byte[] bad = RecordBatchCodec.encode(records(), io.tierlog.client.Compression.NONE, -1L, (short) -1, -1);
        bad[RecordBatchCodec.HEADER_BYTES] -= 2; // zig-zag varint: -2 is one less
        RecordBatchCodec.stamp(bad, -1L, (short) -1, -1);
        assertThatThrownBy(() -> RecordBatchCodec.cursor("t", 0, bad, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wrong length");
    }

    @Test
    void aBuilderThatOutgrowsItsFirstArrayWritesWhatKafkaReads() {
        // The producer starts a batch's array at its partition's last batch size; records beyond it grow the array.
        RecordBatchBuilder builder = new RecordBatchBuilder(64);
        List<ProducerRecord> sent = new ArrayList<>();
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 300; i++) {
            byte[] value = new byte[random.nextInt(i % 50 == 0 ? 20_000 : 300)];
            random.nextBytes(value);
            Map<String, byte[]> headers = i % 7 == 0 ? Map.of("n\u00e4me", utf8("h" + i)) : null;
            ProducerRecord r = new ProducerRecord("t", 0, i % 3 == 0 ? null : utf8("k" + i), i % 11 == 0 ? null : value,
                    headers, 1_000L + random.nextInt(100_000) - 50_000);
            sent.add(r);
            builder.append(r.timestamp(), r.key(), r.value(), r.headers());
        }
        RecordBatchBuilder.Finished finished = builder.finish(io.tierlog.client.Compression.NONE);
        RecordBatchCodec.stamp(finished.bytes(), finished.length(), 9L, (short) 1, 0);
        MemoryRecords parsed = MemoryRecords.readableRecords(ByteBuffer.wrap(finished.bytes(), 0, finished.length()));
        List<RecordBatch> batches = new ArrayList<>();
        parsed.batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        batches.get(0).ensureValid();
        assertThat(batches.get(0).maxTimestamp()).isEqualTo(sent.stream().mapToLong(ProducerRecord::timestamp).max()
                .orElseThrow());
        List<Record> rs = new ArrayList<>();
        batches.get(0).forEach(rs::add);
        assertThat(rs).hasSize(sent.size());
        for (int i = 0; i < rs.size(); i++) {
            Record got = rs.get(i);
            ProducerRecord want = sent.get(i);
            assertThat(got.offset()).isEqualTo(i);
            assertThat(got.timestamp()).isEqualTo(want.timestamp());
            assertThat(got.hasKey() ? bytes(got.key()) : null).isEqualTo(want.key());
            assertThat(got.hasValue() ? bytes(got.value()) : null).isEqualTo(want.value());
            assertThat(got.headers()).hasSize(want.headers().size());
        }
    }

    @Test
    void aBuilderMovedIntoALargerUsedArrayKeepsWhatItWroteAndSendsOnlyItsOwnBytes() {
        // The producer grows a batch into a free array of an earlier batch: old bytes there must not leak in.
        byte[] used = new byte[8192];
        java.util.Arrays.fill(used, (byte) 0x5a);
        RecordBatchBuilder builder = new RecordBatchBuilder(128);
        builder.append(10L, utf8("a"), utf8("first"), Map.of());
        assertThat(builder.moveTo(new byte[64])).as("not into a smaller array").isFalse();
        assertThat(builder.moveTo(used)).isTrue();
        builder.append(11L, null, utf8("second"), Map.of("h", utf8("x")));
        RecordBatchBuilder.Finished finished = builder.finish(io.tierlog.client.Compression.NONE);
        assertThat(finished.bytes()).isSameAs(used);
        RecordBatchCodec.stamp(finished.bytes(), finished.length(), -1, (short) -1, -1);
        byte[] exact = java.util.Arrays.copyOf(finished.bytes(), finished.length());
        assertThat(RecordBatchCodec.decode("t", 0, exact, 0)).extracting(ConsumerRecord::valueAsString)
                .containsExactly("first", "second");
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
