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

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client's record-batch decoding against kafka-clients' reader over random answers: several batches back to back
 * in every codec, null and empty keys and values, headers (null values too), a fetch offset inside a batch. And what
 * a record made from an answer shares with it: its key and value are read in place, {@code key()} and {@code value()}
 * are copies.
 */
class RecordBatchDecodeEquivalenceTest {
    private static final List<Compression> CODECS = List.of(Compression.NONE, Compression.gzip().build(),
            Compression.snappy().build(), Compression.lz4().build(), Compression.zstd().build());

    @Test
    void decodesRandomAnswersAsKafkaReadsThem() {
        Random random = new Random(26);
        for (int answer = 0; answer < 200; answer++) {
            byte[] body = randomAnswer(random, 1_000L * answer);
            List<Record> expected = new ArrayList<>();
            for (RecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(body)).batches()) {
                batch.ensureValid();
                batch.forEach(expected::add);
            }
            long first = expected.get(0).offset();
            long last = expected.get(expected.size() - 1).offset();
            long from = first + random.nextInt((int) (last - first + 1)); // possibly inside the first batch
            List<Record> wanted = expected.stream().filter(r -> r.offset() >= from).toList();

            List<ConsumerRecord> got = RecordBatchCodec.decode("t", 3, body, from);
            assertThat(got).hasSize(wanted.size());
            for (int i = 0; i < got.size(); i++) {
                sameRecord(got.get(i), wanted.get(i));
            }
            RecordBatchCodec.Cursor cursor = RecordBatchCodec.cursor("t", 3, body, from);
            assertThat(cursor.remaining()).isEqualTo(wanted.size());
        }
    }

    private static void sameRecord(ConsumerRecord got, Record want) {
        String at = "offset " + want.offset();
        assertThat(got.topic()).isEqualTo("t");
        assertThat(got.partition()).isEqualTo(3);
        assertThat(got.offset()).as(at).isEqualTo(want.offset());
        assertThat(got.timestamp()).as(at).isEqualTo(want.timestamp());
        assertThat(got.key()).as(at).isEqualTo(bytes(want.key()));
        assertThat(got.keySize()).as(at).isEqualTo(want.keySize());
        assertThat(got.keyBuffer()).as(at).isEqualTo(want.key());
        assertThat(got.value()).as(at).isEqualTo(bytes(want.value()));
        assertThat(got.valueSize()).as(at).isEqualTo(want.valueSize());
        assertThat(got.valueBuffer()).as(at).isEqualTo(want.value());
        assertThat(got.valueAsString()).as(at).isEqualTo(want.hasValue()
                ? StandardCharsets.UTF_8.decode(want.value().duplicate()).toString() : null);
        Header[] headers = want.headers();
        assertThat(got.headers().keySet()).as(at).containsExactly(
                java.util.Arrays.stream(headers).map(Header::key).toArray(String[]::new));
        for (Header h : headers) {
            assertThat(got.headers().get(h.key())).as(at + " header " + h.key()).isEqualTo(h.value());
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        if (b == null) {
            return null;
        }
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** One to four batches of 1-40 records, each in a random codec, offsets following on. */
    private static byte[] randomAnswer(Random random, long baseOffset) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long offset = baseOffset;
        int batches = 1 + random.nextInt(4);
        for (int b = 0; b < batches; b++) {
            Compression codec = CODECS.get(random.nextInt(CODECS.size()));
            MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), codec,
                    TimestampType.CREATE_TIME, offset);
            int records = 1 + random.nextInt(40);
            long timestamp = 1_700_000_000_000L + random.nextInt(1_000_000);
            for (int r = 0; r < records; r++) {
                int headerCount = random.nextInt(4) == 0 ? random.nextInt(3) + 1 : 0;
                Header[] headers = new Header[headerCount];
                for (int h = 0; h < headerCount; h++) {
                    headers[h] = new RecordHeader("h" + h, random.nextBoolean() ? null : randomBytes(random, 12));
                }
                // Timestamps go up and down: deltas are zig-zag varints, negative ones too.
                builder.append(timestamp + random.nextInt(2_000) - 1_000, randomBytes(random, 20),
                        randomBytes(random, 300), headers);
            }
            MemoryRecords built = builder.build();
            byte[] bytes = new byte[built.sizeInBytes()];
            built.buffer().duplicate().get(bytes);
            out.writeBytes(bytes);
            offset += records;
        }
        return out.toByteArray();
    }

    /** Null (1 in 5), empty (1 in 10), else 1 to {@code max} random bytes. */
    private static byte[] randomBytes(Random random, int max) {
        int kind = random.nextInt(10);
        if (kind < 2) {
            return null;
        }
        if (kind == 2) {
            return new byte[0];
        }
        byte[] b = new byte[1 + random.nextInt(max)];
        random.nextBytes(b);
        return b;
    }

    @Test
    void aDecodedRecordReadsItsValueInPlaceAndHandsOutCopies() {
        byte[] body = RecordBatchCodec.encode(List.of(
                        new ProducerRecord("t", 0, "k".getBytes(StandardCharsets.UTF_8),
                                "value".getBytes(StandardCharsets.UTF_8), Map.of(), 1_000L)),
                io.tierlog.client.Compression.NONE, -1L, (short) -1, -1);
        ConsumerRecord r = RecordBatchCodec.decode("t", 0, body, 0).get(0);

        byte[] copy = r.value();
        copy[0] = 'X';
        assertThat(r.valueAsString()).as("a caller's change to value() does not reach the record").isEqualTo("value");
        assertThat(r.value()).isNotSameAs(r.value()).isEqualTo("value".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> r.valueBuffer().put(0, (byte) 'X')).isInstanceOf(ReadOnlyBufferException.class);
        assertThatThrownBy(() -> r.keyBuffer().put(0, (byte) 'X')).isInstanceOf(ReadOnlyBufferException.class);

        // No copy was made when the record was: its value is the answer's bytes (why: ConsumerRecord's Javadoc).
        int at = indexOf(body, "value".getBytes(StandardCharsets.UTF_8));
        body[at] = 'V';
        assertThat(r.valueAsString()).isEqualTo("Value");
        assertThat(r.valueBuffer().get(0)).isEqualTo((byte) 'V');
        assertThat(copy[1]).as("an earlier copy is its own").isEqualTo((byte) 'a');
    }

    @Test
    void recordsAreEqualByTheirBytesWhereverTheyAreHeld() {
        byte[] body = RecordBatchCodec.encode(List.of(
                        new ProducerRecord("t", 0, null, "v".getBytes(StandardCharsets.UTF_8),
                                Map.of("h", "1".getBytes(StandardCharsets.UTF_8)), 5L)),
                io.tierlog.client.Compression.NONE, -1L, (short) -1, -1);
        ConsumerRecord inAnswer = RecordBatchCodec.decode("t", 0, body, 0).get(0);
        ConsumerRecord own = new ConsumerRecord("t", 0, 0, 5L, null, "v".getBytes(StandardCharsets.UTF_8),
                Map.of("h", "1".getBytes(StandardCharsets.UTF_8)));
        assertThat(inAnswer).isEqualTo(own).hasSameHashCodeAs(own);
        assertThat(inAnswer.key()).isNull();
        assertThat(inAnswer.keySize()).isEqualTo(-1);
        assertThat(inAnswer.keyBuffer()).isNull();
        assertThat(new ConsumerRecord("t", 0, 0, 5L, null, "w".getBytes(StandardCharsets.UTF_8), Map.of("h",
                "1".getBytes(StandardCharsets.UTF_8)))).isNotEqualTo(own);
        assertThat(new ConsumerRecord("t", 0, 0, 5L, null, "v".getBytes(StandardCharsets.UTF_8), Map.of("h",
                "2".getBytes(StandardCharsets.UTF_8)))).isNotEqualTo(own);
        assertThat(own.toString()).contains("offset=0", "value=1 bytes", "key=null");
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
