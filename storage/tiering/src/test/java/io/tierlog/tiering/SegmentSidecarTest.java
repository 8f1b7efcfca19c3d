package io.tierlog.tiering;

import io.tierlog.log.PartitionTransactions.AbortedTransaction;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sidecar's bytes: version 2 with aborted transactions, version 1 still read, damage refused by the CRC. */
class SegmentSidecarTest {
    private static final List<SegmentSidecar.Entry> ENTRIES = List.of(new SegmentSidecar.Entry(100, 0, 5),
            new SegmentSidecar.Entry(140, 4096, 9));
    private static final List<AbortedTransaction> ABORTED = List.of(new AbortedTransaction(7, 90, 104),
            new AbortedTransaction(8, 120, 180));

    @Test
    void versionTwoRoundTripsItsAbortedTransactions() {
        SegmentSidecar sidecar = new SegmentSidecar(ENTRIES, ABORTED);
        byte[] bytes = sidecar.toBytes();

        assertThat(ByteBuffer.wrap(bytes).getShort(4)).isEqualTo((short) 2);
        assertThat(SegmentSidecar.fromBytes(bytes)).isEqualTo(sidecar);
        assertThat(SegmentSidecar.fromBytes(bytes).aborted(105, 120)).as("ends before, starts at the end").isEmpty();
        assertThat(SegmentSidecar.fromBytes(bytes).aborted(104, 121)).isEqualTo(ABORTED);
        assertThat(SegmentSidecar.fromBytes(new SegmentSidecar(ENTRIES).toBytes()).aborted()).isEmpty();
    }

    @Test
    void aVersionOneSidecarLoadsWithNoAbortedTransactions() {
        byte[] v1 = versionOne(ENTRIES);

        SegmentSidecar loaded = SegmentSidecar.fromBytes(v1);

        assertThat(loaded.entries()).isEqualTo(ENTRIES);
        assertThat(loaded.aborted()).isEmpty();
        assertThat(loaded.floor(150)).isEqualTo(ENTRIES.get(1));
    }

    @Test
    void everyFlippedBitAndEveryTruncationIsRefused() {
        byte[] bytes = new SegmentSidecar(ENTRIES, ABORTED).toBytes();
        for (int i = 0; i < bytes.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] damaged = bytes.clone();
                damaged[i] ^= (byte) (1 << bit);
                assertThatThrownBy(() -> SegmentSidecar.fromBytes(damaged)).as("byte %d bit %d", i, bit)
                        .isInstanceOf(IllegalArgumentException.class);
            }
        }
        for (int length = 0; length < bytes.length; length++) {
            byte[] torn = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> SegmentSidecar.fromBytes(torn)).as("first %d bytes", length)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void anAbortedCountThatDoesNotMatchTheSizeIsRefusedEvenWithAValidCrc() {
        byte[] bytes = new SegmentSidecar(ENTRIES, ABORTED).toBytes();
        ByteBuffer.wrap(bytes).putInt(10 + 2 * 24, 3);
        withCrc(bytes);
        assertThatThrownBy(() -> SegmentSidecar.fromBytes(bytes)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("aborted count");
    }

    /** The bytes this module wrote before transactions: no aborted part, version 1. */
    static byte[] versionOne(List<SegmentSidecar.Entry> entries) {
        ByteBuffer buf = ByteBuffer.allocate(10 + entries.size() * 24 + 4);
        buf.putInt(SegmentSidecar.MAGIC).putShort((short) 1).putInt(entries.size());
        for (SegmentSidecar.Entry e : entries) {
            buf.putLong(e.baseOffset()).putLong(e.position()).putLong(e.maxTimestamp());
        }
        return withCrc(buf.array());
    }

    private static byte[] withCrc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        return bytes;
    }
}
