package io.tierlog.log.format;

import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The validator is never more lenient than kafka-clients' reader: bytes damaged at random, with the CRC32C fixed up
 * so that the record walk itself is exercised, are either refused with a 4xx {@link TierlogException} or read back
 * by kafka-clients as exactly the records the validator counted, with dense offsets. Seeded; the seed is printed.
 */
class ClientBatchValidatorFuzzTest {
    private static final int ROUNDS = 3000;

    @Test
    void damagedBatchesAreRefusedOrReadBackAsValidated() {
        long seed = Long.getLong("tierlog.fuzz.seed", System.nanoTime());
        System.out.println("ClientBatchValidatorFuzzTest seed = " + seed);
        Random random = new Random(seed);
        int accepted = 0;
        for (int round = 0; round < ROUNDS; round++) {
            ByteBuffer original = randomBatch(random);
            ByteBuffer damaged = ByteBuffer.allocate(original.remaining()).put(original.duplicate()).flip();
            int flips = 1 + random.nextInt(3);
            for (int f = 0; f < flips; f++) {
                // Anywhere from the attributes on (the CRC-covered part), plus the length field now and then.
                int at = random.nextInt(10) == 0 ? 8 + random.nextInt(4)
                        : RecordBatchCodec.CRC_START_OFFSET + random.nextInt(damaged.limit() - RecordBatchCodec.CRC_START_OFFSET);
                damaged.put(at, (byte) random.nextInt(256));
            }
            fixCrc(damaged);
            ClientBatch batch;
            try {
                batch = ClientBatchValidator.validate(damaged, 10_000, 1_800_000_000_000L);
            } catch (TierlogException e) {
                assertThat(e.type()).as("seed %d round %d: %s", seed, round, e.getMessage())
                        .isIn(ErrorType.BAD_REQUEST, ErrorType.RECORD_TOO_LARGE);
                continue;
            } catch (RuntimeException e) {
                throw new AssertionError("seed " + seed + " round " + round + ": not a 4xx", e);
            }
            accepted++;
            ByteBuffer stamped = batch.stampedAt(1000);
            List<LogRecord> records = new ArrayList<>();
            try {
                RecordBatchCodec.decode(stamped, 0, Integer.MAX_VALUE, records);
            } catch (RuntimeException e) {
                fail("seed " + seed + " round " + round + ": accepted, but kafka-clients cannot read it", e);
            }
            assertThat(RecordBatchCodec.validate(stamped)).isNull();
            assertThat(records).as("seed %d round %d", seed, round).hasSize(batch.recordCount());
            for (int i = 0; i < records.size(); i++) {
                assertThat(records.get(i).offset()).isEqualTo(1000 + i);
                assertThat(records.get(i).timestamp()).isNotNegative();
            }
        }
        System.out.printf("ClientBatchValidatorFuzzTest: %d of %d damaged batches accepted%n", accepted, ROUNDS);
        // Damage that leaves a batch valid exists (a byte inside a value), so some rounds must be accepted.
        assertThat(accepted).as("seed %d", seed).isPositive().isLessThan(ROUNDS);
    }

    private static ByteBuffer randomBatch(Random random) {
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, false, 0, buffer.capacity());
        int n = 1 + random.nextInt(6);
        for (int i = 0; i < n; i++) {
            byte[] key = random.nextBoolean() ? null : text(random, random.nextInt(20));
            byte[] value = random.nextInt(8) == 0 ? null : text(random, random.nextInt(200));
            org.apache.kafka.common.header.Header[] headers = new org.apache.kafka.common.header.Header[random.nextInt(3)];
            for (int h = 0; h < headers.length; h++) {
                headers[h] = new RecordHeader("h" + h, random.nextBoolean() ? null : text(random, random.nextInt(10)));
            }
            long timestamp = random.nextInt(10) == 0 ? RecordBatch.NO_TIMESTAMP : 1_700_000_000_000L + random.nextInt(1000);
            b.append(timestamp, key, value, headers);
        }
        return b.build().buffer();
    }

    private static byte[] text(Random random, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = (byte) ('a' + random.nextInt(26));
        }
        return new String(out, StandardCharsets.US_ASCII).getBytes(StandardCharsets.UTF_8);
    }

    private static void fixCrc(ByteBuffer batch) {
        CRC32C crc = new CRC32C();
        crc.update(batch.duplicate().position(RecordBatchCodec.CRC_START_OFFSET));
        batch.putInt(RecordBatchCodec.CRC_OFFSET, (int) crc.getValue());
    }
}
