package io.tierlog.log.format;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.tierlog.log.ErrorType;
import io.tierlog.log.TierlogException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of {@link ClientBatchValidator}, the check between a client's record-batch body and the
 * log: whatever the bytes (uncompressed or compressed with any codec), it refuses them with a 4xx
 * {@link TierlogException} or accepts a batch that kafka-clients reads back as exactly the records it counted, with
 * dense offsets. Any other exception, or an accepted batch that does not read back, is a finding.
 *
 * <p>Input: one flag byte, then the body. Flag bit 0 set: the CRC32C of each batch header that fits is recomputed
 * first, so that the fuzzer gets past the checksum into the record walk and the decompression. The corpus
 * ({@code ClientBatchValidatorJazzerTestInputs}) holds batches kafka-clients built, one per codec; it runs as a
 * regression test in every build. Fuzzing: docs/RELIABILITY.md, "Fuzzing".
 */
class ClientBatchValidatorJazzerTest {
    private static final int MAX_MESSAGE_BYTES = 1 << 20;
    private static final long NOW_MS = 1_800_000_000_000L;

    @FuzzTest(maxDuration = "2m")
    void refusesWith4xxOrAcceptsWhatKafkaReadsBack(byte[] input) {
        if (input.length == 0) {
            return;
        }
        ByteBuffer body = ByteBuffer.wrap(input, 1, input.length - 1).slice();
        if ((input[0] & 1) != 0) {
            fixCrcs(body);
        }
        ClientBatch batch;
        try {
            batch = ClientBatchValidator.validate(body, MAX_MESSAGE_BYTES, NOW_MS);
        } catch (TierlogException e) {
            // the client's fault (a 4xx on the wire), never a server failure
            assertThat(e.type()).as("%s: %s", e.type(), e.getMessage())
                    .isIn(ErrorType.BAD_REQUEST, ErrorType.RECORD_TOO_LARGE, ErrorType.REQUEST_TOO_LARGE);
            return;
        }
        ByteBuffer stamped = batch.stampedAt(1000);
        assertThat(RecordBatchCodec.validate(stamped)).isNull();
        List<LogRecord> records = new ArrayList<>();
        RecordBatchCodec.decode(stamped, 0, Integer.MAX_VALUE, records);
        assertThat(records).hasSize(batch.recordCount());
        for (int i = 0; i < records.size(); i++) {
            assertThat(records.get(i).offset()).isEqualTo(1000 + i);
        }
    }

    /** Recomputes the CRC32C of each batch whose length field lies within the body, walking batch by batch. */
    private static void fixCrcs(ByteBuffer body) {
        int at = 0;
        while (at + RecordBatchCodec.CRC_START_OFFSET <= body.limit()) {
            int length = body.getInt(at + RecordBatchCodec.LENGTH_OFFSET);
            long end = at + (long) RecordBatchCodec.LOG_OVERHEAD + length;
            if (length < RecordBatchCodec.CRC_START_OFFSET - RecordBatchCodec.LOG_OVERHEAD || end > body.limit()) {
                return;
            }
            CRC32C crc = new CRC32C();
            crc.update(body.duplicate().position(at + RecordBatchCodec.CRC_START_OFFSET).limit((int) end));
            body.putInt(at + RecordBatchCodec.CRC_OFFSET, (int) crc.getValue());
            at = (int) end;
        }
    }
}
