package io.tierlog.service;

import io.tierlog.log.ReadBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Fetch-sized buffers come from pooled chunks, and the held-bytes gauge follows allocation and release. */
class PooledDirectMemoryTest {
    @Test
    void buffersUpToEightMebibytesArePooledAndHeldBytesReturnToZero() {
        PooledDirectMemory memory = new PooledDirectMemory();
        for (int round = 0; round < 3; round++) {
            try (ReadBuffer oneMib = memory.allocate(1 << 20);
                 ReadBuffer fourMib = memory.allocate(4 << 20);
                 ReadBuffer eightMib = memory.allocate(8 << 20)) {
                assertThat(memory.heldBytes()).isEqualTo((1 << 20) + (4 << 20) + (8 << 20));
                assertThat(fourMib.memory().isDirect()).isTrue();
                assertThat(fourMib.capacity()).isEqualTo(4 << 20);
                // Written through the view, read back through it: the view is the pooled memory itself.
                eightMib.memory().putLong((8 << 20) - 8, 0x1122334455667788L);
                assertThat(eightMib.memory().getLong((8 << 20) - 8)).isEqualTo(0x1122334455667788L);
                oneMib.close();
                oneMib.close(); // a second close gives nothing back twice
                assertThat(memory.heldBytes()).isEqualTo((4 << 20) + (8 << 20));
            }
            assertThat(memory.heldBytes()).isZero();
        }
        assertThat(memory.hugeAllocations()).as("buffers allocated outside the chunks").isZero();
        try (ReadBuffer larger = memory.allocate((8 << 20) + 1)) {
            assertThat(larger.capacity()).isEqualTo((8 << 20) + 1);
        }
        assertThat(memory.hugeAllocations()).as("only what exceeds a chunk").isEqualTo(1);
    }
}
