package io.tierlog.log;

import io.tierlog.log.format.BatchInfo;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BatchCollector#room}: a batch assembled in the collector's own memory is kept where it lies; one passed over
 * or turned away leaves no trace; a batch from elsewhere is still copied in. The bytes here are opaque: the collector
 * never looks inside a batch, only at the {@link BatchInfo} it is given.
 */
class BatchCollectorRoomTest {
    @Test
    void batchesAssembledInTheRoomAreKeptWithoutACopyAndOthersAreCopiedBehindThem() {
        BatchCollector out = new BatchCollector(10, 1_000, 1 << 20, ReadMemory.HEAP);
        // Below fromOffset: assembled, then passed over; the next batch's room overwrites it.
        assertThat(out.add(info(0, 9, 100), fill(out.room(100), (byte) 1))).isTrue();
        ByteBuffer second = fill(out.room(300), (byte) 2);
        assertThat(out.add(info(10, 14, 300), second)).isTrue();
        second.put(0, (byte) 9); // kept where it lies: the read shows a later write to the room
        // A batch in memory of its own (a view of one chunk) is copied in after it.
        assertThat(out.add(info(15, 19, 50), fill(ByteBuffer.allocate(50), (byte) 3))).isTrue();
        ByteBuffer fourth = fill(out.room(200), (byte) 4);
        assertThat(out.add(info(20, 29, 200), fourth)).isTrue();

        try (BatchRead read = out.build()) {
            byte[] expected = new byte[550];
            Arrays.fill(expected, 0, 300, (byte) 2);
            expected[0] = 9;
            Arrays.fill(expected, 300, 350, (byte) 3);
            Arrays.fill(expected, 350, 550, (byte) 4);
            assertThat(bytes(read)).isEqualTo(expected);
            assertThat(read.records()).isEqualTo(20);
            assertThat(read.nextOffset()).isEqualTo(30);
        }
    }

    @Test
    void aRoomTheByteLimitTurnsAwayIsNotKept() {
        BatchCollector out = new BatchCollector(0, 1_000, 400, ReadMemory.HEAP);
        assertThat(out.add(info(0, 4, 300), fill(out.room(300), (byte) 7))).isTrue();
        assertThat(out.admits(200)).isFalse();
        assertThat(out.add(info(5, 9, 200), fill(out.room(200), (byte) 8))).isFalse();
        try (BatchRead read = out.build()) {
            byte[] expected = new byte[300];
            Arrays.fill(expected, (byte) 7);
            assertThat(bytes(read)).isEqualTo(expected);
            assertThat(read.nextOffset()).isEqualTo(5);
        }
    }

    private static BatchInfo info(long base, long last, int size) {
        return new BatchInfo(0, 0, size, base, last, 0, -1, (short) -1, -1);
    }

    private static ByteBuffer fill(ByteBuffer room, byte value) {
        while (room.hasRemaining()) {
            room.put(value);
        }
        return room.flip();
    }

    private static byte[] bytes(BatchRead read) {
        ByteBuffer b = read.buffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
