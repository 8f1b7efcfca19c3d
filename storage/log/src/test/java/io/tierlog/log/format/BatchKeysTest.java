package io.tierlog.log.format;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keys {@link BatchKeys} reads from a batch's bytes are the keys kafka-clients' own record iterator reads: for
 * random batches of keyed, unkeyed, empty-keyed and tombstone records with headers, uncompressed and compressed, at
 * any base offset and position in a buffer. Seeded; the seed is printed.
 */
class BatchKeysTest {
    private static final int ROUNDS = 500;

    record Key(String key, long offset, boolean tombstone) {
    }

    @Test
    void readsTheKeysKafkaClientsReads() {
        long seed = Long.getLong("tierlog.fuzz.seed", System.nanoTime());
        System.out.println("BatchKeysTest seed = " + seed);
        Random random = new Random(seed);
        for (int round = 0; round < ROUNDS; round++) {
            Compression compression = random.nextInt(4) == 0 ? Compression.lz4().build() : Compression.NONE;
            ByteBuffer batch = randomBatch(random, compression);
            // The batch somewhere inside a larger buffer, as a segment read hands it over.
            int before = random.nextInt(16);
            ByteBuffer framed = ByteBuffer.allocate(before + batch.remaining() + 8);
            framed.position(before);
            framed.put(batch.duplicate()).flip().position(before).limit(before + batch.remaining());

            List<Key> read = new ArrayList<>();
            BatchKeys.forEach(framed, (key, offset, tombstone) ->
                    read.add(new Key(StandardCharsets.UTF_8.decode(key.duplicate()).toString(), offset, tombstone)));
            assertThat(read).as("seed %d round %d (%s)", seed, round, compression).isEqualTo(expected(batch));
            assertThat(framed.position()).isEqualTo(before);
        }
    }

    @Test
    void skipsTransactionMarkers() {
        MemoryRecords marker = MemoryRecords.withEndTransactionMarker(42, System.currentTimeMillis(), 0, 9L, (short) 1,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        List<Key> read = new ArrayList<>();
        BatchKeys.forEach(marker.buffer(), (key, offset, tombstone) -> read.add(new Key("", offset, tombstone)));
        assertThat(read).isEmpty();
    }

    private static List<Key> expected(ByteBuffer batch) {
        List<Key> keys = new ArrayList<>();
        for (Record r : RecordBatchCodec.asBatch(batch.duplicate())) {
            if (r.hasKey()) {
                keys.add(new Key(StandardCharsets.UTF_8.decode(r.key()).toString(), r.offset(), !r.hasValue()));
            }
        }
        return keys;
    }

    private static ByteBuffer randomBatch(Random random, Compression compression) {
        long baseOffset = random.nextInt(3) == 0 ? random.nextLong(1L << 40) : random.nextInt(1000);
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.MAGIC_VALUE_V2,
                compression, TimestampType.CREATE_TIME, baseOffset);
        int count = 1 + random.nextInt(40);
        long timestamp = 1_700_000_000_000L;
        for (int i = 0; i < count; i++) {
            byte[] key = switch (random.nextInt(4)) {
                case 0 -> null;
                case 1 -> new byte[0];
                default -> ("key-" + random.nextInt(20) + "-" + "x".repeat(random.nextInt(200)))
                        .getBytes(StandardCharsets.UTF_8);
            };
            byte[] value = random.nextInt(5) == 0 ? null : new byte[random.nextInt(300)];
            Header[] headers = new Header[random.nextInt(3)];
            for (int h = 0; h < headers.length; h++) {
                headers[h] = new RecordHeader("h" + h, random.nextBoolean() ? null : new byte[random.nextInt(50)]);
            }
            builder.append(timestamp + random.nextInt(100_000), key, value, headers);
        }
        return builder.build().buffer();
    }
}
