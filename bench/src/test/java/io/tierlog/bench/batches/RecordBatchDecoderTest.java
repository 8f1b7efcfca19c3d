package io.tierlog.bench.batches;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecordBatchDecoderTest {

    /** One v2 batch of {@code count} records from {@code baseOffset}, values "v<offset>" padded to 10 bytes. */
    private static byte[] batch(long baseOffset, int count) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), Compression.NONE,
                TimestampType.CREATE_TIME, baseOffset);
        for (int i = 0; i < count; i++) {
            b.append(1000L, null, String.format("v%09d", baseOffset + i).getBytes(StandardCharsets.US_ASCII));
        }
        ByteBuffer built = b.build().buffer();
        byte[] out = new byte[built.remaining()];
        built.get(out);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void decodesBatchesSkippingOffsetsBelowTheRequestedOne() throws Exception {
        RecordBatchDecoder d = new RecordBatchDecoder(3, Long.MAX_VALUE);

        d.decode(ByteBuffer.wrap(concat(batch(0, 5), batch(5, 4))));

        assertThat(d.records()).isEqualTo(6); // offsets 3..8
        assertThat(d.valueBytes()).isEqualTo(60);
        assertThat(d.next()).isEqualTo(9);
        assertThat(d.batchesEnd()).isEqualTo(9);
    }

    @Test
    void countsNothingAtOrPastTheEnd() throws Exception {
        RecordBatchDecoder d = new RecordBatchDecoder(0, 7);

        d.decode(ByteBuffer.wrap(concat(batch(0, 5), batch(5, 4))));

        assertThat(d.records()).isEqualTo(7);
        assertThat(d.done()).isTrue();
        assertThat(d.batchesEnd()).isEqualTo(9);
    }

    @Test
    void failsOnACorruptBatch() {
        byte[] bytes = batch(0, 3);
        bytes[bytes.length - 2] ^= 1; // inside the last record's value: the CRC no longer matches

        assertThatThrownBy(() -> new RecordBatchDecoder(0, Long.MAX_VALUE).decode(ByteBuffer.wrap(bytes)))
                .isInstanceOf(IOException.class).hasMessageContaining("corrupt");
    }

    @Test
    void failsOnAGapInOffsets() {
        byte[] body = concat(batch(0, 3), batch(4, 2));

        assertThatThrownBy(() -> new RecordBatchDecoder(0, Long.MAX_VALUE).decode(ByteBuffer.wrap(body)))
                .isInstanceOf(IOException.class).hasMessageContaining("from 2 to 4");
    }

    @Test
    void failsOnABodyEndingInsideABatch() {
        byte[] whole = concat(batch(0, 3), batch(3, 3));
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 5);

        assertThatThrownBy(() -> new RecordBatchDecoder(0, Long.MAX_VALUE).decode(ByteBuffer.wrap(cut)))
                .isInstanceOf(IOException.class).hasMessageContaining("trailing bytes");
    }

    @Test
    void readsAStreamBatchByBatchEvenWhenItArrivesInSmallPieces() throws Exception {
        byte[] stream = concat(batch(0, 2), batch(2, 300), batch(302, 1));
        RecordBatchDecoder d = new RecordBatchDecoder(1, Long.MAX_VALUE);
        InputStream in = trickle(stream);

        int batches = 0;
        while (d.readBatch(in)) {
            batches++;
        }

        assertThat(batches).isEqualTo(3);
        assertThat(d.records()).isEqualTo(302);
        assertThat(d.next()).isEqualTo(303);
    }

    @Test
    void failsOnAStreamEndingInsideABatch() {
        byte[] whole = batch(0, 3);
        InputStream in = new ByteArrayInputStream(java.util.Arrays.copyOf(whole, whole.length - 1));

        assertThatThrownBy(() -> new RecordBatchDecoder(0, Long.MAX_VALUE).readBatch(in))
                .isInstanceOf(IOException.class).hasMessageContaining("ended inside a batch");
    }

    /** A stream that returns at most 7 bytes per read, as a chunked HTTP body may. */
    private static InputStream trickle(byte[] bytes) {
        return new FilterInputStream(new ByteArrayInputStream(bytes)) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return super.read(b, off, Math.min(len, 7));
            }
        };
    }
}
