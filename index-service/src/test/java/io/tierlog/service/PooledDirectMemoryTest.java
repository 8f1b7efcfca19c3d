package io.tierlog.service;

import io.tierlog.log.ReadBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Blocks are reused rather than allocated again, idle memory stays bounded, and held bytes follow the holders. */
class PooledDirectMemoryTest {
    @Test
    void releasedBlocksAreReusedAndHeldBytesReturnToZero() {
        PooledDirectMemory memory = new PooledDirectMemory();
        for (int round = 0; round < 3; round++) {
            // A produce body just under 1 MiB, a 4 MiB fetch, and the largest pooled size.
            try (ReadBuffer body = memory.allocate(1_030_000);
                 ReadBuffer fetch = memory.allocate(4 << 20);
                 ReadBuffer largest = memory.allocate(8 << 20)) {
                assertThat(memory.heldBytes()).isEqualTo(1_030_000 + (4 << 20) + (8 << 20));
                assertThat(fetch.memory().isDirect()).isTrue();
                assertThat(body.capacity()).isEqualTo(1_030_000);
                assertThat(body.memory().position()).isZero();
                assertThat(body.memory().limit()).isEqualTo(1_030_000);
                // Written through the view, read back through it: the view is the block itself.
                largest.memory().putLong((8 << 20) - 8, 0x1122334455667788L);
                assertThat(largest.memory().getLong((8 << 20) - 8)).isEqualTo(0x1122334455667788L);
                body.close();
                body.close(); // a second close gives nothing back twice
                assertThat(memory.heldBytes()).isEqualTo((4 << 20) + (8 << 20));
            }
            assertThat(memory.heldBytes()).isZero();
            assertThat(memory.freshBlocks()).as("blocks allocated by round %d", round).isEqualTo(3);
        }
        // Any size up to a block's reuses it: 1 MiB exactly and 600 KiB share the 1 MiB block.
        memory.allocate(1 << 20).close();
        memory.allocate(600 << 10).close();
        assertThat(memory.freshBlocks()).isEqualTo(3);
        try (ReadBuffer larger = memory.allocate((8 << 20) + 1)) {
            assertThat(larger.capacity()).isEqualTo((8 << 20) + 1);
        }
        assertThat(memory.freshBlocks()).as("above the largest block, memory is not kept").isEqualTo(4);
        assertThat(memory.idleBytes()).isEqualTo((1 << 20) + (4 << 20) + (8 << 20));
    }

    @Test
    void idleMemoryStaysWithinItsLimit() {
        PooledDirectMemory memory = new PooledDirectMemory(3L << 20);
        ReadBuffer[] held = new ReadBuffer[5];
        for (int i = 0; i < held.length; i++) {
            held[i] = memory.allocate(1 << 20);
        }
        for (ReadBuffer b : held) {
            b.close();
        }
        assertThat(memory.idleBytes()).isEqualTo(3L << 20);
        for (int i = 0; i < 3; i++) {
            held[i] = memory.allocate(1 << 20);
        }
        assertThat(memory.freshBlocks()).as("the three kept blocks are reused").isEqualTo(5);
        assertThat(memory.idleBytes()).isZero();
        memory.allocate(1 << 20).close();
        assertThat(memory.freshBlocks()).isEqualTo(6);
        assertThat(memory.allocate(0).capacity()).isZero();
    }
}
