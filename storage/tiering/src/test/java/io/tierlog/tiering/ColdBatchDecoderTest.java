package io.tierlog.tiering;

import io.tierlog.log.format.AppendRecord;
import io.tierlog.log.format.Header;
import io.tierlog.log.format.LogRecord;
import io.tierlog.log.format.ProducerIdentity;
import io.tierlog.log.format.RecordBatchCodec;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ColdBatchDecoder} against {@link RecordBatchCodec#decode} (kafka-clients' parser) on real encoded batches. */
class ColdBatchDecoderTest {
    private final Random random = new Random(42);

    @Test
    void decodesExactlyWhatTheCodecDecodes() {
        for (int n = 0; n < 200; n++) {
            long base = random.nextInt(1_000_000);
            ByteBuffer batch = randomBatch(base, 1 + random.nextInt(60));
            assertThat(RecordBatchCodec.validate(batch.duplicate())).isNull();
            int count = batch.getInt(batch.position() + 57);
            long from = base + random.nextInt(count + 2) - 1;

            List<LogRecord> expected = new ArrayList<>();
            RecordBatchCodec.decode(batch.duplicate(), from, Integer.MAX_VALUE, expected);
            List<LogRecord> actual = new ArrayList<>();
            ColdBatchDecoder.Progress end = ColdBatchDecoder.decode(batch.duplicate(), ColdBatchDecoder.Progress.START,
                    from, new ColdBatchDecoder.Budget(Integer.MAX_VALUE, Integer.MAX_VALUE), actual);

            assertThat(end).as("batch exhausted").isNull();
            TieredStorageContractTest.assertSameRecords(actual, expected);
        }
    }

    @Test
    void resumingAtTheReturnedProgressContinuesExactlyWhereTheBudgetStopped() {
        for (int n = 0; n < 100; n++) {
            long base = random.nextInt(1_000_000);
            ByteBuffer batch = randomBatch(base, 1 + random.nextInt(80));
            List<LogRecord> whole = new ArrayList<>();
            RecordBatchCodec.decode(batch.duplicate(), base, Integer.MAX_VALUE, whole);

            List<LogRecord> pieced = new ArrayList<>();
            ColdBatchDecoder.Progress at = ColdBatchDecoder.Progress.START;
            long want = base;
            int reads = 0;
            while (true) {
                int maxRecords = 1 + random.nextInt(7);
                int maxBytes = 1 + random.nextInt(3000);
                List<LogRecord> piece = new ArrayList<>();
                at = ColdBatchDecoder.decode(batch.duplicate(), at, want, new ColdBatchDecoder.Budget(maxRecords,
                        maxBytes), piece);
                assertThat(piece).as("every read makes progress").isNotEmpty();
                assertThat(piece.size()).isLessThanOrEqualTo(maxRecords);
                int bytes = piece.stream().mapToInt(LogRecord::sizeInBytes).sum();
                if (piece.size() > 1) {
                    assertThat(bytes).as("only a read's first record may exceed maxBytes").isLessThanOrEqualTo(maxBytes);
                }
                pieced.addAll(piece);
                want = piece.get(piece.size() - 1).offset() + 1;
                reads++;
                if (at == null) {
                    break;
                }
                assertThat(reads).isLessThanOrEqualTo(whole.size());
            }
            TieredStorageContractTest.assertSameRecords(pieced, whole);
        }
    }

    @Test
    void compressedBatchesGoThroughTheCodecAndResumeByOffset() {
        SimpleRecord[] records = new SimpleRecord[50];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(1000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("value-" + i).repeat(10).getBytes(StandardCharsets.UTF_8));
        }
        ByteBuffer batch = MemoryRecords.withRecords(500L, Compression.gzip().build(), records).buffer();
        assertThat(RecordBatchCodec.validate(batch.duplicate())).isNull();

        List<LogRecord> first = new ArrayList<>();
        ColdBatchDecoder.Progress at = ColdBatchDecoder.decode(batch.duplicate(), ColdBatchDecoder.Progress.START,
                500, new ColdBatchDecoder.Budget(20, Integer.MAX_VALUE), first);
        assertThat(first).extracting(LogRecord::offset).containsExactlyElementsOf(range(500, 520));
        assertThat(at).isEqualTo(ColdBatchDecoder.Progress.START);

        List<LogRecord> rest = new ArrayList<>();
        assertThat(ColdBatchDecoder.decode(batch.duplicate(), at, 520, new ColdBatchDecoder.Budget(100,
                Integer.MAX_VALUE), rest)).isNull();
        assertThat(rest).extracting(LogRecord::offset).containsExactlyElementsOf(range(520, 550));
        assertThat(new String(rest.get(0).key(), StandardCharsets.UTF_8)).isEqualTo("k20");
        assertThat(rest.get(0).timestamp()).isEqualTo(1020L);
    }

    @Test
    void aRecordRunningPastTheBatchEndIsAnErrorNotARead() {
        ByteBuffer batch = randomBatch(0, 3);
        // Cut the batch's last 10 bytes and fix its length field and CRC: CRC-valid, but its last record is short.
        ByteBuffer cut = ByteBuffer.allocate(batch.remaining() - 10);
        cut.put(batch.duplicate().limit(batch.position() + batch.remaining() - 10)).flip();
        cut.putInt(RecordBatchCodec.LENGTH_OFFSET, cut.remaining() - RecordBatchCodec.LOG_OVERHEAD);
        CRC32C crc = new CRC32C();
        crc.update(cut.duplicate().position(RecordBatchCodec.CRC_START_OFFSET));
        cut.putInt(RecordBatchCodec.CRC_OFFSET, (int) crc.getValue());
        assertThat(RecordBatchCodec.validate(cut.duplicate())).as("CRC-valid, structurally broken").isNull();

        // Followed by other bytes in the same array, as a batch inside a chunk is: they must not be read.
        ByteBuffer inChunk = ByteBuffer.allocate(cut.remaining() + 4096);
        inChunk.put(cut.duplicate()).flip();
        List<LogRecord> out = new ArrayList<>();
        assertThatThrownBy(() -> ColdBatchDecoder.decode(inChunk, ColdBatchDecoder.Progress.START, 0,
                new ColdBatchDecoder.Budget(100, Integer.MAX_VALUE), out))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("past the batch");
    }

    private static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(o);
        }
        return out;
    }

    private ByteBuffer randomBatch(long base, int count) {
        List<AppendRecord> records = new ArrayList<>();
        long t0 = 1_700_000_000_000L + random.nextInt(1_000_000);
        for (int i = 0; i < count; i++) {
            List<Header> headers = new ArrayList<>();
            int h = random.nextInt(4);
            for (int j = 0; j < h; j++) {
                headers.add(new Header("h" + j + "-é", random.nextInt(4) == 0 ? null : bytes(random.nextInt(20))));
            }
            byte[] key = random.nextInt(3) == 0 ? null : bytes(random.nextInt(30));
            byte[] value = random.nextInt(10) == 0 ? null : bytes(random.nextInt(random.nextBoolean() ? 40 : 3000));
            // Timestamps go back and forth: deltas may be negative.
            records.add(new AppendRecord(key, value, headers, t0 + random.nextInt(200_000) - 100_000));
        }
        return RecordBatchCodec.encode(base, records, ProducerIdentity.NONE);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }
}
