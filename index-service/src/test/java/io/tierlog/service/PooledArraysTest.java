package io.tierlog.service;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Arrays are reused by size class rather than allocated again, and idle arrays stay within their limit. */
class PooledArraysTest {
    @Test
    void givenBackArraysAreReusedBySizeClass() {
        PooledArrays arrays = new PooledArrays();
        for (int round = 0; round < 3; round++) {
            byte[] body = arrays.take(1_049_000);
            byte[] small = arrays.take(10);
            assertThat(body.length).isEqualTo(5 << 18);       // 1.25 MiB: the next quarter step of a doubling
            assertThat(small.length).isEqualTo(PooledArrays.MIN_ARRAY);
            arrays.giveBack(body);
            arrays.giveBack(small);
            assertThat(arrays.freshArrays()).as("arrays allocated by round %d", round).isEqualTo(2);
        }
        byte[] larger = arrays.take((8 << 20) + 1);
        assertThat(larger.length).isEqualTo((8 << 20) + 1);
        arrays.giveBack(larger);
        arrays.giveBack(new byte[1000]);   // not one of the pool's sizes: not kept
        assertThat(arrays.idleBytes()).as("above the largest size, arrays are not kept")
                .isEqualTo((5 << 18) + PooledArrays.MIN_ARRAY);
    }

    @Test
    void idleArraysStayWithinTheirLimit() {
        PooledArrays arrays = new PooledArrays(3L << 20);
        byte[][] held = new byte[5][];
        for (int i = 0; i < held.length; i++) {
            held[i] = arrays.take(1 << 20);
        }
        for (byte[] a : held) {
            arrays.giveBack(a);
        }
        assertThat(arrays.idleBytes()).isEqualTo(3L << 20);
        for (int i = 0; i < 4; i++) {
            arrays.take(1 << 20);
        }
        assertThat(arrays.freshArrays()).as("the three kept arrays are reused, a fourth is new").isEqualTo(6);
        assertThat(arrays.idleBytes()).isZero();
    }
}
