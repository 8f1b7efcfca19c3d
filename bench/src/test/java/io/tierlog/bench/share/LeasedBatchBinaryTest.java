package io.tierlog.bench.share;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The bench's reading of the binary lease answer (docs/api.md, "Share groups", leased batches): only the offsets the
 * header names are delivered, each value copied out of the batches, and an answer whose batches lack a leased offset
 * or that carries stray bytes is refused.
 */
class LeasedBatchBinaryTest {
    @Test
    void deliversTheLeasedOffsetsOfEachPartitionFromItsBatches() {
        byte[] answer = answer(new int[] {0, 3}, new long[][] {{2, 5}, {11}}, new ByteBuffer[] {batch(0, 8), batch(10, 3)});
        LeasedBatch leased = LeasedBatch.readBatches(answer);
        assertThat(leased.leases()).containsExactly("lease-0-2", "lease-0-5", "lease-3-11");
        assertThat(leased.partitions()).containsExactly(0, 0, 3);
        assertThat(leased.offsets()).containsExactly(2, 5, 11);
        assertThat(leased.valueBytes()).isEqualTo("value-2".length() + "value-5".length() + "value-11".length());
    }

    @Test
    void refusesALeasedOffsetMissingFromTheBatches() {
        byte[] answer = answer(new int[] {0}, new long[][] {{2, 9}}, new ByteBuffer[] {batch(0, 8)});
        assertThatThrownBy(() -> LeasedBatch.readBatches(answer)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("leased offset 9");
    }

    @Test
    void refusesAnAnswerCutShort() {
        byte[] answer = answer(new int[] {0}, new long[][] {{2}}, new ByteBuffer[] {batch(0, 8)});
        assertThatThrownBy(() -> LeasedBatch.readBatches(Arrays.copyOf(answer, answer.length - 10)))
                .isInstanceOf(IllegalStateException.class);
        byte[] longer = Arrays.copyOf(answer, answer.length + 1);
        assertThatThrownBy(() -> LeasedBatch.readBatches(longer)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("beyond its batches");
    }

    @Test
    void aLeasedRangesAnswerDeliversEveryOffsetOfItsRunsAndAcksOneEntryPerRun() throws Exception {
        // Partition 0: runs 2..4 and 6..6 of a batch of 0..7; partition 3: run 10..12 of a batch of 10..12.
        byte[] answer = rangesAnswer(new int[] {0, 3}, new long[][] {{2, 3, 6, 1}, {10, 3}},
                new ByteBuffer[] {batch(0, 8), batch(10, 3)});
        LeasedBatch leased = LeasedBatch.readRanges(answer);
        assertThat(leased.leases()).containsExactly("range-0-2", "range-0-6", "range-3-10");
        assertThat(leased.offsets()).containsExactly(2, 3, 4, 6, 10, 11, 12);
        assertThat(leased.partitions()).containsExactly(0, 0, 0, 0, 3, 3, 3);
        assertThat(leased.size()).isEqualTo(7);
        com.fasterxml.jackson.databind.JsonNode acks = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(leased.acceptAll()).get("acks");
        assertThat(acks.size()).as("one entry per run").isEqualTo(3);
        byte[] results = "{\"results\":[{\"lease\":\"range-0-2\",\"ok\":true},{\"lease\":\"range-0-6\",\"ok\":true},{\"lease\":\"range-3-10\",\"ok\":true}]}".getBytes(StandardCharsets.UTF_8);
        assertThat(leased.requireAllAccepted(results)).as("records accepted").isEqualTo(7);
        byte[] refused = "{\"results\":[{\"lease\":\"range-0-2\",\"ok\":true},{\"lease\":\"range-0-6\",\"ok\":false,\"error\":\"lease-expired\"},{\"lease\":\"range-3-10\",\"ok\":true}]}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> leased.requireAllAccepted(refused)).hasMessageContaining("range-0-6");
    }

    @Test
    void aLeasedRangesAnswerWhoseBatchesLackAnOffsetOfARunIsRefused() {
        byte[] answer = rangesAnswer(new int[] {0}, new long[][] {{6, 4}}, new ByteBuffer[] {batch(0, 8)});
        assertThatThrownBy(() -> LeasedBatch.readRanges(answer)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("leased offset 8");
    }

    /** The leased-ranges layout: per partition runs of {first, records}, then every partition's batches. */
    private static byte[] rangesAnswer(int[] partitions, long[][] runs, ByteBuffer[] batches) {
        ByteBuffer out = ByteBuffer.allocate(65536);
        out.putInt(partitions.length);
        for (int s = 0; s < partitions.length; s++) {
            out.putInt(partitions[s]);
            out.putInt(runs[s].length / 2);
            for (int r = 0; r < runs[s].length; r += 2) {
                byte[] lease = ("range-" + partitions[s] + "-" + runs[s][r]).getBytes(StandardCharsets.US_ASCII);
                out.putLong(runs[s][r]);
                out.putInt((int) runs[s][r + 1]);
                out.putInt(1);
                out.putShort((short) lease.length);
                out.put(lease);
            }
            out.putInt(batches[s].remaining());
        }
        for (ByteBuffer b : batches) {
            out.put(b.duplicate());
        }
        return Arrays.copyOf(out.array(), out.position());
    }

    /** A stored batch of {@code count} records from {@code base}, values {@code value-<offset>}. */
    private static ByteBuffer batch(long base, int count) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, base);
        for (int i = 0; i < count; i++) {
            b.append(1000L + i, null, ("value-" + (base + i)).getBytes(StandardCharsets.UTF_8));
        }
        return b.build().buffer();
    }

    /** The answer's layout: the header of every partition, then every partition's batches. */
    private static byte[] answer(int[] partitions, long[][] offsets, ByteBuffer[] batches) {
        ByteBuffer out = ByteBuffer.allocate(65536);
        out.putInt(partitions.length);
        for (int s = 0; s < partitions.length; s++) {
            out.putInt(partitions[s]);
            out.putInt(offsets[s].length);
            for (long offset : offsets[s]) {
                byte[] lease = ("lease-" + partitions[s] + "-" + offset).getBytes(StandardCharsets.US_ASCII);
                out.putLong(offset);
                out.putInt(1);
                out.putShort((short) lease.length);
                out.put(lease);
            }
            out.putInt(batches[s].remaining());
        }
        for (ByteBuffer b : batches) {
            out.put(b.duplicate());
        }
        return Arrays.copyOf(out.array(), out.position());
    }
}
